"""Composition and entry points: config, client, job base class, worker runtime, CLI, dashboard."""
