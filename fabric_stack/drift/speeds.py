"""Link speeds as discovery tools spell them, in Gb/s.

Three families of spelling:

* **InfiniBand width × rate** (``ibnetdiscover``, ``iblinkinfo``): ``4xNDR``,
  ``1xXDR``, ``4xFDR10``, ``1xSDR``. The per-lane figure is the *signalling*
  rate the InfiniBand specification names each speed by (SDR 2.5, DDR 5,
  QDR 10, FDR10 10.3125→10, FDR 14.0625→14, EDR 25.78125→25, HDR 50, NDR 100,
  XDR 200), not the data rate after 8b/10b or 64b/66b encoding: this is the
  convention NVIDIA's own tools print ("4xNDR 400Gb/s") and the one the plan
  uses, so ``1xSDR`` is 2.5 Gb/s (raw; 2 Gb/s of data after 8b/10b) and
  ``4xQDR`` is 40 Gb/s (32 Gb/s of data).
* **IEEE 802.3 MAU names** as lldpd prints them (its ``dot3`` atom):
  ``100BaseTXFD``, ``1000BaseTFD``, ``10GigBaseLR``, ``2p5GigT``, ``5GigT``,
  ``40GbaseCR4``, ``400GbaseSR8``, with or without the description after
  `` - `` — and the IEEE spelling EOS uses in ``operMauType``:
  ``10GBASE-LR``, ``1000BASE-T``, ``400GBASE-DR4``.
* **Interface bandwidth** in bit/s (EOS ``show interfaces status``).

Every parser returns ``None`` for something it cannot read (``unknown``,
``Other``, ``???``) rather than guessing. Speeds are ``int`` when whole and
``float`` otherwise (2.5, 0.1).
"""

from __future__ import annotations

import re

from fabric_stack.hardware.ib_links import GENERATIONS

Speed = int | float
"""A speed in Gb/s: an int when whole (400), a float otherwise (2.5)."""

LANE_GBPS: dict[str, Speed] = {
    g.name: int(g.lane_gbps) if float(g.lane_gbps).is_integer() else g.lane_gbps
    for g in GENERATIONS
}
"""Per-lane nominal rate of each InfiniBand speed name, Gb/s, from the generation table
(:data:`fabric_stack.hardware.ib_links.GENERATIONS`; see the module docstring)."""

_IB = re.compile(r"^(\d+)x([A-Z0-9]+)$")
_MAU = re.compile(
    r"^\s*(\d+)(?:p(\d+)|\.(\d+))?\s*(gig|gb|g)?(?=base|t\b|t[ -]|t$|\s|-|fd|hd|$)", re.I
)


def _whole(value: float) -> Speed:
    return int(value) if float(value).is_integer() else round(value, 3)


def ib_speed(rate: str) -> Speed | None:
    """``4xNDR`` → 400, ``1xSDR`` → 2.5, ``1xXDR`` → 200; ``None`` for ``???`` or unknown names."""
    m = _IB.match(rate.strip())
    if not m:
        return None
    lane = LANE_GBPS.get(m.group(2))
    if lane is None:
        return None
    return _whole(int(m.group(1)) * lane)


def mau_speed(text: str) -> Speed | None:
    """Speed of an IEEE MAU type as lldpd or EOS print it; ``None`` when it names none.

    ``2p5GigT`` → 2.5, ``5GigT`` → 5, ``10GigBaseLR`` → 10, ``100BaseTXFD`` → 0.1,
    ``1000BASE-T`` → 1, ``400GBASE-DR4`` → 400, ``unknown`` → None. A number
    without a G unit is in Mb/s (``100BaseTX`` is Fast Ethernet).
    """
    s = text.strip()
    if not s or not s[0].isdigit():
        return None
    s = s.split(" - ", 1)[0]
    m = _MAU.match(s)
    if not m:
        return None
    whole, frac_p, frac_dot, unit = m.groups()
    frac = frac_p or frac_dot
    value = float(f"{whole}.{frac}") if frac else float(whole)
    rest = s[m.end() :].lower()
    if unit is None:
        if not rest.startswith("base"):
            return None  # a bare number that is not a MAU name
        return _whole(value / 1000)
    return _whole(value)


def bandwidth_speed(bits_per_second: object) -> Speed | None:
    """EOS ``bandwidth`` (bit/s) → Gb/s; 0 or a non-number (a port without a speed) → None."""
    if isinstance(bits_per_second, bool) or not isinstance(bits_per_second, int | float):
        return None
    if bits_per_second <= 0:
        return None
    return _whole(bits_per_second / 1e9)
