"""APP, as every command takes it: `module` (its `config`) or `module:attr`, a `Config`.

What people type instead is a file's path (`myapp/jobs.py`), a class's dotted
path (`myapp.jobs.SendEvent`), or the right name from the wrong directory.  Each
is a ConfigError that says what APP is and what to type, with the command as
typed (`cogworker work myapp.jobs`, `cogworker stats --app myapp.jobs`).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import click

from cogworker.app.config import Config
from cogworker.app.job_base import JobBase
from cogworker.exceptions import ConfigError

WHAT_APP_IS = "APP names the module holding a cogworker.Config (`module` or `module:attr`)"


def load_app(spec: str) -> Config:
    """The `Config` named by APP: `module` (its `config` attribute) or `module:attr`."""
    module_name, _, attribute = spec.partition(":")
    import_from_cwd()
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        raise ConfigError(
            f"APP {spec!r}: APP is a module's dotted name, not a file: "
            f"try {retyped(_dotted(module_name))}"
        )
    module = _module(spec, module_name)
    value = getattr(module, attribute or "config", None)
    if not isinstance(value, Config):
        configs = [name for name, held in vars(module).items() if isinstance(held, Config)]
        hint = f": try {retyped(f'{module_name}:{configs[0]}')}" if configs else ""
        raise ConfigError(
            f"APP {spec!r}: expected a cogworker.Config at {attribute or 'config'}, "
            f"found {_described(value)}; {WHAT_APP_IS}{hint}"
        )
    return value


def import_from_cwd() -> None:
    """Let APP and job classes be imported from the current directory, as `python -m` would."""
    sys.path.insert(0, str(Path.cwd()))


def retyped(app: str) -> str:
    """The command being run, with `app` as its APP, for a message's `try ...`."""
    context = click.get_current_context(silent=True)
    if context is None:
        return app
    params = context.command.params
    as_option = any(param.name == "app" and isinstance(param, click.Option) for param in params)
    return f"`{context.command_path} {'--app ' if as_option else ''}{app}`"


def _module(spec: str, module_name: str) -> ModuleType:
    """The module APP names; a ConfigError saying what it names instead, or where it looked."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if not (error.name and (module_name + ".").startswith(error.name + ".")):
            raise ConfigError(f"APP {spec!r}: importing {module_name} failed: {error}") from None
        raise ConfigError(_not_a_module(spec, module_name, error)) from None
    except Exception as error:  # the module's own code failed: say so, not "no such module"
        raise ConfigError(f"APP {spec!r}: importing {module_name} failed: {error!r}") from None


def _not_a_module(spec: str, module_name: str, error: ModuleNotFoundError) -> str:
    """Why `module_name` isn't a module: it names a class or a Config in one, or no module
    of that name is found from here."""
    parent, _, name = module_name.rpartition(".")
    try:
        found = getattr(importlib.import_module(parent), name, None) if parent else None
    except Exception:  # the parent's own failure: the "no module" message says enough
        found = None
    if isinstance(found, type) and issubclass(found, JobBase):
        return (
            f"APP {spec!r}: {module_name} is a Job class, not a Config; {WHAT_APP_IS}: "
            f"try {retyped(parent)}"
        )
    if isinstance(found, Config):
        return f"APP {spec!r}: {module_name} is a Config: try {retyped(f'{parent}:{name}')}"
    return (
        f"APP {spec!r}: no module {module_name} ({error}; looked in the working directory "
        f"{Path.cwd()} and sys.path): run from your project's root or set PYTHONPATH"
    )


def _dotted(path: str) -> str:
    """A module file's path as the dotted name it imports by from the working directory."""
    module = Path(path.replace("\\", "/")).with_suffix("")
    if module.is_absolute():
        try:
            module = module.relative_to(Path.cwd())
        except ValueError:
            module = Path(module.name)  # outside: the name; the import from here will say more
    return ".".join(part for part in module.parts if part not in (".", ""))


def _described(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, type) and issubclass(value, JobBase):
        return f"the Job class {value.__qualname__}"
    return f"a {type(value).__name__}"
