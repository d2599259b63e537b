"""Basic auth that holds up to guessing: wrong guesses throttled, not the right password,
and each address's guesses bounded; no short passwords in public,
and a `Secure` CSRF cookie over HTTPS (a proxy's word for it only when it is trusted)."""

from __future__ import annotations

import base64
from pathlib import Path

import attrs
import httpx
import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

import cogworker
from cogworker.app.cli import SettingError, dashboard_credentials, main
from cogworker.app.web import create_app
from cogworker.app.web.security import LONGEST_USER, SignInBackoff
from tests.support.processes import wait_until
from tests.web.helpers import serving

AUTH_ENV = {"COGWORKER_DASHBOARD_AUTH": "ops:right-password"}


def basic(password: str) -> dict[str, str]:
    """The Authorization header of user `ops` with `password`."""
    return as_user("ops", password)


def as_user(user: str, password: str) -> dict[str, str]:
    """The Authorization header of `user` with `password`."""
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@attrs.define
class FakeClock:
    """A clock that moves only when told to."""

    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_wrong_guesses_wait_longer_each_time_while_the_right_password_gets_in(
    config: cogworker.Config,
) -> None:
    """Five wrong passwords are answered 401, the next ones 429 with a Retry-After of 1 s,
    then 2 s; meanwhile the right password from the same address gets in, and signing in
    starts that user's count again."""
    clock = FakeClock()
    app = create_app(config, auth="ops:right-password")
    app.sign_ins = SignInBackoff(clock=clock)
    with TestClient(app) as client:
        assert [client.get("/", headers=basic("guess")).status_code for _ in range(5)] == [401] * 5
        waiting = client.get("/", headers=basic("guess"))
        assert waiting.status_code == 429
        assert waiting.headers["retry-after"] == "1"
        assert "Too many refused sign-ins" in waiting.text
        assert client.get("/", headers=basic("guess")).headers["retry-after"] == "2"

        assert client.get("/", headers=basic("right-password")).status_code == 200
        assert client.get("/", headers=basic("guess")).status_code == 401


def test_an_address_past_its_bound_waits_whatever_it_sends(config: cogworker.Config) -> None:
    """Wrong guesses spread over many user names still count for their address: past
    `most` of them it waits before anything is looked at, the right password included."""
    clock = FakeClock()
    app = create_app(config, auth="ops:right-password")
    app.sign_ins = SignInBackoff(most=8, clock=clock)
    with TestClient(app) as client:
        guesses = [client.get("/", headers=as_user(f"user{n}", "guess")) for n in range(8)]
        assert [guess.status_code for guess in guesses] == [401] * 8
        waiting = client.get("/", headers=basic("right-password"))
        assert (waiting.status_code, waiting.headers["retry-after"]) == (429, "1")
        clock.now += 1.0
        assert client.get("/", headers=basic("right-password")).status_code == 200
        # Signing in doesn't lift the address's bound: the next wrong guess waits 2 s.
        assert client.get("/", headers=as_user("user9", "guess")).status_code == 401
        assert client.get("/", headers=basic("right-password")).headers["retry-after"] == "2"


def test_asking_for_the_prompt_is_not_a_refused_sign_in(config: cogworker.Config) -> None:
    """Requests without credentials (a browser before its prompt) never make a client wait."""
    app = create_app(config, auth="ops:right-password")
    app.sign_ins = SignInBackoff(clock=FakeClock())
    with TestClient(app) as client:
        assert {client.get("/").status_code for _ in range(20)} == {401}
        assert client.get("/", headers=basic("right-password")).status_code == 200


def test_the_back_off_forgets_quiet_clients_and_remembers_a_bounded_number() -> None:
    """A client's refusals are forgotten `forget_after` seconds after the last; past `clients`
    remembered, the least recently refused is forgotten first."""
    clock = FakeClock()
    backoff = SignInBackoff(free=1, most=1, forget_after=60.0, clients=2, clock=clock)
    backoff.refused("a", "ops")
    assert (backoff.wait("a"), backoff.guess_wait("a", "ops")) == (1.0, 1.0)
    clock.now += 60.0
    assert (backoff.wait("a"), backoff.guess_wait("a", "ops")) == (0.0, 0.0)

    for client in ("a", "b", "c"):
        backoff.refused(client, "ops")
    assert [backoff.wait(client) for client in ("a", "b", "c")] == [0.0, 1.0, 1.0]
    assert [backoff.guess_wait(client, "ops") for client in ("a", "b", "c")] == [0.0, 1.0, 1.0]


def test_a_user_name_is_remembered_by_its_start_only() -> None:
    """Names past `LONGEST_USER` characters count by their start, so a guesser's huge
    names can't each take their own memory."""
    backoff = SignInBackoff(free=1, clock=FakeClock())
    start = "x" * LONGEST_USER
    backoff.refused("a", start + "-first")
    assert backoff.guess_wait("a", start + "-second") == 1.0
    assert backoff.guess_wait("a", start[:-1]) == 0.0


def test_a_guesser_at_the_operators_address_does_not_lock_the_operator_out(
    redis_url: str, tmp_path: Path
) -> None:
    """Behind a trusted proxy, one forwarded address guessing soon gets 429s, yet the right
    password from that same address gets straight in, and another address never waited."""
    args = ("--redis-url", redis_url, "--trust-proxy", "127.0.0.1")
    with serving(tmp_path, *args, env=AUTH_ENV) as base:

        def attempt(address: str, password: str) -> int:
            headers = {**basic(password), "X-Forwarded-For": address}
            return httpx.get(base + "/", headers=headers, timeout=5).status_code

        # Each refused try doubles the wait, so a 429 comes however slow the requests are.
        wait_until(lambda: attempt("203.0.113.5", "guess") == 429, 60.0)
        assert attempt("203.0.113.5", "right-password") == 200
        assert attempt("203.0.113.6", "guess") == 401


def test_without_a_trusted_proxy_a_forwarded_address_changes_nothing(
    redis_url: str, tmp_path: Path
) -> None:
    """Without --trust-proxy a client can't escape its wait by claiming another address."""
    with serving(tmp_path, "--redis-url", redis_url, env=AUTH_ENV) as base:
        addresses = iter(f"198.51.100.{n}" for n in range(1, 250))

        def attempt() -> int:
            headers = {**basic("guess"), "X-Forwarded-For": next(addresses)}
            return httpx.get(base + "/", headers=headers, timeout=5).status_code

        wait_until(lambda: attempt() == 429, 60.0)


@pytest.mark.parametrize(
    ("trust", "forwarded", "secure"),
    [
        pytest.param(True, "https", True, id="trusted-proxy-https"),
        pytest.param(True, "http", False, id="trusted-proxy-http"),
        pytest.param(False, "https", False, id="untrusted-https-claim"),
    ],
)
def test_the_csrf_cookie_is_secure_over_https_only(
    redis_url: str, tmp_path: Path, trust: bool, forwarded: str, secure: bool
) -> None:
    """The CSRF cookie is `Secure` when the request came over HTTPS, which `cogworker serve`
    learns from X-Forwarded-Proto only when --trust-proxy names the proxy."""
    args = ("--redis-url", redis_url, *(("--trust-proxy", "127.0.0.1") if trust else ()))
    with serving(tmp_path, *args) as base:
        page = httpx.get(base + "/", headers={"X-Forwarded-Proto": forwarded}, timeout=5)
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("cogworker_csrf=")
    assert ("; Secure" in cookie) is secure


def test_a_mounted_dashboard_served_over_https_sets_a_secure_cookie(
    config: cogworker.Config,
) -> None:
    """Mounted in an app whose server speaks HTTPS (the ASGI scheme says so): `Secure`."""
    with TestClient(create_app(config), base_url="https://testserver.local") as client:
        assert "; Secure" in client.get("/").headers["set-cookie"]


def test_a_short_password_is_refused_on_a_public_address(redis_url: str) -> None:
    """On an address other than loopback, a password under 12 characters stops `serve` with
    exit status 2 and says why; 12 characters are accepted, and loopback takes any."""
    result = CliRunner().invoke(
        main, ["serve", "--host", "0.0.0.0", "--redis-url", redis_url],
        env={"COGWORKER_DASHBOARD_AUTH": "ops:elevenchars"},
    )  # fmt: skip
    assert result.exit_code == 2
    assert "with a password of 11 characters: use 12 or more" in result.output
    with pytest.raises(SettingError):
        dashboard_credentials("10.0.0.7", "ops:short")
    assert dashboard_credentials("0.0.0.0", "ops:" + "x" * 12) is not None
    assert dashboard_credentials("127.0.0.1", "ops:pw") is not None
