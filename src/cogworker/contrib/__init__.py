"""Integrations with web frameworks, each an optional extra (`cogworker[django]`).

They sit beside `cogworker.app` and may use every layer; nothing else in
cogworker imports them (`scripts/check_layers.py`), so only their users
need the framework installed.
"""
