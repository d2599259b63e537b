"""Where cogworker's Redis is and how to reach it: one record, read from a URL.

The URL forms (`[USER[:PASSWORD]@]` is optional in each)::

    redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]
    rediss://...                          the same over TLS
    unix://[USER[:PASSWORD]@]/PATH[?db=DB]
    redis+sentinel://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...]/MASTER[/DB]
    rediss+sentinel://...                 TLS to the sentinels and to the servers
    redis+cluster://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...][/0]
    rediss+cluster://...                  a Redis Cluster over TLS

A cluster URL names start-up nodes (any of the cluster's; the client learns
the others from them); a cluster has only database 0, so another is an error.

A URL's credentials are the Redis user's (on the primary and replicas); the
sentinels' own go in the `sentinel_username` / `sentinel_password` options.
Options go in the query (`?tls_ca_file=/etc/ca.pem&tls_verify=ca`,
`?min_replicas=1&replica_timeout=0.5` for any scheme); one cogworker
doesn't read is an error, never silently dropped.  Every error
is a ValueError saying what is wrong; the caller names the setting.

A user name or password must percent-encode its '/', '?', '#' and '@': an
unencoded one ends the host part early and leaves the rest of the secret in
the path, query or fragment.  Such a URL is refused with a message that
echoes none of it (`_refuse_split_credentials`).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

import attrs

from cogworker.adapters.replication import (
    DEFAULT_TIMEOUT,
    Replication,
    checked_replicas,
    checked_timeout,
)

TlsVerify = Literal["full", "ca", "none"]
#: full: the certificate chains up to a trusted CA and names the host;
#: ca: it chains up to a trusted CA (any host name); none: anything goes.
TLS_VERIFY_MODES: tuple[TlsVerify, ...] = ("full", "ca", "none")
SCHEMES = (
    "redis",
    "rediss",
    "unix",
    "redis+sentinel",
    "rediss+sentinel",
    "redis+cluster",
    "rediss+cluster",
)
DEFAULT_PORT = 6379
DEFAULT_SENTINEL_PORT = 26379
SENTINEL_OPTIONS = ("sentinel_username", "sentinel_password")
#: Durable writes (see `replication`), for a URL of any scheme.
REPLICATION_OPTIONS = ("min_replicas", "replica_timeout")

Address = tuple[str, int]

#: What to do about a user name or password that splits its URL in the wrong place.
ENCODE_CREDENTIALS = (
    "percent-encode each '/', '?', '#' and '@' of the user name and password "
    "(%2F, %3F, %23, %40; urllib.parse.quote(secret, safe='') does it)"
)


@attrs.frozen(kw_only=True)
class Tls:
    """How to speak TLS: the CA to trust (None: the system's), our certificate, the checks."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: TlsVerify = "full"


#: The query options a URL may carry: `tls_` and a `Tls` field's name, as the Config
#: fields of the same name (less `redis_`).
TLS_OPTIONS = tuple(f"tls_{field.name}" for field in attrs.fields(Tls))


@attrs.frozen(kw_only=True)
class Sentinels:
    """The sentinels that know which server is the primary of `master`."""

    addresses: tuple[Address, ...]
    master: str
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)


@attrs.frozen(kw_only=True)
class RedisTarget:
    """One Redis to talk to, and the setting a person changes to point elsewhere.

    With `sentinels`, `host` and `port` are unused: the sentinels name the primary.
    """

    #: Where this came from, as a person would set it (`$COGWORKER_REDIS_URL`, ...).
    setting: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    #: A unix socket's path (then host and port are unused).
    path: str | None = None
    db: int = 0
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    tls: Tls | None = None
    sentinels: Sentinels | None = None
    #: A Redis Cluster's start-up nodes (empty: one server, not a cluster); `host` and
    #: `port` are then the first of them.
    cluster: tuple[Address, ...] = ()
    #: How many replicas a job move must reach (see `replication`).
    replication: Replication = attrs.field(factory=Replication)

    @property
    def label(self) -> str:
        """This target as a URL without any password, fit for a log line or a page."""
        scheme = "rediss" if self.tls else "redis"
        user = self.username or ""
        secret = (f"{user}:***" if user else "***") if self.password else user
        credentials = f"{secret}@" if secret else ""
        if self.sentinels is not None:
            hosts = ",".join(_host_port(address) for address in self.sentinels.addresses)
            where = f"{hosts}/{self.sentinels.master}"
            return f"{scheme}+sentinel://{credentials}{where}/{self.db}"
        if self.cluster:
            hosts = ",".join(_host_port(address) for address in self.cluster)
            return f"{scheme}+cluster://{credentials}{hosts}/0"
        if self.path is not None:
            return f"unix://{credentials}{self.path}?db={self.db}"
        return f"{scheme}://{credentials}{_host_port((self.host, self.port))}/{self.db}"

    def described(self) -> str:
        """`setting label`, for a message that tells a person what to change."""
        return f"{self.setting} {self.label}"


def parse(url: str, setting: str) -> RedisTarget:
    """The target `url` names; ValueError saying what is wrong with it."""
    scheme, _, rest = url.partition("://")
    if scheme not in SCHEMES or not rest:
        known = ", ".join(f"{name}://" for name in SCHEMES)
        raise ValueError(f"the scheme of a Redis URL is one of {known}")
    parts = urlsplit(url)
    _refuse_split_credentials(url, parts)
    try:
        return _target(scheme, parts, setting)
    except ValueError:
        if "@" in parts.query:
            # A password's '?' may have put the rest of it in the query: echo none of it.
            raise ValueError(
                "the URL does not parse, and an '@' after its host may end a password: "
                f"{ENCODE_CREDENTIALS} (an option's '@' too)"
            ) from None
        raise


def _refuse_split_credentials(url: str, parts: SplitResult) -> None:
    """ValueError, echoing nothing, when an unencoded '/' or '#' of a user name or password
    ended the host part early: its '@' is then in the path or the fragment (cogworker
    reads neither an '@' there nor a fragment).  A query may hold an '@' in an option's value,
    so `parse` judges one there only when the URL fails to parse."""
    if "@" in parts.path:
        raise ValueError(f"the URL's path holds an '@': {ENCODE_CREDENTIALS}")
    if "#" in url:
        raise ValueError(f"a Redis URL has no '#' part: {ENCODE_CREDENTIALS}")


def _target(scheme: str, parts: SplitResult, setting: str) -> RedisTarget:
    """The target of a URL split into `parts`; ValueError saying what is wrong with it."""
    options = _options(parts.query)
    replication = _replication(options)
    credentials, _, netloc = parts.netloc.rpartition("@")
    username, password = _credentials(credentials)
    target = RedisTarget(
        setting=setting, username=username, password=password, replication=replication
    )
    if scheme == "unix":
        if not parts.path:
            raise ValueError("a unix:// URL names the socket's path (unix:///run/redis.sock)")
        target = attrs.evolve(target, path=unquote(parts.path), db=_db(options.pop("db", "0")))
    elif scheme.endswith("+sentinel"):
        sentinels, db = _sentinel_parts(netloc, parts.path, options)
        target = attrs.evolve(target, sentinels=sentinels, db=db)
    elif scheme.endswith("+cluster"):
        nodes = tuple(_address(host, DEFAULT_PORT) for host in netloc.split(","))
        checked_cluster_db(_db(parts.path.strip("/") or "0"))
        host, port = nodes[0]
        target = attrs.evolve(target, cluster=nodes, host=host, port=port)
    else:
        host, port = _address(netloc, DEFAULT_PORT)
        target = attrs.evolve(target, host=host, port=port, db=_db(parts.path.strip("/") or "0"))
    return _with_options(target, secure=scheme.startswith("rediss"), options=options)


def checked_cluster_db(db: int) -> int:
    """`db`, if a cluster has it: ValueError for any but 0."""
    if db != 0:
        raise ValueError(f"a Redis Cluster has only database 0, not {db}")
    return db


def _options(query: str) -> dict[str, str]:
    options = dict(parse_qsl(query, keep_blank_values=True))
    readable = (*TLS_OPTIONS, *SENTINEL_OPTIONS, *REPLICATION_OPTIONS)
    unknown = sorted(set(options) - {"db", *readable})
    if unknown:
        known = ", ".join(readable)
        raise ValueError(f"the URL option {unknown[0]!r} is not one cogworker reads ({known})")
    return options


def _replication(options: dict[str, str]) -> Replication:
    """The durable-write options, taken out of `options`."""
    replicas = options.pop("min_replicas", None)
    timeout = options.pop("replica_timeout", None)
    return Replication(
        replicas=0 if replicas is None else checked_replicas(replicas, "min_replicas"),
        timeout=DEFAULT_TIMEOUT if timeout is None else checked_timeout(timeout, "replica_timeout"),
    )


def _credentials(credentials: str) -> tuple[str | None, str | None]:
    if not credentials:
        return None, None
    user, colon, password = credentials.partition(":")
    return unquote(user) or None, unquote(password) if colon else None


def _db(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"the database {text!r} is not a number (redis://HOST:PORT/NUMBER)")
    return int(text)


def _address(text: str, default_port: int) -> Address:
    """`host`, `host:port` or `[v6]:port` as (host, port)."""
    parts = urlsplit(f"//{text}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"the port of {text!r} is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise ValueError(f"{text!r} names no host (HOST or HOST:PORT)")
    return parts.hostname, default_port if port is None else port


def _sentinel_parts(netloc: str, path: str, options: dict[str, str]) -> tuple[Sentinels, int]:
    master, _, db = path.strip("/").partition("/")
    if not master:
        raise ValueError("a Sentinel URL names the master after the hosts (.../mymaster/0)")
    sentinels = Sentinels(
        addresses=tuple(_address(host, DEFAULT_SENTINEL_PORT) for host in netloc.split(",")),
        master=unquote(master),
        username=options.pop("sentinel_username", None),
        password=options.pop("sentinel_password", None),
    )
    return sentinels, _db(db or "0")


def _with_options(target: RedisTarget, *, secure: bool, options: dict[str, str]) -> RedisTarget:
    given = {name: options[name] for name in TLS_OPTIONS if name in options}
    leftover = sorted(set(options) - set(given))
    if leftover:
        raise ValueError(f"the URL option {leftover[0]!r} does not apply to this kind of URL")
    if given and not secure:
        raise ValueError(f"TLS options ({', '.join(given)}) need a rediss:// URL")
    if not secure:
        return target
    verify = given.pop("tls_verify", "full")
    if verify not in TLS_VERIFY_MODES:
        raise ValueError(f"tls_verify is one of {', '.join(TLS_VERIFY_MODES)}, not {verify!r}")
    tls = Tls(
        ca_file=given.get("tls_ca_file"),
        cert_file=given.get("tls_cert_file"),
        key_file=given.get("tls_key_file"),
        verify=verify,
    )
    return attrs.evolve(target, tls=tls)


def _host_port(address: Address) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
