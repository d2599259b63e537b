"""Testing modes: run jobs in the caller (`inline`) or collect them (`fake`).

::

    import cogworker.testing

    with cogworker.testing.inline():
        SendEvent.perform_async(42)      # runs now; its error is raised here

    with cogworker.testing.fake() as queue:
        SendEvent.perform_async(42)
        assert queue.jobs_for(SendEvent)[0].args == (42,)
        queue.drain()                    # runs what was pushed, in order
"""

from cogworker.app.testing import FakeQueue, fake, inline

__all__ = ["FakeQueue", "fake", "inline"]
