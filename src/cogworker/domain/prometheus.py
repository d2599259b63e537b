"""The Prometheus text exposition format (version 0.0.4), written without a client library.

A scrape is a tuple of `Family` records, each a metric's name, type, help
line and samples; `exposition` turns them into the text Prometheus reads.
A histogram's samples carry their suffix (`_bucket`, `_sum`, `_count`);
`histogram_samples` makes them from a class's tally.
Label values and help texts are escaped here (a queue or host name may hold
a quote, a backslash or a newline), so whatever Redis holds can't forge a
sample.  Names are ours and checked when a record is made.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Literal

import attrs

from cogworker.domain.class_metrics import BOUNDS, Tally

#: The media type a scrape is answered with (the text is UTF-8).
MEDIA_TYPE = "text/plain; version=0.0.4"

Kind = Literal["counter", "gauge", "histogram"]
Suffix = Literal["", "_bucket", "_sum", "_count"]
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _metric_name(_: object, attribute: attrs.Attribute[str], name: str) -> None:
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a Prometheus metric name")


@functools.cache
def _is_label_name(label: str) -> bool:
    """Cached: a scrape checks the same few names on every one of its samples."""
    return bool(_LABEL.fullmatch(label)) and not label.startswith("__")


def _label_names(_: object, attribute: object, labels: tuple[tuple[str, str], ...]) -> None:
    for label, _value in labels:
        if not _is_label_name(label):
            raise ValueError(f"{label!r} is not a Prometheus label name")


@attrs.frozen(kw_only=True)
class Sample:
    """One value of a family, with its labels in the order they are written."""

    value: float
    labels: tuple[tuple[str, str], ...] = attrs.field(default=(), validator=_label_names)
    #: What a histogram's sample is ("" for every other kind's).
    suffix: Suffix = ""


@attrs.frozen(kw_only=True)
class Family:
    """A metric: its name (a counter's without `_total`: the samples get it), its type, a
    one-line help and its samples."""

    name: str = attrs.field(validator=_metric_name)
    kind: Kind
    help: str
    samples: tuple[Sample, ...] = attrs.field()

    @samples.validator
    def _suffixes(self, _: object, samples: tuple[Sample, ...]) -> None:
        if any(bool(sample.suffix) != (self.kind == "histogram") for sample in samples):
            raise ValueError(f"{self.name}: a histogram's samples, and only they, have a suffix")

    @property
    def sample_name(self) -> str:
        """The name its samples are written under."""
        return f"{self.name}_total" if self.kind == "counter" else self.name


def exposition(families: Iterable[Family]) -> str:
    """The text of a scrape: for each family its HELP and TYPE lines, then its samples."""
    lines: list[str] = []
    for family in families:
        lines.append(f"# HELP {family.sample_name} {_escaped_help(family.help)}")
        lines.append(f"# TYPE {family.sample_name} {family.kind}")
        lines.extend(
            _sample_line(family.sample_name + sample.suffix, sample) for sample in family.samples
        )
    return "".join(line + "\n" for line in lines)


def _sample_line(name: str, sample: Sample) -> str:
    if not sample.labels:
        return f"{name} {number_text(sample.value)}"
    labels = ",".join(f'{label}="{_escaped_value(value)}"' for label, value in sample.labels)
    return f"{name}{{{labels}}} {number_text(sample.value)}"


def number_text(value: float) -> str:
    """A sample value as the format writes it: whole numbers without a point, `NaN`, `+Inf`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _escaped_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escaped_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


#: The bucket bounds a histogram is exported with: every other one of the tally's (1, 2.5
#: and 6 times each power of ten, from 1 ms), which halves the series per class; the
#: dashboard's quantiles use them all.
EXPORTED = range(0, len(BOUNDS), 2)
_EXPORTED_LE = [number_text(BOUNDS[i] / 1_000_000) for i in EXPORTED] + ["+Inf"]


def histogram_samples(tally: Tally, labels: tuple[tuple[str, str], ...]) -> list[Sample]:
    """A tally's run times (seconds) as a histogram's samples: a cumulative count per
    exported bound (`le`, the last `+Inf`), the sum and the count."""
    cumulative = tally.cumulative()
    counts = [cumulative[i] for i in EXPORTED] + [cumulative[-1]]
    return [
        *(
            Sample(value=count, labels=(*labels, ("le", bound)), suffix="_bucket")
            for bound, count in zip(_EXPORTED_LE, counts, strict=True)
        ),
        Sample(value=tally.seconds, labels=labels, suffix="_sum"),
        Sample(value=sum(tally.counts), labels=labels, suffix="_count"),
    ]
