"""Issue 35: ``estimate --sizes`` refuses odd digits and huge numbers in one line."""

from __future__ import annotations

import pytest

from fabric_stack.analysis.estimate import MAX_SIZES, parse_sizes
from fabric_stack.errors import SpecError


@pytest.mark.parametrize(
    "text",
    ["1M,²", "١٢M", "9" * 5000, "9" * 17, "2T", "0", "-1M", "1.5G", "1MM", "",
     ",".join(["1M"] * (MAX_SIZES + 1))],
    ids=["superscript", "arabic-indic", "5000-digits", "17-digits", "over-1T", "zero",
         "negative", "fraction", "two-units", "empty", "too-many"],
)  # fmt: skip
def test_bad_sizes_are_one_line(text: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_sizes(text)
    line = str(info.value)
    assert line.startswith("--sizes: ") and "\n" not in line and len(line) < 200, line


def test_good_sizes() -> None:
    assert parse_sizes("1M, 16m,1GB,1T,8") == [8, 1 << 20, 16 << 20, 1 << 30, 1 << 40]
