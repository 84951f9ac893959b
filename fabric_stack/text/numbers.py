"""Number formatting shared by the sizing card and the policy messages (one spelling)."""

from __future__ import annotations


def fmt_num(x: float) -> str:
    """Thousands separators, at most one decimal, no trailing '.0' (``51.2``, ``1,024``)."""
    return f"{x:,.1f}".removesuffix(".0")
