"""Finding a job class by the path a payload names: `package.module.Class`.

A worker imports only what `Config.job_modules` allows, since a payload's
class path is data anyone who can write to Redis chooses.
"""

from __future__ import annotations

import functools
import importlib

from cogworker.app.job_base import JobBase
from cogworker.exceptions import UnknownJobClassError


def _in_job_modules(module_name: str, job_modules: tuple[str, ...] | None) -> bool:
    """Whether `module_name` is one of `job_modules` or inside one (None allows any)."""
    if job_modules is None:
        return True
    return any(module_name == m or module_name.startswith(f"{m}.") for m in job_modules)


@functools.lru_cache(maxsize=1024)
def load_job_class(path: str, job_modules: tuple[str, ...] | None = None) -> type[JobBase]:
    """The `Job` subclass named by `path` (`package.module.Class`, nested classes too).

    Only a module `job_modules` allows (`Config.job_modules`) is imported.
    Raises UnknownJobClassError saying what couldn't be found.
    """
    parts = path.split(".")
    splits = range(len(parts) - 1, 0, -1)
    allowed = [s for s in splits if _in_job_modules(".".join(parts[:s]), job_modules)]
    if not allowed:
        raise UnknownJobClassError(
            f"{path}: its module is not in Config.job_modules {list(job_modules or ())}, "
            "so it was not imported"
        )
    # The longest prefix that isn't a module: its ImportError says what the worker lacks.
    missing: ModuleNotFoundError | None = None
    for split in allowed:
        module_name, attributes = ".".join(parts[:split]), parts[split:]
        try:
            target: object = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):
                missing = missing or error
                continue  # this prefix isn't a module: try a shorter one
            raise UnknownJobClassError(f"{path}: importing {module_name} failed: {error}") from None
        except Exception as error:
            raise UnknownJobClassError(
                f"{path}: importing {module_name} failed: {error!r}"
            ) from None
        return _attribute_path(target, attributes, path, missing)
    raise UnknownJobClassError(f"{path}: no module of that name can be imported ({missing})")


def _attribute_path(
    target: object, attributes: list[str], path: str, missing: ModuleNotFoundError | None
) -> type[JobBase]:
    """The class at `attributes` of the module `target`; an UnknownJobClassError naming the
    one that isn't there, with the ImportError of its module if it was tried as one (a module
    this worker lacks)."""
    where = getattr(target, "__name__", "")
    for name in attributes:
        where = f"{where}.{name}"
        if not hasattr(target, name):
            because = f" ({missing})" if missing and missing.name == where else ""
            raise UnknownJobClassError(f"{path}: {name} not found in {target!r}{because}")
        target = getattr(target, name)
    if not (isinstance(target, type) and issubclass(target, JobBase)):
        raise UnknownJobClassError(f"{path}: not a cogworker Job class")
    return target
