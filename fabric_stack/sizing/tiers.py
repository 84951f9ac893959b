"""Per-tier switch models and link speeds: which model each tier runs and how its cages split.

A spec may name a different switch for the leaf, spine and core tiers (``leaf_switch``,
``spine_switch``, ``core_switch``, each defaulting to ``switch``) and run the leaf-spine and
spine-core links at ``uplink_gbps`` rather than the host link speed. Every tier's ports,
cages and breakouts follow its model's catalog record
(:data:`fabric_stack.hardware.switches.CATALOG`):

* a **spine** or **core** runs every port at ``uplink_gbps``, so its radix is its model's
  logical ports at that speed;
* a **leaf** whose uplinks run faster than its downlinks (an SN5600 serving 400G NICs two
  per 800G cage with 800G uplinks) is *mixed*: its down:up split is a split of cages, in
  capacity (an 800G uplink counts as two 400G downlinks), see :func:`split_leaf_cages`.
  Its logical ports are numbered at the downlink layout (``(cage - 1) × ports_per_cage +
  lane``, so every reader that maps a port number to its cage keeps working) and an
  uplink, a whole cage or a part of one, is numbered after its first lane
  (:func:`leaf_uplink_port`).

Planes: a NIC's line rate is split evenly over 1-4 planes (NVIDIA Network Operator 26.4,
"Software Multiplane Spectrum-X Quick Start",
https://docs.nvidia.com/networking/display/kubernetes2640/spectrum-x/quick-start-swplb.html:
a ConnectX-8 SuperNIC is split into one PF per plane, ``numberOfPlanes: 2`` for dual-plane or
``4`` for quad-plane on B300); the spec checks the split (``fabric_stack.spec.model``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabric_stack.errors import CatalogError, SpecError
from fabric_stack.hardware.switches import (
    CATALOG,
    Protocol,
    SwitchModel,
    lookup_switch,
    port_mode,
    radix_at,
)
from fabric_stack.spec.model import FabricSpec

__all__ = [
    "TierPorts",
    "Tiers",
    "leaf_uplink_port",
    "resolve_tiers",
    "split_leaf_cages",
    "uplink_layout_number",
]


@dataclass(frozen=True, slots=True)
class TierPorts:
    """One tier's switch model and how its ports run."""

    model: SwitchModel
    """The catalog record of the tier's switch."""
    down_gbps: int
    """Speed of the ports toward the servers or the tier below."""
    up_gbps: int
    """Speed of the ports toward the tier above (= down_gbps on spines and cores)."""
    ports_per_cage: int
    """Logical ports per cage at ``down_gbps`` (the port numbering of the switch)."""
    up_ports_per_cage: int
    """Logical ports per cage at ``up_gbps``."""

    @property
    def radix(self) -> int:
        """Logical ports at ``down_gbps``: the highest port number of the switch."""
        return self.model.cages * self.ports_per_cage

    @property
    def mixed(self) -> bool:
        """True when the uplinks run at another speed than the downlinks (a mixed leaf)."""
        return self.up_gbps != self.down_gbps


@dataclass(frozen=True, slots=True)
class Tiers:
    """The leaf, spine and core tiers of a spec."""

    leaf: TierPorts
    spine: TierPorts
    core: TierPorts


def _model_for(spec: FabricSpec, role: str) -> SwitchModel:
    """The catalog record of tier ``role``, checked against the fabric's protocol."""
    key = f"{role}_switch" if getattr(spec, f"{role}_switch", None) else "switch"
    proto: Protocol = "infiniband" if spec.fabric == "infiniband" else "ethernet"
    try:
        model = lookup_switch(spec.tier_switch(role), proto)
    except CatalogError as exc:
        raise CatalogError(key, exc.problem, exc.valid) from None
    if model.protocol != proto:
        fit = sorted(k for k, v in CATALOG.items() if v.protocol == proto)
        raise CatalogError(
            key,
            f"{model.name} is an {model.protocol} switch but the fabric is {spec.fabric}",
            "for " + spec.fabric + " use " + " or ".join([*fit, "generic-<radix>x<speed>"]),
        )
    return model


def _serving(
    model: SwitchModel, speed: int, key: str, what: str, proto: Protocol, switch_key: str
) -> int:
    """Ports per cage of ``model`` at ``speed``; one line naming ``key`` when it cannot (and,
    when ``key`` is the speed, the tier's model key ``switch_key`` as the other way out)."""
    try:
        return port_mode(model, speed).ports_per_cage
    except CatalogError:
        others = sorted(
            k for k, v in CATALOG.items() if v.protocol == proto and speed in v.speeds()
        )
        speeds = ", ".join(f"{s}G" for s in model.speeds())
        models = " or ".join([*others, f"generic-<radix>x{speed}"])
        valid = (
            f"{key} " + " or ".join(str(s) for s in model.speeds()) + f", or {switch_key} {models}"
            if key.endswith("_gbps")
            else f"a {key.replace('_', ' ')} that serves {speed}G: {models}"
        )
        raise SpecError(
            key, f"{model.name} has no {speed}G ports for its {what} (it serves {speeds})", valid
        ) from None


def resolve_tiers(spec: FabricSpec) -> Tiers:
    """Each tier's model and port layout; one line naming the key a model cannot serve.

    Raises :class:`~fabric_stack.errors.SpecError` (exit 2) when a model cannot run its
    ports at the speed asked, when ``uplink_gbps`` is below the host link speed, or when a
    leaf cannot split one uplink cage into whole downlink-cage lanes.
    """
    proto: Protocol = "infiniband" if spec.fabric == "infiniband" else "ethernet"
    link, up = spec.link_gbps, spec.uplink_speed
    if up < link:
        raise SpecError(
            "uplink_gbps",
            f"{up}G uplinks are slower than the {link}G host links",
            f"at least {link} (or unset: {link})",
        )
    leaf_m = _model_for(spec, "leaf")
    leaf_ppc = port_mode(leaf_m, link).ports_per_cage  # raises (nic_gbps) as before
    up_key = "uplink_gbps" if spec.uplink_gbps else "leaf_switch"
    leaf_up_ppc = _serving(leaf_m, up, up_key, "uplinks", proto, "leaf_switch")
    if leaf_ppc % leaf_up_ppc:
        raise SpecError(
            "uplink_gbps",
            f"a {leaf_m.key.upper()} cage gives {leaf_ppc} × {link}G but {leaf_up_ppc} × "
            f"{up}G, so an uplink cage does not take whole downlink lanes",
            f"a speed whose ports per cage divide {leaf_ppc}, e.g. {link}",
        )
    tiers = [TierPorts(leaf_m, link, up, leaf_ppc, leaf_up_ppc)]
    for role in ("spine", "core"):
        model = _model_for(spec, role)
        key = "uplink_gbps" if spec.uplink_gbps else f"{role}_switch"
        if key == f"{role}_switch" and getattr(spec, key) is None:
            key = "switch"
        ppc = _serving(model, up, key, f"{role} ports", proto, f"{role}_switch")
        tiers.append(TierPorts(model, up, up, ppc, ppc))
    return Tiers(*tiers)


def split_leaf_cages(tier: TierPorts, down: int, up: int) -> tuple[int, int]:
    """Leaf ports (down, up) of a mixed leaf at a ``down:up`` capacity ratio.

    The ratio holds exactly in capacity (``D × down_gbps × up = U × up_gbps × down``) with
    the most downlinks whose cages fit: ``ceil(D / ports per cage) + ceil(U / ports per
    uplink cage) ≤ cages``. (0, 0) when not even one step fits.
    """
    ds, us = tier.down_gbps, tier.up_gbps
    g = math.gcd(us * down, ds * up)
    d0, u0 = us * down // g, ds * up // g
    best = (0, 0)
    k = 1
    while True:
        d, u = k * d0, k * u0
        cages = -(-d // tier.ports_per_cage) + -(-u // tier.up_ports_per_cage)
        if cages > tier.model.cages:
            return best
        best, k = (d, u), k + 1


def leaf_uplink_port(
    leaf_down: int, ports_per_cage: int, up_ports_per_cage: int, mixed: bool, u: int
) -> tuple[int, int]:
    """(port number, label number) of leaf uplink ``u`` (0-based).

    The port number is in the leaf's downlink layout (cage-consistent: ``(cage - 1) ×
    ports_per_cage + lane``); the label number is the same port in the uplink layout, which
    is what the port label (``swp33`` for a whole 800G cage) is made from. On a leaf whose
    ports all run at one speed both are ``leaf_down + 1 + u``, as they always were.
    """
    if not mixed:
        return leaf_down + 1 + u, leaf_down + 1 + u
    first_cage = -(-leaf_down // ports_per_cage)  # uplinks start on a fresh cage
    cage, lane = first_cage + u // up_ports_per_cage, u % up_ports_per_cage
    number = cage * ports_per_cage + lane * (ports_per_cage // up_ports_per_cage) + 1
    return number, cage * up_ports_per_cage + lane + 1


def uplink_layout_number(number: int, ports_per_cage: int, up_ports_per_cage: int) -> int:
    """The number of a mixed leaf's uplink port ``number`` (downlink layout) in the uplink
    layout: what its label, its SONiC lanes and its UFM ``cage/lane`` are made from."""
    cage, lane = divmod(number - 1, ports_per_cage)
    return cage * up_ports_per_cage + lane // (ports_per_cage // up_ports_per_cage) + 1


def tier_radix(tier: TierPorts) -> int:
    """Logical ports of a spine or core tier at its (single) port speed."""
    return radix_at(tier.model, tier.down_gbps)
