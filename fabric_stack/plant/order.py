"""What to order for a topology's cabling, counted once: the one computation every view reads.

:func:`order_of` walks the link list and its physical plant (:func:`plant_of`) once and
counts what a buyer orders and an installer fits:

* **cables**: a one-link cable per link; a two-link cable (a 1:2 splitter, or a twin-port
  cable whose two links join the same two cages) per switch cage its legs share; times the
  cables one link of the chosen catalog family needs (two straight fibres for an unsplit
  800G port of a twin-port OSFP: :attr:`~fabric_stack.hardware.cables.CableFamily.
  cables_per_link`);
* **modules**: one per *cage* with a lit port, at both ends (a twin-port OSFP serves both
  ports of its switch cage, a DGX H100's flat-top twin-port OSFP the two rails of its
  cage), of the part that cage's hardware takes (:mod:`fabric_stack.plant.ends`); DAC, ACC
  and RJ45 ends take none;
* **module power** per device, for the rack budgets and the BOM's power total.

The BOM's summary and order list, its JSON/CSV/Markdown, the report and ``layout`` all
read this result (cached on the topology), so their totals cannot disagree. ``plan``'s
cable tables read :func:`link_parts` and :func:`count_cables`, the same grouping applied
to the links a change touches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from fabric_stack.hardware.cables import cables_per_link
from fabric_stack.plant.ends import switch_cage
from fabric_stack.plant.modules import ModuleCount, count_modules
from fabric_stack.plant.plan import CableRun, plant_of
from fabric_stack.topology.build import FabricTopology
from fabric_stack.topology.model import Link

_MEMO_KEY = "order"
_PARTS_KEY = "link-parts"


@dataclass(frozen=True, slots=True)
class CableCount:
    """Cables of one part number (one length) in one role."""

    part_number: str
    description: str
    medium: str
    length_m: float
    role: str
    network: str
    speed_gbps: int
    links: int
    cables: int
    splitter: bool
    verified: bool


@dataclass(frozen=True)
class Order:
    """Cables and modules of one topology, and the module power each device holds."""

    cables: tuple[CableCount, ...]
    modules: tuple[ModuleCount, ...]
    device_optics_w: dict[str, float]
    """Module power per device name, W."""

    @property
    def cables_total(self) -> int:
        """All cables."""
        return sum(c.cables for c in self.cables)

    @property
    def modules_total(self) -> int:
        """All modules."""
        return sum(m.count for m in self.modules)

    @property
    def optics_power_w(self) -> float:
        """Power of all modules, W."""
        return round(sum(m.count * m.power_w for m in self.modules), 1)


@dataclass(frozen=True, slots=True)
class LinkPart:
    """The cable part one link is ordered as, and the cable it shares with other links."""

    description: str
    """The order list's description of the part (``bom``'s cable line)."""
    cable: str
    """The cable the link is in: the link's id, or a two-link part's switch cage."""
    links_per_cable: int
    cables_per_link: int = 1
    """Cables one link takes (2: the two straight fibres of an unsplit 800G twin-port
    OSFP port)."""


def cable_of(k: Link, run: CableRun) -> str:
    """The cable ``k`` is in: itself, or for a two-link cable (splitter, twin-port cable)
    the switch cage its legs share, as :func:`order_of` counts it."""
    if run.links_per_cable == 1:
        return k.id
    return f"{run.part_number} {k.b_device} {switch_cage(k.b_port)}"


def count_cables(parts: Iterable[LinkPart]) -> int:
    """Cables that carry these links: a one-link cable per link, a two-link cable per
    shared cage (a cage with more legs than one cable carries takes more cables), each
    times the cables one link takes."""
    legs: Counter[tuple[str, int, int]] = Counter(
        (p.cable, p.links_per_cable, p.cables_per_link) for p in parts
    )
    return sum(-(-n // per) * each for (_, per, each), n in legs.items())


def link_parts(topo: FabricTopology) -> dict[str, LinkPart]:
    """Each link's part by link id (the id a Pulumi cable record is named by), cached."""
    cached = topo.memo.get(_PARTS_KEY)
    if isinstance(cached, tuple) and cached[0] is topo.links:
        parts: dict[str, LinkPart] = cached[1]
        return parts
    runs = plant_of(topo, strict=False).runs
    parts = {
        k.id: LinkPart(
            run.spec.description,
            cable_of(k, run),
            run.links_per_cable,
            cables_per_link(run.family),
        )
        for k, run in zip(topo.links, runs, strict=True)
    }
    topo.memo[_PARTS_KEY] = (topo.links, parts)
    return parts


def _count_cables(topo: FabricTopology, runs: tuple[CableRun, ...]) -> tuple[CableCount, ...]:
    """Cables by (part, role, network, speed); a two-link cable once per shared switch cage,
    counted in the role of its first leg; each times the cables one link of its family
    takes (a part number two families share, e.g. MFP7E10 on 400G host links and on 800G
    switch links, keeps each line's own family and description)."""
    legs: Counter[tuple[str, str, str]] = Counter()
    first: dict[tuple[str, str, str], tuple[str, str, int]] = {}
    links: Counter[tuple[str, str, str, int]] = Counter()
    cables: Counter[tuple[str, str, str, int]] = Counter()
    spec_of: dict[tuple[str, str, str, int], CableRun] = {}
    for k, run in zip(topo.links, runs, strict=True):
        key = (run.part_number, k.role, k.network, k.speed_gbps)
        links[key] += 1
        spec_of.setdefault(key, run)
        if run.links_per_cable == 1:
            cables[key] += 1
            continue
        ckey = (run.part_number, k.b_device, cable_of(k, run))
        legs[ckey] += 1
        first.setdefault(ckey, (k.role, k.network, k.speed_gbps))
    for ckey, n in legs.items():
        key = (ckey[0], *first[ckey])
        cables[key] += -(-n // spec_of[key].links_per_cable)
    out = [
        CableCount(
            part_number=key[0],
            description=spec_of[key].spec.description,
            medium=spec_of[key].medium,
            length_m=spec_of[key].length_m,
            role=key[1],
            network=key[2],
            speed_gbps=key[3],
            links=n,
            cables=cables[key] * cables_per_link(spec_of[key].family),
            splitter=spec_of[key].spec.splitter,
            verified=spec_of[key].verified,
        )
        for key, n in links.items()
    ]
    return tuple(out)


def order_of(topo: FabricTopology) -> Order:
    """What to order for ``topo`` (see the module docstring), derived once and cached."""
    cached = topo.memo.get(_MEMO_KEY)
    if isinstance(cached, tuple) and cached[0] is topo.links and cached[1] is topo.devices:
        order: Order = cached[2]
        return order
    runs = plant_of(topo, strict=False).runs
    modules, power = count_modules(topo, runs)
    order = Order(cables=_count_cables(topo, runs), modules=modules, device_optics_w=power)
    topo.memo[_MEMO_KEY] = (topo.links, topo.devices, order)
    return order


__all__ = [
    "CableCount",
    "LinkPart",
    "ModuleCount",
    "Order",
    "cable_of",
    "count_cables",
    "link_parts",
    "order_of",
]
