"""Properties of the text exposition writer: Prometheus's own parser reads back every family,
label and value it was given, whatever the label values and help texts hold."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from cogworker.domain.class_metrics import BOUNDS, Tally
from cogworker.domain.prometheus import (
    Family,
    Sample,
    exposition,
    histogram_samples,
    number_text,
)
from tests.domain.strategies import tallies

#: Any text a queue or host name could hold (surrogates can't be written as UTF-8).
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
values = st.one_of(
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False),
)
#: Help lines are ours; the parser strips the whitespace around them.
helps = texts.map(str.strip)
names = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True)


@st.composite
def families(draw: st.DrawFn) -> tuple[Family, ...]:
    """Families of distinct names, each with samples of distinct label values."""
    chosen = draw(st.lists(names, unique=True, max_size=4))
    drawn = []
    for index, name in enumerate(chosen):
        label_values = draw(st.lists(texts, unique=True, max_size=4))
        samples = tuple(Sample(value=draw(values), labels=(("queue", value),))
                        for value in label_values)  # fmt: skip
        kind = "counter" if index % 2 else "gauge"
        drawn.append(Family(name=f"cw_{name}", kind=kind, help=draw(helps), samples=samples))
    return tuple(drawn)


@given(families())
def test_the_parser_reads_back_what_was_written(written: tuple[Family, ...]) -> None:
    """Names, types, help texts, label values and values all come back as given."""
    parsed = list(text_string_to_metric_families(exposition(written)))
    assert [(f.name, f.type, f.documentation) for f in parsed] == [
        (f.name, f.kind, f.help) for f in written
    ]
    for family, back in zip(written, parsed, strict=True):
        assert [(s.name, s.labels, s.value) for s in back.samples] == [
            (family.sample_name, dict(sample.labels), float(sample.value))
            for sample in family.samples
        ]


@given(values)
def test_numbers_are_written_exactly(value: float) -> None:
    """Whole numbers have no point; every number reads back as the same float."""
    text = number_text(value)
    assert float(text) == float(value)
    whole = float(value).is_integer() and abs(value) < 2**53
    assert text.lstrip("-").isdigit() == whole


def test_special_values_are_written_as_the_format_names_them() -> None:
    """NaN and the infinities have names of their own."""
    assert [number_text(v) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "+Inf", "-Inf"]


@pytest.mark.parametrize("name", ["9lives", "has-dash", "", "sp ace"])
def test_a_bad_metric_name_is_refused_by_name(name: str) -> None:
    """A name the format can't carry is a ValueError naming it."""
    with pytest.raises(ValueError, match="is not a Prometheus metric name"):
        Family(name=name, kind="gauge", help="", samples=())


@pytest.mark.parametrize("label", ["__reserved", "has-dash", "1st"])
def test_a_bad_label_name_is_refused_by_name(label: str) -> None:
    """A label name the format can't carry (or reserves) is a ValueError naming it."""
    with pytest.raises(ValueError, match=f"'{label}' is not a Prometheus label name"):
        Sample(value=1, labels=((label, "x"),))


@given(tallies, texts)
def test_a_tally_reads_back_as_a_prometheus_histogram(tally: Tally, class_name: str) -> None:
    """Prometheus's parser reads a histogram family whose buckets are the tally's cumulative
    counts at every other bound, end with `+Inf` at the count, and whose sum is the tally's
    time in seconds."""
    labels = (("class", class_name),)
    family = Family(name="cw_run_seconds", kind="histogram", help="Run times.",
                    samples=tuple(histogram_samples(tally, labels)))  # fmt: skip
    (parsed,) = text_string_to_metric_families(exposition([family]))
    assert parsed.type == "histogram"
    buckets = [(s.labels["le"], s.value) for s in parsed.samples if s.name.endswith("_bucket")]
    assert [float(le) for le, _ in buckets] == [*(b / 1e6 for b in BOUNDS[::2]), math.inf]
    cumulative = tally.cumulative()
    assert [count for _, count in buckets] == [*cumulative[:-1:2], cumulative[-1]]
    sums = {s.name: s.value for s in parsed.samples if not s.name.endswith("_bucket")}
    assert sums == {"cw_run_seconds_sum": tally.seconds, "cw_run_seconds_count": tally.runs}
    assert all(s.labels["class"] == class_name for s in parsed.samples)


def test_only_a_histogram_has_suffixed_samples() -> None:
    """A counter with a `_bucket` sample, or a histogram with a plain one, can't be made."""
    with pytest.raises(ValueError, match="suffix"):
        Family(name="cw_x", kind="counter", help="x", samples=(Sample(value=1, suffix="_sum"),))
    with pytest.raises(ValueError, match="suffix"):
        Family(name="cw_x", kind="histogram", help="x", samples=(Sample(value=1),))
