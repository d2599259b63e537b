"""Each Lua script's header states its shape, lists the KEYS and ARGV it takes, and its
body uses no other; a call that doesn't fit the shape is refused before Redis sees it."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from cogworker.adapters import scripts
from cogworker.adapters.redis_access import PROBE
from cogworker.adapters.script_shape import Count, Shape
from cogworker.adapters.scripts import SETTLE, LuaScript

_LUA = resources.files("cogworker.adapters").joinpath("lua")
NAMES = sorted(
    entry.name.removesuffix(".lua")
    for entry in _LUA.iterdir()
    if entry.name.endswith(".lua") and not entry.name.startswith("_")
)
_INDEX = re.compile(r"\b(KEYS|ARGV)\[(\d+)\]")
_CHECK = re.compile(r"\bneed_\w+\((\d+)")


def _header(source: str) -> str:
    """The comment lines the script starts with."""
    lines = source.splitlines()
    end = next((i for i, line in enumerate(lines) if not line.startswith("--")), len(lines))
    return "\n".join(lines[:end])


def _indices(text: str, kind: str) -> set[int]:
    return {int(n) for found, n in _INDEX.findall(text) if found == kind}


def contract_problems(name: str, source: str) -> list[str]:
    """What in `source` disagrees with the shape its header states (nothing: it keeps it)."""
    shape = Shape.of(name, source)
    header, body = _header(source), source[len(_header(source)) :]
    problems = []
    for kind, count in (("KEYS", shape.keys), ("ARGV", shape.args)):
        listed = _indices(header, kind)
        missing = set(range(1, count.fixed + 1)) - listed
        if missing:
            problems.append(f"{name}: header doesn't list {kind} {sorted(missing)}")
        used = _indices(body, kind) | (
            {int(n) for n in _CHECK.findall(body)} if kind == "ARGV" else set()
        )
        beyond = {i for i in listed | used if i > count.fixed}
        if beyond and not count.group:
            problems.append(f"{name}: {kind} {sorted(beyond)} beyond its shape ({count})")
    return problems


def _source(name: str) -> str:
    return _LUA.joinpath(f"{name}.lua").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_every_script_keeps_the_shape_its_header_states(name: str) -> None:
    """The header lists every fixed KEYS and ARGV; neither it nor the body goes past them."""
    assert contract_problems(name, _source(name)) == []


def test_every_script_is_registered_once_by_sha() -> None:
    """Every script made is in the registry run_pipeline reloads forgotten scripts from."""
    made = {script.name for script in scripts.SCRIPTS_BY_SHA.values()}
    assert {"settle", "ack_many", "fetch", "probe"} <= made
    assert len(made) == len(scripts.SCRIPTS_BY_SHA)


def test_a_header_that_disagrees_with_its_script_is_found() -> None:
    """settle.lua stating one argument fewer than it lists and checks is reported."""
    source = _source("settle")
    shape = re.search(r"-- shape: KEYS \d+, ARGV (\d+)", source)
    assert shape is not None
    last = int(shape[1])
    doctored = source.replace(shape[0], shape[0].replace(f"ARGV {last}", f"ARGV {last - 1}"))
    problem = f"settle: ARGV [{last}] beyond its shape ({last - 1})"
    assert contract_problems("settle", doctored) == [problem]
    unlisted = _source("settle").replace("-- ARGV[22]", "-- ARGV[x]")
    assert contract_problems("settle", unlisted) == ["settle: header doesn't list ARGV [22]"]


def test_a_script_without_a_shape_is_refused() -> None:
    """A script whose header states no shape can't be made (a ValueError naming it)."""
    with pytest.raises(ValueError, match=r"lua/bare\.lua states no"):
        Shape.of("bare", "-- KEYS[1] a list\nreturn 1")


def test_a_call_that_does_not_fit_is_refused_before_redis() -> None:
    """One key or argument too few or too many, or a broken group: a TypeError naming the
    script and both counts, and nothing sent."""
    nkeys, nargs = SETTLE.shape.keys.fixed, SETTLE.shape.args.fixed
    keys, args = ("k",) * nkeys, ("a",) * nargs
    SETTLE.check(keys, args)
    shape = rf"lua/settle.lua takes KEYS {nkeys}, ARGV {nargs}; called with {nkeys}"
    with pytest.raises(TypeError, match=shape):
        SETTLE.check(keys, args[:-1])
    with pytest.raises(TypeError, match=f"{nkeys + 1} keys"):
        SETTLE.check((*keys, "k"), args)
    ack_many = next(s for s in scripts.SCRIPTS_BY_SHA.values() if s.name == "ack_many")
    ack_many.check(("k",) * 15, ("a",) * 20)
    with pytest.raises(TypeError, match="KEYS 3 \\+ 12n, ARGV 8 \\+ 12n"):
        ack_many.check(("k",) * 15, ("a",) * 21)
    with pytest.raises(TypeError):
        PROBE.check(("k",), ("unexpected",))


@pytest.mark.parametrize(
    ("count", "fits", "refused"),
    [(Count(3), [3], [0, 2, 4]), (Count(1, 2), [1, 3, 5], [0, 2, 4]), (Count(0, 1), [0, 1, 7], [])],
)
def test_a_count_fits_its_fixed_part_and_whole_groups(
    count: Count, fits: list[int], refused: list[int]
) -> None:
    """`fixed` exactly, then only whole groups."""
    assert all(count.fits(n) for n in fits)
    assert not any(count.fits(n) for n in refused)


def test_a_script_that_uses_a_shared_file_gets_it_in_front() -> None:
    """settle.lua says it uses _tallies.lua, _results.lua, _located.lua and _lists.lua: its
    source holds the checks, then those files."""
    checks, tallies, kept, located, lists = (
        _LUA.joinpath(f"_{name}.lua").read_text()
        for name in ("checks", "tallies", "results", "located", "lists")
    )
    assert SETTLE.source == checks + tallies + kept + located + lists + _source("settle")
    assert PROBE.source == checks + _source("probe")


def test_a_script_made_twice_is_one_entry() -> None:
    """Making a script again (same source, same SHA) leaves one registry entry for it."""
    before = len(scripts.SCRIPTS_BY_SHA)
    LuaScript("settle")
    assert len(scripts.SCRIPTS_BY_SHA) == before
