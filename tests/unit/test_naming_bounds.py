"""Issue 35: naming templates are length-checked before anything is formatted."""

from __future__ import annotations

import tracemalloc

import pytest

from fabric_stack.errors import SpecError
from fabric_stack.naming.site import check_template
from fabric_stack.spec.model import validate_spec


@pytest.mark.parametrize(
    "template",
    ["dgx{index:0999999999d}", "dgx{index:.99999999f}", "dgx{index:>4000}", "a" * 10_000,
     "dgx{index:{su}d}", "dgx{index:100d}"],
    ids=["width", "precision", "align", "long", "nested", "width-100"],
)  # fmt: skip
def test_a_huge_template_is_refused_without_formatting(template: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"^server: ") as info:
            check_template("server", template)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20, f"{peak:,} bytes to refuse {template[:40]!r}"
    assert "\n" not in str(info.value)


def test_the_spec_error_names_the_field() -> None:
    with pytest.raises(SpecError) as info:
        validate_spec({"naming": {"server": "dgx{index:0999999999d}"}})
    assert str(info.value).startswith("naming.server: "), str(info.value)


@pytest.mark.parametrize("template", ["dgx{index:04d}", "node-{su}-{index:020d}"])
def test_ordinary_widths_still_work(template: str) -> None:
    check_template("server", template)
