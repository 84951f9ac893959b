"""The shared spec of a cable run: the catalog family, the length to order and the module
each end's cage takes, made once per (length, family, cage kind, models).

:class:`_SpecTable` is what :func:`fabric_stack.plant.plan.plan_plant` asks for a run's
:class:`RunSpec`: ~1M cables at 131,072 GPUs share ~40k specs, so each is made once (split
from :mod:`fabric_stack.plant.plan`, which re-exports :class:`RunSpec`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from fabric_stack.hardware.cables import (
    CableFamily,
    EndKind,
    families_for,
    family_for_cages,
    generic_family,
)
from fabric_stack.hardware.optics import CageKind, Module, module_for


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What cables of one route share: length, medium, SKU, optics, reach (one object for
    every cable between the same two rack positions, so a large plan holds few of them)."""

    length_m: float
    route_m: float
    """Tray route plus slack (whole cm, rounded up), before rounding to the vendor's length."""
    medium: str
    part_number: str
    family: str
    a_optic: str
    b_optic: str
    reach_m: float
    links_per_cable: int
    verified: bool
    """False when the SKU, its length steps or its reach are UNVERIFIED in the catalog."""
    description: str = ""
    """What the cable is (medium, twin-port or splitter, SKU stem): the BOM's cable lines."""
    splitter: bool = False
    """A 1:2 splitter (its legs may go to two servers)."""
    a_power_w: float = 0.0
    """Power of the a-end module, W (0 without one)."""
    b_power_w: float = 0.0
    """Power of the b-end module, W (0 without one)."""
    a_module: Module | None = None
    """The a-end module's record (its source and whether it is verified), None without one."""
    b_module: Module | None = None
    """The b-end module's record, None without one."""


def _cheapest(families: tuple[CableFamily, ...], run: float) -> CableFamily:
    """The cheapest family whose reach covers ``run`` (the longest-reaching one if none)."""
    for f in families:
        if run <= f.reach:
            return f
    return max(families, key=lambda f: f.reach)


def _length(fam: CableFamily, run: float) -> float:
    """The length of ``fam`` to order for ``run`` metres (its longest if none covers it)."""
    lengths = fam.lengths
    return lengths[min(bisect.bisect_left(lengths, run - 1e-9), len(lengths) - 1)]


class _SpecTable:
    """The shared :class:`RunSpec` of a run, made once per (length ordered, family, cage
    kind, models): ~1M cables at 131k GPUs, ~40k specs. Lengths come in whole cm."""

    def __init__(self, spec_classes: list[tuple[int, CageKind, str, str, str]]) -> None:
        self.classes = spec_classes
        self.usable: dict[tuple[int, str, CageKind, bool], tuple[CableFamily, ...]] = {}
        self.fams: dict[tuple[int, int, str, bool, str], CableFamily] = {}
        self.rest: dict[tuple[str, float, CageKind, str, str], tuple[Any, ...]] = {}
        self.specs: dict[tuple[int, str, str, str, str], RunSpec] = {}

    def __call__(self, longest: int, paired: bool, run: int, spec_class: int) -> RunSpec:
        """The spec of a run of ``run`` cm in a cage whose longest leg is ``longest`` cm."""
        speed, a_kind, medium, a_model, b_model = self.classes[spec_class]
        # A cage's family depends on its longest leg and its ends' kinds.
        fkey = (longest, speed, a_kind, paired, medium)
        fam = self.fams.get(fkey)
        if fam is None:
            ukey = (speed, medium, a_kind, paired)
            usable = self.usable.get(ukey)
            if usable is None:
                usable = self.usable[ukey] = _usable(speed, medium, a_kind, paired)
            fam = self.fams[fkey] = _cheapest(usable, longest / 100)
        # Separate fibres from one module are each ordered at their own length; the legs
        # of one splitter or twin-port cable at the cage's longest.
        ordered = run if fam.links_per_cable == 1 else longest
        # Each switch end's module follows its model's cage (#44): the models key the spec.
        skey = (ordered, fam.key, a_kind, a_model, b_model)
        spec = self.specs.get(skey)
        if spec is None:
            fam = family_for_cages(fam, (a_model, b_model))  # XDR cages: SMF, 1 fibre
            metres = ordered / 100  # the very float the route rounds to (cm / 100)
            length = _length(fam, metres)
            # What specs of one family, length, cage kind and models share, made once.
            rkey = (fam.key, length, a_kind, a_model, b_model)
            rest = self.rest.get(rkey)
            if rest is None:
                mods = _modules(fam, a_kind, (a_model, b_model))
                rest = self.rest[rkey] = _spec_fields(fam, length, a_kind, mods)
            spec = self.specs[skey] = RunSpec(length, metres, *rest)
        return spec


def _allowed(f: CableFamily, a_kind: CageKind, paired: bool) -> bool:
    """Whether a cable of family ``f`` can be installed between these ends.

    One-link cables always; a splitter only onto single-port ends (its copper legs end in
    OSFP plugs, its fibre legs in any single-port module); a twin-port cable that is no
    splitter only when both its links join the same two cages (``paired``).
    """
    if f.links_per_cable == 1:
        return True
    if f.splitter:
        return a_kind == "osfp" or (a_kind == "qsfp112" and f.medium in ("mmf", "smf"))
    return paired and a_kind in ("switch", "osfp-twin")


def _usable(speed: int, medium: str, a_kind: CageKind, paired: bool) -> tuple[CableFamily, ...]:
    """The families installable between these ends, cheapest first (the generic family
    when the catalog has none): a cage takes the first whose reach covers its longest leg."""
    kind: EndKind = "host" if a_kind in ("osfp", "qsfp112", "rj45") else "switch"
    found = families_for(speed, kind, medium)
    usable = tuple(f for f in found if _allowed(f, a_kind, paired))
    return usable or (generic_family(speed, kind, medium),)


def _modules(
    fam: CableFamily, a_kind: CageKind, models: tuple[str, str]
) -> tuple[Module | None, Module | None]:
    """The module each end's cage takes for a cable of ``fam`` (None: no module).

    ``models`` are the ends' switch models (catalog keys; empty for a host end): a switch
    cage's module follows its model and split (:func:`~fabric_stack.hardware.optics.
    switch_module`)."""
    to_switch = a_kind == "switch"
    a_part = fam.a_optic.part if fam.a_optic else ""
    b_part = fam.b_optic.part if fam.b_optic else ""
    a_mod = module_for(a_kind, fam.medium, fam.speed_gbps, a_part, models[0], to_switch)
    b_mod = module_for("switch", fam.medium, fam.speed_gbps, b_part, models[1], to_switch)
    return a_mod, b_mod


def _spec_fields(
    fam: CableFamily,
    length: float,
    a_kind: CageKind,
    modules: tuple[Module | None, Module | None],
) -> tuple[Any, ...]:
    """The fields of a :class:`RunSpec` on ``fam`` at ``length`` after its length and
    route, in field order, with the module each end's cage takes (:func:`_modules`;
    verified only when the family and both modules are)."""
    a_mod, b_mod = modules
    part = fam.part(length)
    if a_kind == "osfp-twin" and fam.medium == "dac":
        # A DGX H100's twin-port cages take the flat-top end ("-FLT"; MCP4Y10 overview,
        # docs.nvidia.com/networking/display/mcp4y10nxxx2x400pub).
        part += "-FLT"
    return (
        fam.medium,
        part,
        fam.key,
        a_mod.part if a_mod else "",
        b_mod.part if b_mod else "",
        fam.reach,
        fam.links_per_cable,
        fam.verified and (a_mod is None or a_mod.verified) and (b_mod is None or b_mod.verified),
        fam.description,
        fam.splitter,
        a_mod.power_w if a_mod else 0.0,
        b_mod.power_w if b_mod else 0.0,
        a_mod,
        b_mod,
    )


class _SpecMemo(dict[tuple[int, int, int], "RunSpec"]):
    """Specs by (cage state, run, spec class), lengths in whole cm; a missing one is made
    by the table."""

    def __init__(self, table: _SpecTable) -> None:
        super().__init__()
        self.table = table

    def __missing__(self, key: tuple[int, int, int]) -> RunSpec:
        state, run, spec_class = key
        longest, paired = divmod(state, 2)
        spec = self[key] = self.table(longest, bool(paired), run, spec_class)
        return spec
