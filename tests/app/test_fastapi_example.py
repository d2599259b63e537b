"""The FastAPI example (examples/fastapi_app): its endpoint enqueues through the AsyncClient
its lifespan opens, and a real `cogworker work` runs the job."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from examples.fastapi_app.web import app

import cogworker
from tests.support.processes import CogworkerFactory, wait_until

WORKER_APP = "examples.fastapi_app.jobs"


async def call_app(method: str, path: str) -> tuple[int, dict[str, Any]]:
    """One request to the example app over ASGI, with its lifespan run around it."""
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as http,
    ):
        response = await http.request(method, path)
        return response.status_code, response.json()


def test_a_signup_enqueues_a_welcome_that_a_real_worker_sends(
    redis_url: str,
    client: cogworker.Client,
    cogworker_factory: CogworkerFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """POST /signups/42 answers 202 with a jid at once; the worker runs that job (its log
    says so) and GET /jobs/JID then reads `complete` through the app's client."""
    monkeypatch.setenv("COGWORKER_REDIS_URL", redis_url)  # where the example finds Redis
    worker = cogworker_factory(WORKER_APP, redis_url=redis_url)

    status, body = asyncio.run(call_app("POST", "/signups/42"))

    assert status == 202
    jid = body["jid"]
    wait_until(lambda: client.status(jid) == "complete", 30, message=worker.log_tail)
    assert "welcome sent to user 42" in worker.log_text()
    assert asyncio.run(call_app("GET", f"/jobs/{jid}")) == (200, {"status": "complete"})
