"""The jobs of the tests' Django project."""

from django.db import connection

from cogworker import Job
from shop.models import ConnectionSighting, Order


class ShipOrder(Job, retry=False):
    """Marks an order shipped; run before its row is committed, it fails (and is dead)."""

    def perform(self, order_id: int, database: str = "default") -> None:
        order = Order.objects.using(database).get(pk=order_id)
        order.shipped = True
        order.save(update_fields=["shipped"])


class CountRunsOnConnection(Job):
    """Records how many runs this thread's connection has seen: a TEMP table lives
    exactly as long as the connection that made it."""

    def perform(self, label: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE IF NOT EXISTS runs_here (run INTEGER)")
            cursor.execute("INSERT INTO runs_here VALUES (1)")
            cursor.execute("SELECT count(*) FROM runs_here")
            (runs,) = cursor.fetchone()
        ConnectionSighting.objects.create(label=label, runs_on_connection=runs)


def record_death(job: object) -> None:
    """A death handler named by its dotted path in the settings."""
