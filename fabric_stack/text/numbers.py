"""Number formatting shared by the sizing card and the policy messages (one spelling), and the
whole-metre rounding of cable lengths every NOS and the NIC side share."""

from __future__ import annotations

import math


def fmt_num(x: float) -> str:
    """Thousands separators, at most one decimal, no trailing '.0' (``51.2``, ``1,024``)."""
    return f"{x:,.1f}".removesuffix(".0")


def whole_metres(length_m: float) -> int:
    """A cable length rounded up to whole metres, at least 1 (what ``mlnx_qos --cable_len``,
    the operator's ``cableLen`` and NVUE's ``cable-length`` take): never shorter than the
    run, because headroom sized for a shorter cable drops lossless traffic."""
    return max(1, math.ceil(round(length_m, 6)))
