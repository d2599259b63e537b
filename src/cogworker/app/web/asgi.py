"""The dashboard's outermost ASGI layer: root path, host check, auth (with its back-off),
cross-site refusal, headers, Secure cookies over HTTPS.

It sits outside Litestar's router so that everything it does applies to
every response, the 404s and static files included.
"""

from __future__ import annotations

import math
from typing import Any, cast

import attrs
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.types import Message, Receive, Scope, Send

from cogworker.app.web import security
from cogworker.app.web.security import Authorizer, SignInBackoff

#: The scope-state key the per-request CSP nonce is kept under.
NONCE_KEY = "cogworker_nonce"
#: Paths answered without auth (they say nothing but "up").
OPEN_PATHS = frozenset({"/health"})


@attrs.define
class DashboardApp:
    """The dashboard as one ASGI app: mount it anywhere, under `root_path`.

    A request whose path still starts with `root_path` (a proxy that keeps
    the prefix) has it stripped; one whose path doesn't (a proxy that strips
    it, or a host app's mount) is routed as it is.
    """

    litestar: Litestar
    root_path: str
    auth: Authorizer | None = None
    #: Host names it answers to (see `security.host_name`); None: any.  Without auth a
    #: page of another site whose name resolves to 127.0.0.1 (DNS rebinding) would be
    #: same-origin with the dashboard, so `cogworker serve` then names its hosts.
    allowed_hosts: frozenset[str] | None = None
    #: Refused sign-ins per client address and user name (the address as the ASGI server
    #: gives it: behind a proxy, the address the proxy forwarded for, if it trusts it).
    sign_ins: SignInBackoff = attrs.field(factory=SignInBackoff)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.litestar(scope, receive, send)
            return
        inner = self._routed(scope)
        if inner["method"] == "HEAD":  # answered as GET is (GETs change nothing), minus the body
            inner["method"] = "GET"
            send = _without_body(send)
        nonce = security.new_nonce()
        inner["state"] = {**inner.get("state", {}), NONCE_KEY: nonce}
        send = _with_headers(send, nonce, static=inner["path"].startswith("/static/"))
        if inner.get("scheme") == "https":
            send = _with_secure_cookies(send)
        host = self._refused_host(inner)
        if host is not None:
            await _plain(send, 400, _host_refusal(host))
            return
        refusal = self._auth_refusal(inner)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        headers = dict(inner["headers"])
        if inner["method"] not in security.SAFE_METHODS and security.is_cross_site(headers):
            await _plain(send, 403, b"Cross-site requests are refused.")
            return
        await self.litestar(cast("Scope", inner), receive, send)

    def _refused_host(self, inner: dict[str, Any]) -> str | None:
        """The request's host name if it isn't one this dashboard answers to, else None."""
        if self.allowed_hosts is None:
            return None
        host = security.host_name(dict(inner["headers"]).get(b"host", b"").decode("latin-1"))
        return None if host in self.allowed_hosts else host

    def _auth_refusal(self, inner: dict[str, Any]) -> _Refusal | None:
        """The response for a request that may not in (401, or 429 while its address is
        past its bound or its wrong guesses are told to wait), else None."""
        if self.auth is None or inner["path"] in OPEN_PATHS:
            return None
        address = (inner.get("client") or ("",))[0]
        wait = self.sign_ins.wait(address)
        if wait > 0:
            return _too_many(wait)
        header = dict(inner["headers"]).get(b"authorization")
        user = security.claimed_user(header.decode("latin-1")) if header is not None else ""
        if self.auth(ASGIConnection(cast("Scope", inner))):
            self.sign_ins.signed_in(address, user)
            return None
        # A request without credentials is a browser asking for the prompt, not a guess.
        if header is None:
            return 401, b"Authentication required.", _CHALLENGE
        wait = self.sign_ins.guess_wait(address, user)
        self.sign_ins.refused(address, user)
        return _too_many(wait) if wait > 0 else (401, b"Authentication required.", _CHALLENGE)

    def _routed(self, scope: Scope) -> dict[str, Any]:
        inner: dict[str, Any] = dict(scope)
        path: str = scope["path"]
        root = self.root_path
        if root and (path == root or path.startswith(root + "/")):
            inner["path"] = path[len(root) :] or "/"
        # Links are built from the configured root; an empty root_path keeps
        # Litestar from stripping a prefix a second time.
        inner["root_path"] = ""
        return inner


def _host_refusal(host: str) -> bytes:
    shown = host[:100].encode("ascii", "backslashreplace").decode("ascii")
    return (
        f"This dashboard doesn't answer to the host name {shown!r}: without auth it answers "
        "only to its own address and localhost, so another site can't reach it by pointing "
        "a name at this machine. If that name is yours, start it with "
        f"`cogworker serve --allowed-host {shown}`."
    ).encode()


_CHALLENGE = [(b"www-authenticate", b'Basic realm="cogworker", charset="UTF-8"')]
_TOO_MANY = b"Too many refused sign-ins from your address: wait, then try again."
#: A refusal answered in plain text: status, body, extra headers.
_Refusal = tuple[int, bytes, list[tuple[bytes, bytes]]]


def _too_many(wait: float) -> _Refusal:
    return 429, _TOO_MANY, [(b"retry-after", str(math.ceil(wait)).encode())]


def _with_headers(send: Send, nonce: str, *, static: bool) -> Send:
    extra = security.security_headers(nonce, static=static)
    names = {name for name, _ in extra}

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            message["headers"] = [*kept, *extra]
        await send(message)

    return sending


def _with_secure_cookies(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [
                (k, security.secure_cookie(v) if k.lower() == b"set-cookie" else v)
                for k, v in message.get("headers", [])
            ]
        await send(message)

    return sending


def _without_body(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return sending


async def _plain(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    start: Any = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})
