"""Who may see the dashboard, and what every response says to the browser.

Rules of this module: credentials are compared in constant time and never
echoed; wrong guesses are told to wait longer and longer while the right
password still gets in, and an address's guesses are bounded; every
response gets the security headers, including errors and static files; a
state-changing request from another site is refused before it reaches a
route (Litestar's CSRF check then wants the token as well); over HTTPS
cookies are `Secure`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import attrs
from litestar.connection import ASGIConnection

#: The environment variable `cogworker serve` reads `USER:PASSWORD` from.
AUTH_ENV = "COGWORKER_DASHBOARD_AUTH"
#: The shortest password `cogworker serve` accepts on an address other than loopback.
MIN_PASSWORD_LENGTH = 12
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The longest start of a user name the sign-in back-off tells apart.
LONGEST_USER = 200
#: The cookie holding a browser's CSRF token.
CSRF_COOKIE = "cogworker_csrf"

Authorizer = Callable[[ASGIConnection[Any, Any, Any, Any]], bool]
"""A callable that says whether a request may see the dashboard."""


@attrs.frozen(kw_only=True, repr=False)
class BasicAuth:
    """HTTP basic auth with one user and password (`repr` hides them)."""

    user: str
    password: str

    @classmethod
    def parse(cls, text: str) -> BasicAuth:
        """`USER:PASSWORD` (the password may hold colons); ValueError if either is empty."""
        user, sep, password = text.partition(":")
        if not sep or not user or not password:
            raise ValueError("expected USER:PASSWORD, both non-empty")
        return cls(user=user, password=password)

    def __call__(self, connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
        """Whether the request's Authorization header names this user and password."""
        given = _basic_credentials(connection.headers.get("authorization", ""))
        if given is None:
            return False
        user, password = given
        # Both compared every time, so the timing says nothing about which one was wrong.
        user_ok = hmac.compare_digest(user.encode(), self.user.encode())
        password_ok = hmac.compare_digest(password.encode(), self.password.encode())
        return user_ok & password_ok

    def __repr__(self) -> str:
        return "BasicAuth(user=***, password=***)"


def _basic_credentials(header: str) -> tuple[str, str] | None:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def claimed_user(header: str) -> str:
    """The user name an Authorization header claims ("" if it isn't readable basic auth)."""
    given = _basic_credentials(header)
    return given[0] if given is not None else ""


@attrs.define
class Refusals:
    """Refused sign-ins per key, each key's forgotten `forget_after` seconds after its
    latest refusal (or when told to); at most `keys` kept (the least recently refused
    goes first), so many addresses or names can't grow it without bound."""

    forget_after: float
    keys: int
    #: key -> (refusals, when the latest was)
    _refused: OrderedDict[tuple[str, ...], tuple[int, float]] = attrs.field(factory=OrderedDict)

    def latest(self, key: tuple[str, ...], now: float) -> tuple[int, float]:
        """`key`'s refusals and the latest one's time, forgetting stale ones."""
        refusals, last = self._refused.get(key, (0, now))
        if now - last >= self.forget_after:
            del self._refused[key]
            return 0, now
        return refusals, last

    def add(self, key: tuple[str, ...], now: float) -> None:
        """Count one more refusal of `key`."""
        refusals, _ = self.latest(key, now)
        self._refused.pop(key, None)
        self._refused[key] = (refusals + 1, now)
        while len(self._refused) > self.keys:
            self._refused.popitem(last=False)

    def forget(self, key: tuple[str, ...]) -> None:
        """`key` starts again from no refusals."""
        self._refused.pop(key, None)


@attrs.define
class SignInBackoff:
    """Failures are throttled, not successes, and an address's guesses are bounded.

    After `free` refused sign-ins in a row of one (address, user name), that pair's
    wrong guesses are answered 429 with a wait, 1 s, then twice as long after each
    further refusal, up to `longest`; its right password still gets in, so someone
    guessing from the operator's address (a NAT, an office proxy) doesn't lock the
    operator out.  A wrong guess answered 429 is still a guess, so each address as a
    whole is bounded too: after `most` refusals (whatever names), it waits the same
    way before anything it sends is looked at, the right password included.

    A pair's refusals are forgotten when it signs in; the address's only
    `forget_after` seconds after its latest refusal (a sign-in doesn't lift the
    guessers' bound).  At most `clients` of each are remembered.
    """

    free: int = 5
    most: int = 50
    longest: float = 60.0
    forget_after: float = 900.0
    clients: int = 10_000
    clock: Callable[[], float] = time.monotonic
    _by_user: Refusals = attrs.field(init=False)
    _by_address: Refusals = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._by_user = Refusals(forget_after=self.forget_after, keys=self.clients)
        self._by_address = Refusals(forget_after=self.forget_after, keys=self.clients)

    def wait(self, address: str) -> float:
        """Seconds before anything `address` sends is looked at (0: none): its bound."""
        return self._wait(self._by_address, (address,), self.most)

    def guess_wait(self, address: str, user: str) -> float:
        """Seconds a wrong guess of `user` from `address` is told to wait (0: none)."""
        return self._wait(self._by_user, _pair(address, user), self.free)

    def refused(self, address: str, user: str) -> None:
        """Count one more wrong guess of `user` from `address`."""
        now = self.clock()
        self._by_user.add(_pair(address, user), now)
        self._by_address.add((address,), now)

    def signed_in(self, address: str, user: str) -> None:
        """`user` got in from `address`: that pair's refusals are forgotten."""
        self._by_user.forget(_pair(address, user))

    def _wait(self, refusals: Refusals, key: tuple[str, ...], free: int) -> float:
        now = self.clock()
        count, last = refusals.latest(key, now)
        if count < free:
            return 0.0
        delay = min(self.longest, 2.0 ** (count - free))
        return max(0.0, last + delay - now)


def _pair(address: str, user: str) -> tuple[str, str]:
    # A name as long as a header allows, kept for each of many clients, would take memory
    # without bound: its start tells the user names people use apart.
    return address, user[:LONGEST_USER]


def secure_cookie(set_cookie: bytes) -> bytes:
    """A `Set-Cookie` value marked `Secure` (sent back only over HTTPS)."""
    attributes = {part.strip().lower() for part in set_cookie.split(b";")[1:]}
    return set_cookie if b"secure" in attributes else set_cookie + b"; Secure"


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the dashboard on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name could resolve anywhere


#: The names a dashboard bound to this machine always answers to.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(host: str) -> str:
    """A `Host` header's or a configured host's name: no port, no brackets, lower case."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name[1:]
    elif name.count(":") == 1:
        name = name.split(":")[0]
    return name.rstrip(".")


def new_nonce() -> str:
    """A fresh CSP nonce: 128 random bits."""
    return secrets.token_urlsafe(16)


def content_security_policy(nonce: str) -> str:
    """Only this origin's files and nonce-tagged elements; no frames, no plugins, no inline."""
    return (
        f"default-src 'none'; script-src 'self' 'nonce-{nonce}'; "
        f"style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; connect-src 'self'; "
        "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(nonce: str, *, static: bool) -> list[tuple[bytes, bytes]]:
    """The headers every response carries (pages are never cached; assets briefly)."""
    cache = b"public, max-age=300" if static else b"no-store"
    return [
        (b"content-security-policy", content_security_policy(nonce).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"same-origin"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cross-origin-resource-policy", b"same-origin"),
        (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
        (b"cache-control", cache),
    ]


def is_cross_site(headers: dict[bytes, bytes]) -> bool:
    """Whether a request says it comes from another site (Fetch metadata, else Origin).

    A request without either header (curl, an old browser) is not judged
    here: the CSRF token decides for it.
    """
    fetch_site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
    if fetch_site in ("cross-site", "same-site"):
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    host = headers.get(b"host", b"").decode("latin-1").lower()
    origin_text = origin.decode("latin-1").lower()
    return origin_text == "null" or urlsplit(origin_text).netloc != host
