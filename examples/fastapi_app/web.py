"""The example's web app: its lifespan opens one `AsyncClient` and closes it at shutdown.

uvicorn examples.fastapi_app.web:app
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Request

from cogworker import AsyncClient
from examples.fastapi_app.jobs import SendWelcome, config


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """One client for the app's event loop, closed when the app stops."""
    async with AsyncClient(config) as jobs:
        app.state.jobs = jobs
        yield


def job_client(request: Request) -> AsyncClient:
    """The app's `AsyncClient`, for a handler (`Depends(job_client)`)."""
    jobs: AsyncClient = request.app.state.jobs
    return jobs


Jobs = Annotated[AsyncClient, Depends(job_client)]
app = FastAPI(lifespan=lifespan)


@app.post("/signups/{user_id}", status_code=202)
async def sign_up(user_id: int, jobs: Jobs) -> dict[str, str | None]:
    """Accept a signup; the welcome is sent by a worker, not in the request."""
    return {"jid": await jobs.enqueue(SendWelcome, user_id)}


@app.get("/jobs/{jid}")
async def job_status(jid: str, jobs: Jobs) -> dict[str, str | None]:
    """A welcome job's status: queued, working, complete, retrying, dead..."""
    return {"status": await jobs.status(jid)}
