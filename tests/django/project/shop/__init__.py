"""The tests' Django app: orders, and the jobs that read them."""
