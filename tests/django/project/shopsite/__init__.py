"""The tests' Django project (copied to a temporary directory by tests/django/conftest.py)."""
