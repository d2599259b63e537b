"""Integration tests of the 0.8.0 failure policy (issue #4): `retry_in` and the death hooks."""
