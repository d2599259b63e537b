"""The docs' block parser leaves no fenced block unchecked, and compares output as shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown_blocks import UncheckedBlockError, blocks_of, unshown_lines


def parse(tmp_path: Path, text: str) -> list[tuple[tuple[str, ...], str]]:
    """The (check, code) of each block of a Markdown file holding `text`."""
    page = tmp_path / "page.md"
    page.write_text(text)
    return [(block.check, block.code) for block in blocks_of(page)]


@pytest.mark.parametrize(
    "fence",
    ["```text", "```", "~~~sh", "````python", "   ```sh", "```python title=x.py"],
    ids=["text", "bare", "tilde", "four-backticks", "indented", "info-string"],
)
def test_a_fenced_block_with_no_check_is_an_error(tmp_path: Path, fence: str) -> None:
    """Whatever its fence or language, an unannounced block fails its file's test."""
    closing = fence.strip().split()[0].rstrip("abcdefghijklmnopqrstuvwxyz")
    with pytest.raises(UncheckedBlockError, match=r"page\.md:3: a code block with no check"):
        parse(tmp_path, f"Some text:\n\n{fence}\necho hidden\n{closing}\n")


def test_a_check_comment_announcing_no_block_is_an_error(tmp_path: Path) -> None:
    """A check comment followed by prose, not a fence, is a mistake, not a no-op."""
    with pytest.raises(UncheckedBlockError, match=r"page\.md:2: a check comment with no block"):
        parse(tmp_path, "<!-- check: sh -->\nprose\n")


def test_announced_blocks_are_read_with_their_check(tmp_path: Path) -> None:
    """A check on the line before the fence (a blank line between allowed); a longer fence
    holds a shorter one."""
    text = (
        "<!-- check: sh -->\n\n~~~sh\necho one\n~~~\n"
        "<!-- check: not run: a picture -->\n````text\n```\n````\n"
    )
    assert parse(tmp_path, text) == [
        (("sh",), "echo one"),
        (("not", "run:", "a", "picture"), "```"),
    ]


def test_output_lines_match_but_for_numbers_jids_and_padding() -> None:
    """Numbers, jids and column padding may differ between runs; words and formats may not."""
    printed = "QUEUE  SIZE  LATENCY\nreports  3  4 s\njob 6f1c0a7d9e2b44c1a8d3e5f0  1 s ago\n"
    assert unshown_lines("QUEUE SIZE LATENCY\nreports 12 0.9 s", printed) == []
    assert unshown_lines("job 0b6e2f4c9a1d43e8b7c5a2f1 0.4 s ago", printed) == []
    assert unshown_lines("reports  3  4.0 s\nreports 3 4 sec", printed) == [
        "reports  3  4.0 s",
        "reports 3 4 sec",
    ]
