"""An order that a job ships, and what a job saw of its database connection."""

from django.db import models


class Order(models.Model):
    """A row a job needs: it exists for the job only once its transaction committed."""

    note = models.CharField(max_length=100)
    shipped = models.BooleanField(default=False)


class ConnectionSighting(models.Model):
    """One run of `CountRunsOnConnection`: how many runs its database connection had seen."""

    label = models.CharField(max_length=100)
    runs_on_connection = models.IntegerField()
