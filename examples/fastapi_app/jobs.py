"""The example's jobs and its config: the worker's APP.

cogworker work examples.fastapi_app.jobs
"""

from __future__ import annotations

from cogworker import Config, Job

#: Redis comes from $COGWORKER_REDIS_URL.
config = Config(queues=("signups",))


class SendWelcome(Job, queue="signups", track_status=True):
    """Welcomes a new user (here: says so)."""

    def perform(self, user_id: int) -> None:
        """Pretend to send the email."""
        print(f"welcome sent to user {user_id}", flush=True)
