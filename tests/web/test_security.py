"""Safe by default: headers on every response, CSRF and cross-site refusal, auth, no secrets."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import httpx
import pytest
import redis
from click.testing import CliRunner
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cli import main
from cogworker.app.web import BasicAuth, DashboardApp, create_app
from tests.support.redis_server import RedisServerFactory
from tests.web import jobs
from tests.web.helpers import Web, serving, token_of

STATIC = Path(cogworker.__file__).parent / "app" / "web" / "static"


def assert_secure_headers(response: httpx.Response) -> None:
    """The CSP (with a nonce that the page's scripts carry) and the other headers are there."""
    csp = response.headers.get("content-security-policy", "")
    nonce = re.search(r"'nonce-([A-Za-z0-9_-]{16,})'", csp)
    assert nonce is not None, (response.request.url, csp)
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "same-origin"
    if "text/html" in response.headers.get("content-type", ""):
        scripts = re.findall(r"<script\b[^>]*>", response.text)
        assert all(f'nonce="{nonce.group(1)}"' in tag for tag in scripts), scripts
        assert response.headers["cache-control"] == "no-store"


def test_every_response_carries_the_csp_and_security_headers(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Pages, fragments, JSON, assets, redirects and errors all get the headers."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done))
    responses = [
        web.get(path)
        for path in (
            "/", "/workers", "/queues", "/queue?name=web", "/scheduled", "/retries", "/dead",
            "/periodic", f"/job?jid={jid}", f"/history?jid={jid}", "/api/stats", "/health",
            "/static/app.js", "/static/app.css", "/static/vendor/htmx.min.js", "/nope",
            "/dead?per=3", "/scheduled/bulk?action=delete", "/queue/clear?name=web",
        )
    ]  # fmt: skip
    responses.append(web.get("/workers", headers={"HX-Request": "true"}))
    responses.append(
        web.post(
            "/scheduled/act",
            {"row": f"enqueue:{token_of(raw, 'cogworker:{q:web}:schedule', jid)}"},
        )
    )
    responses.append(web.client.post("/scheduled/act", data={"row": "x"}))  # no token: 403
    responses.append(web.client.put("/workers"))  # 405
    assert {r.status_code for r in responses} >= {200, 303, 400, 403, 404, 405}
    nonces = set()
    for response in responses:
        assert_secure_headers(response)
        nonces.add(response.headers["content-security-policy"])
    assert len(nonces) == len(responses)  # a fresh nonce per response


def test_posts_without_a_token_or_from_another_site_are_refused(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """No token, a wrong token, another site's Origin or Fetch metadata: 403 and nothing moves."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done))
    form = {"row": f"delete:{token_of(raw, 'cogworker:{q:web}:schedule', jid)}"}
    token = web.token()
    refused = [
        web.client.post("/scheduled/act", data=form),
        web.client.post("/scheduled/act", data={**form, "_csrf_token": "0" * 128}),
        web.client.post(
            "/scheduled/act",
            data={**form, "_csrf_token": token},
            headers={"Origin": "https://evil.example"},
        ),
        web.client.post(
            "/scheduled/act",
            data={**form, "_csrf_token": token},
            headers={"Sec-Fetch-Site": "cross-site"},
        ),
        web.client.post(
            "/scheduled/act", data={**form, "_csrf_token": token}, headers={"Origin": "null"}
        ),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert raw.zcard("cogworker:{q:web}:schedule") == 1
    # Same origin (or no Fetch metadata at all, as plain HTTP on a LAN sends) with the token: fine.
    allowed = web.client.post(
        "/scheduled/act",
        data={**form, "_csrf_token": token},
        headers={"Origin": "http://testserver.local", "Sec-Fetch-Site": "same-origin"},
        follow_redirects=False,
    )
    assert allowed.status_code == 303
    assert raw.zcard("cogworker:{q:web}:schedule") == 0


def test_no_state_changes_on_get(web: Web, enqueuer: cogworker.Client, raw: redis.Redis) -> None:
    """The action URLs don't act on GET: the confirmation pages only count."""
    enqueuer.enqueue(jobs.Parked)
    enqueuer.enqueue_in(3600, jobs.Done)
    for path in ("/queue/clear?name=parked", "/scheduled/bulk?action=delete"):
        assert web.get(path).status_code == 200
    assert web.get("/scheduled/act").status_code == 405
    assert raw.llen(keys.queue("parked")) == 1
    assert raw.zcard("cogworker:{q:web}:schedule") == 1


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_basic_auth_guards_everything_but_the_health_check(config: cogworker.Config) -> None:
    """Without the right credentials every path is a 401 (with the headers); /health stays open."""
    with TestClient(create_app(config, auth="admin:s3cret:with:colons")) as client:
        for path in ("/", "/static/app.js", "/dead", "/api/stats", "/nope"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"].startswith("Basic")
            assert_secure_headers(response)
        assert client.get("/", headers=_basic("admin", "wrong")).status_code == 401
        assert client.get("/", headers={"Authorization": "Basic !!!"}).status_code == 401
        assert client.get("/", headers=_basic("admin", "s3cret:with:colons")).status_code == 200
        assert client.get("/health").status_code == 200
    assert "s3cret" not in repr(BasicAuth.parse("admin:s3cret"))


def test_a_callable_decides_access(config: cogworker.Config) -> None:
    """`auth` may be a callable given the connection."""
    app = create_app(config, auth=lambda connection: connection.headers.get("x-user") == "ops")
    with TestClient(app) as client:
        assert client.get("/").status_code == 401
        assert client.get("/", headers={"X-User": "ops"}).status_code == 200


def test_the_redis_password_is_never_shown(
    redis_server_factory: RedisServerFactory,
) -> None:
    """With a password in the Redis URL, no page, fragment or JSON answer contains it."""
    server = redis_server_factory()
    with server.client() as admin:
        admin.config_set("requirepass", "pw-Zq81-secret")
    url = f"redis://:pw-Zq81-secret@127.0.0.1:{server.port}/0"
    with TestClient(create_app(cogworker.Config(redis_url=url))) as client:
        for path in ("/", "/workers", "/queues", "/dead", "/job?jid=x", "/api/stats", "/nope"):
            response = client.get(path)
            assert response.status_code in (200, 404), path
            assert "pw-Zq81-secret" not in response.text, path
        assert "redis://***@127.0.0.1" in client.get("/").text


def test_under_a_root_path_every_url_and_the_cookie_follow_it(
    config: cogworker.Config, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """`root_path="/jobs"`: links, htmx URLs, assets, form actions, redirects and the cookie."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done))
    with TestClient(create_app(config, root_path="/jobs/")) as client:
        web = Web(client, prefix="/jobs")
        page = web.get("/scheduled")
        assert page.status_code == 200
        urls = re.findall(r'(?:href|src|action|hx-get)="([^"]+)"', page.text)
        urls.remove("data:,")  # the empty favicon: no request at all
        assert urls
        assert all(url.startswith("/jobs/") or url == "/jobs" for url in urls), urls
        for asset in re.findall(r'(?:href|src)="(/jobs/static/[^"]+)"', page.text):
            assert client.get(asset).status_code == 200
        cookie = page.headers["set-cookie"]
        assert "Path=/jobs" in cookie
        assert "samesite=strict" in cookie.lower()
        assert "HttpOnly" in cookie
        moved = web.post(
            "/scheduled/act",
            {"row": f"enqueue:{token_of(raw, 'cogworker:{q:web}:schedule', jid)}"},
        )
        assert moved.status_code == 303
        assert moved.headers["location"].startswith("/jobs/scheduled")
        # A proxy that strips the prefix sends paths without it: they work too.
        assert client.get("/dead").status_code == 200


def test_mounted_in_a_host_litestar_app(config: cogworker.Config) -> None:
    """Mounted at /jobs in another Litestar app, pages and assets answer under /jobs."""
    from litestar import Litestar, asgi, get

    @get("/")
    async def home() -> str:
        return "host"

    dashboard: DashboardApp = create_app(config, root_path="/jobs")
    host = Litestar(route_handlers=[home, asgi("/jobs", is_mount=True, copy_scope=True)(dashboard)])
    with TestClient(host) as client:
        assert client.get("/").text == "host"
        page = client.get("/jobs/workers")
        assert page.status_code == 200
        assert 'href="/jobs/static/app.css"' in page.text
        assert client.get("/jobs/static/app.js").status_code == 200
        assert client.get("/jobs").status_code == 200


def test_serve_refuses_a_public_address_without_auth(redis_url: str) -> None:
    """`cogworker serve --host 0.0.0.0` without --auth stops with a message, before listening."""
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--redis-url", redis_url])
    assert result.exit_code == 2
    assert "refusing to serve the dashboard on 0.0.0.0 without --auth" in result.output
    bad = CliRunner().invoke(
        main, ["serve", "--host", "127.0.0.1", "--auth", "nocolon", "--redis-url", redis_url]
    )
    assert bad.exit_code == 2
    assert "USER:PASSWORD" in bad.output


def test_serve_runs_the_dashboard(redis_url: str, tmp_path: Path) -> None:
    """`cogworker serve` answers on 127.0.0.1 under its root path, with auth from the env."""
    args = ("--redis-url", redis_url, "--root-path", "/jobs")
    env = {"COGWORKER_DASHBOARD_AUTH": "ops:pw"}
    with serving(tmp_path, *args, root="/jobs", env=env) as base:
        assert httpx.get(base + "/", timeout=5).status_code == 401
        page = httpx.get(base + "/", auth=("ops", "pw"), timeout=5)
        assert page.status_code == 200
        assert "Runs per day" in page.text
        assert "server" not in page.headers


def test_shipped_assets_match_their_listed_checksums() -> None:
    """Every vendored file is listed with its sha256 and license, and matches it."""
    vendor = STATIC / "vendor"
    listed = [
        line.split("\t")
        for line in (vendor / "ASSETS.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert {row[0] for row in listed} == {"htmx.org", "chart.js"}
    for _name, _version, file, digest, _license, license_file in listed:
        assert hashlib.sha256((vendor / file).read_bytes()).hexdigest() == digest
        assert (vendor / license_file).stat().st_size > 0
    shipped = {path.name for path in vendor.iterdir()}
    assert shipped == {"ASSETS.txt", *(row[2] for row in listed), *(row[5] for row in listed)}


@pytest.mark.parametrize("path", ["/", "/workers", "/dead", "/queues", "/job?jid=x"])
def test_pages_request_nothing_from_other_origins(web: Web, path: str) -> None:
    """No CDN: every asset a page refers to is on the dashboard's own origin."""
    html = web.get(path).text
    assert not re.search(r'(?:src|href|action)="(?:https?:)?//', html)


@pytest.mark.parametrize(
    ("host", "answered"),
    [
        ("evil.example:7433", False),
        ("127.0.0.1.nip.example", False),
        ("", False),
        ("localhost:7433", True),
        ("LOCALHOST.", True),
        ("127.0.0.1:7433", True),
        ("[::1]:7433", True),
        ("jobs.internal", True),
    ],
)
def test_named_hosts_only_are_answered(config: cogworker.Config, host: str, answered: bool) -> None:
    """With `allowed_hosts`, a request naming another host is a 400 that says why, with no
    data; the loopback names (any case, port or brackets) and the listed ones are served."""
    app = create_app(config, allowed_hosts={"127.0.0.1", "localhost", "::1", "jobs.internal"})
    with TestClient(app) as client:
        response = client.get("/dead", headers={"host": host})
    if answered:
        assert response.status_code == 200, host
        return
    assert response.status_code == 400, host
    assert "doesn't answer to the host name" in response.text
    assert "--allowed-host" in response.text
    assert "Dead" not in response.text
    assert_secure_headers(response)


def test_serve_without_auth_refuses_a_rebound_host_name(redis_url: str, tmp_path: Path) -> None:
    """`cogworker serve` without auth: a Host naming another site (DNS rebinding) gets a 400;
    its own address and an `--allowed-host` name are served."""
    with serving(tmp_path, "--redis-url", redis_url, "--allowed-host", "jobs.lan") as base:
        rebound = httpx.get(base + "/dead", headers={"Host": "evil.example:7433"}, timeout=5)
        assert rebound.status_code == 400
        assert "evil.example" in rebound.text
        assert httpx.get(base + "/dead", headers={"Host": "jobs.lan"}, timeout=5).is_success
        assert httpx.get(base + "/dead", timeout=5).is_success


def test_head_is_answered_wherever_get_is(config: cogworker.Config) -> None:
    """HEAD of a page, the health check, an asset and JSON: GET's status and headers, no body."""
    with TestClient(create_app(config)) as client:
        for path in ("/health", "/dead", "/static/app.js", "/api/stats", "/nope"):
            got, head = client.get(path), client.head(path)
            assert head.status_code == got.status_code, path
            assert head.content == b"", path
            assert head.headers["content-type"] == got.headers["content-type"], path
            assert_secure_headers(head)


@pytest.fixture
def locked_url(redis_server_factory: RedisServerFactory) -> str:
    """A URL with the wrong password for a Redis of the test's own that has one."""
    server = redis_server_factory()
    with server.client() as admin:
        admin.config_set("requirepass", "right")
    return f"redis://:s3cret-guess@127.0.0.1:{server.port}/0"


def test_a_refused_password_is_named_on_the_page(locked_url: str) -> None:
    """Redis refusing the dashboard's credentials is said as such, not as Redis not answering."""
    with TestClient(create_app(cogworker.Config(redis_url=locked_url))) as client:
        page = client.get("/")
    assert page.status_code == 503
    assert "Redis refused the credentials" in page.text
    assert "not answering" not in page.text


def test_serve_checks_redis_at_start(locked_url: str) -> None:
    """`cogworker serve` with a password Redis refuses stops at once: one line, status 2."""
    result = CliRunner().invoke(main, ["serve", "--redis-url", locked_url])
    assert result.exit_code == 2, result.output
    assert "Redis refused the credentials" in result.output
    assert "s3cret-guess" not in result.output
