"""The dashboard's route handlers, one module per page (and its actions)."""
