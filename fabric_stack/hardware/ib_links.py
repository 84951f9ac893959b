"""InfiniBand link generations: what a lane of each generation carries, and what a planned
link of a given switch model and speed should run (``4xEDR``, ``2xNDR``…).

One record per generation (:data:`GENERATIONS`): the per-lane *nominal* rate the tools
print and the plan counts in (``4xEDR`` = 100 Gb/s), the signalling rate on the wire, the
line code, and the data rate per lane after encoding. Sources:

* SDR/DDR/QDR 2.5/5/10 Gb/s lanes with 8b/10b, FDR 14.0625 and EDR 25.78125 Gb/s with
  64b/66b, FDR10 10.3125 Gb/s with 64b/66b (a Mellanox speed): Linux commit 71eeba161d76
  "IB: Add new InfiniBand link speeds" (2011, Mellanox), and the IBTA FDR fact sheet
  cited by the InfiniBand article's data-rate table.
* HDR 53.125 and NDR 106.25 Gb/s lanes (PAM4, 64b/66b, 50 and 100 Gb/s of data): the
  per-generation table at infiniband.jp/2022/06/01 (after the IBTA roadmap); Linux commit
  f946e45f59ef "IB/mlx5: Add support for NDR link speed" (2020: NDR is 100 Gb/s per lane,
  the 100/200/400 Gb/s link modes are NDR x1, x2, x4). Open MPI PR 4946 counts HDR as
  50 Gb/s per lane.
* XDR 200 Gb/s per lane: NVIDIA Quantum-X800 (Q3400) 800 Gb/s ports = 4 lanes. Its
  signalling rate and line code are UNVERIFIED (no primary source read here).

How a link is *planned*: the switch model's port mode names the generation it runs
(QM9700 400G = ``NDR``, 200G = ``NDR200``: 2 NDR lanes); a generic ``radix × speed``
switch names none, so :func:`planned_rates` takes the 4x generation of that speed (100G
= 4xEDR, 200G = 4xHDR, 56G = 4xFDR) and also accepts the split-port forms that run the
same speed on half the lanes of the next generation (HDR100 = 2xHDR, NDR200 = 2xNDR),
because the plan of a generic switch does not say which of the two it is.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field


class Generation(BaseModel):
    """One InfiniBand lane generation as the specification and the tools name it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Speed name as ibnetdiscover/iblinkinfo print it: 'EDR'.")
    lane_gbps: float = Field(
        description="Nominal per-lane rate, Gb/s, the figure the tools and the plan count in."
    )
    signalling_gbps: float = Field(description="Per-lane signalling rate on the wire, Gb/s.")
    encoding: str = Field(description="Line code: '8b/10b' or '64b/66b'.")
    data_gbps: float = Field(description="Per-lane data rate after encoding, Gb/s.")
    modulation: str = Field(default="NRZ", description="NRZ or PAM4.")
    verified: bool = Field(default=True, description="False: UNVERIFIED figures (see source).")


def _gen(
    name: str, lane: float, sig: float, enc: str, data: float, mod: str = "NRZ", ok: bool = True
) -> Generation:
    return Generation(
        name=name,
        lane_gbps=lane,
        signalling_gbps=sig,
        encoding=enc,
        data_gbps=data,
        modulation=mod,
        verified=ok,
    )


GENERATIONS: tuple[Generation, ...] = (
    _gen("SDR", 2.5, 2.5, "8b/10b", 2),
    _gen("DDR", 5, 5, "8b/10b", 4),
    _gen("QDR", 10, 10, "8b/10b", 8),
    _gen("FDR10", 10, 10.3125, "64b/66b", 10),
    _gen("FDR", 14, 14.0625, "64b/66b", 13.64),
    _gen("EDR", 25, 25.78125, "64b/66b", 25),
    _gen("HDR", 50, 53.125, "64b/66b", 50, "PAM4"),
    _gen("NDR", 100, 106.25, "64b/66b", 100, "PAM4"),
    # UNVERIFIED: 212.5 Gb/s PAM4 lanes by analogy with NDR; only the 200 Gb/s is sourced.
    _gen("XDR", 200, 212.5, "64b/66b", 200, "PAM4", ok=False),
)
"""Every InfiniBand lane generation, oldest first (sources in the module docstring)."""

BY_NAME: dict[str, Generation] = {g.name: g for g in GENERATIONS}
"""Generation by name (``BY_NAME["EDR"].lane_gbps == 25``)."""

WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12)
"""Link widths the InfiniBand specification defines (lanes per link)."""

FULL_WIDTH = 4
"""Lanes of a full-width switch or HCA port (QSFP/OSFP 4x), what a cable is built for."""

SPLIT_NAMES: dict[str, tuple[int, str]] = {"NDR200": (2, "NDR"), "HDR100": (2, "HDR")}
"""Port-mode names of split ports: (width, generation). NDR200 is 2 NDR lanes (QM9700 user
manual, "NDR200"); HDR100 is 2 HDR lanes (NVIDIA QM8700 documentation, UNVERIFIED here)."""


def rate_gbps(width: int, generation: str) -> float:
    """Nominal rate of a ``width``x``generation`` link, Gb/s (4, 'EDR' → 100)."""
    return width * BY_NAME[generation].lane_gbps


def rate_text(width: int, generation: str) -> str:
    """``4xEDR``: the spelling ibnetdiscover and iblinkinfo use."""
    return f"{width}x{generation}"


def full_width_generation(speed_gbps: float) -> str:
    """The generation whose full-width (4x) link runs ``speed_gbps`` ('' when none does).

    100 → EDR, 200 → HDR, 400 → NDR, 800 → XDR, 56 → FDR, 40 → QDR, 20 → DDR, 10 → SDR.
    """
    for g in GENERATIONS:
        if g.name != "FDR10" and FULL_WIDTH * g.lane_gbps == speed_gbps:
            return g.name
    return ""


def generation_of_lane(gbps: float) -> str:
    """The generation whose per-lane *signalling* rate is ``gbps`` ('' when none is).

    ``iblinkinfo`` prints a link as width and signalling rate per lane, ``4X 25.78125 Gbps``
    (EDR) or ``4X 10.0 Gbps`` (QDR): real samples in ``../shared/realdata/iblinkinfo``. The
    HDR/NDR/XDR spellings (``53.125``, ``106.25``, ``212.5``) follow the table and are
    UNVERIFIED against a real iblinkinfo output.
    """
    for g in GENERATIONS:
        if abs(g.signalling_gbps - gbps) < 1e-6:
            return g.name
    return ""


@lru_cache(maxsize=256)
def planned_rates(speed_gbps: float, mode_name: str = "") -> tuple[str, ...]:
    """The rates a planned link of ``speed_gbps`` may run, the planned one first.

    ``mode_name`` is the switch model's name for the port mode (``NDR``, ``NDR200``,
    ``XDR``; a generic switch's ``100G`` names no generation). A mode that names a
    generation gives exactly one rate (``NDR`` at 400 → ``4xNDR``; ``NDR200`` → ``2xNDR``);
    otherwise the full-width generation of the speed, then the split-port forms of the
    same speed (module docstring). Empty when no InfiniBand link runs that speed.
    """
    if mode_name in SPLIT_NAMES:
        width, gen = SPLIT_NAMES[mode_name]
        if rate_gbps(width, gen) == speed_gbps:
            return (rate_text(width, gen),)
    if mode_name in BY_NAME:
        lane = BY_NAME[mode_name].lane_gbps
        width = int(speed_gbps // lane) if lane else 0
        if width in WIDTHS and width * lane == speed_gbps:
            return (rate_text(width, mode_name),)
    out: list[str] = []
    full = full_width_generation(speed_gbps)
    if full:
        out.append(rate_text(FULL_WIDTH, full))
    for _split, (width, gen) in SPLIT_NAMES.items():
        if rate_gbps(width, gen) == speed_gbps:
            out.append(rate_text(width, gen))
    if speed_gbps == 40:
        out.append("4xFDR10")  # 4 FDR10 lanes are also counted as 40 Gb/s
    return tuple(out)


__all__ = [
    "BY_NAME",
    "FULL_WIDTH",
    "GENERATIONS",
    "SPLIT_NAMES",
    "WIDTHS",
    "Generation",
    "full_width_generation",
    "generation_of_lane",
    "planned_rates",
    "rate_gbps",
    "rate_text",
]
