"""`python -m cogworker` is the `cogworker` command."""

from cogworker.app.cli import main

main()
