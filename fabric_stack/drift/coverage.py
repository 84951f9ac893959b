"""Coverage: how much of the plan one source saw, per network, and whether that is enough.

A run that matched nothing must not look like a run with little drift. For
each network in scope the report carries planned / seen / matched devices and
links:

* ``planned_*``: devices and cables of the plan in that network (the plane
  the source sees, for an InfiniBand subnet);
* ``seen_*``: devices the source mentions (planned or not) and the cables it
  reports, counted in a network when one end is a planned device of it;
* ``matched_*``: seen devices that are planned devices of the network, and
  reported cables equal to a planned cable.

Below :data:`DEFAULT_MIN_COVERAGE` (fewer than half the planned devices
seen) the report says so at the top and ``drift`` exits 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.topology.build import Link

NETWORKS = ("compute", "storage", "inband", "oob")
"""The networks ``drift --network`` can select (``all`` = every one of them)."""

_SERVER_ROLES = frozenset({"node_leaf", "manager_leaf", "storage", "inband", "oob"})

DEFAULT_MIN_COVERAGE = 0.5
"""Below this share of planned devices seen, the report warns and drift exits 1."""


class Coverage(BaseModel):
    """Planned / seen / matched devices and links (of one network, or all in scope)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    planned_devices: int = Field(description="Devices the plan has in scope.")
    seen_devices: int = Field(description="Devices the source mentions (planned or not).")
    matched_devices: int = Field(description="Seen devices that are planned in scope.")
    planned_links: int = Field(description="Planned cables in scope.")
    seen_links: int = Field(description="Cables the source reports (both directions merged).")
    matched_links: int = Field(description="Reported cables equal to a planned cable.")

    @property
    def ratio(self) -> float:
        """Share of the planned devices that were seen (1.0 when nothing is planned)."""
        return self.matched_devices / self.planned_devices if self.planned_devices else 1.0


class CoverageReport(Coverage):
    """Coverage of one source (or a combined report): totals, per network, and the verdict."""

    networks: list[str] = Field(description="Networks in scope, as compared.")
    scope: str = Field(description="Why these networks: '--network …' or what the input sees.")
    by_network: dict[str, Coverage] = Field(
        default_factory=dict, description="The same counts per network."
    )
    min_ratio: float = Field(description="Threshold: share of planned devices that must be seen.")
    low: bool = Field(
        description="True when fewer than min_ratio of the planned devices were seen."
    )


def compute_coverage(
    planned: Iterable[Link],
    seen_devices: set[str],
    matched_by_network: Mapping[str, int],
    unmatched: list[tuple[str, str]],
    seen_links: int,
    networks: Iterable[str],
    scope: str,
    min_ratio: float = DEFAULT_MIN_COVERAGE,
) -> CoverageReport:
    """Coverage of one comparison. Pure; one pass over the planned links in scope.

    ``planned`` are the planned links in scope, ``seen_devices`` the (resolved)
    device names the source mentions, ``matched_by_network`` how many reported
    cables equal a planned cable of each network, ``unmatched`` the (a, b)
    devices of the reported cables that matched none, ``seen_links`` all
    reported cables. An unmatched cable counts in a network when one end is a
    planned switch of that network (servers are in every network).
    """
    nets = sorted(set(networks), key=lambda n: NETWORKS.index(n) if n in NETWORKS else 99)
    by_net_links: dict[str, list[Link]] = {n: [] for n in nets}
    for link in planned:
        in_net = by_net_links.get(link.network)
        if in_net is not None:
            in_net.append(link)
    links: dict[str, int] = {n: len(ls) for n, ls in by_net_links.items()}
    devices: dict[str, set[str]] = {}
    switches: dict[str, set[str]] = {}
    for net, ls in by_net_links.items():
        # Set comprehensions, not a loop of adds: ~115k links at 32,768 GPUs.
        b_ends = {link.b_device for link in ls}
        switches[net] = b_ends | {link.a_device for link in ls if link.role not in _SERVER_ROLES}
        devices[net] = b_ends | {link.a_device for link in ls}
    by_net: dict[str, Coverage] = {}
    for net in nets:
        sw = switches[net]
        extra = sum(1 for a, b in unmatched if a in sw or b in sw)
        seen = seen_devices & devices[net]
        by_net[net] = Coverage(
            planned_devices=len(devices[net]),
            seen_devices=len(seen),
            matched_devices=len(seen),
            planned_links=links[net],
            seen_links=matched_by_network.get(net, 0) + extra,
            matched_links=matched_by_network.get(net, 0),
        )
    every = set().union(*devices.values()) if devices else set()
    matched = len(seen_devices & every)
    total = Coverage(
        planned_devices=len(every),
        seen_devices=len(seen_devices),
        matched_devices=matched,
        planned_links=sum(links.values()),
        seen_links=seen_links,
        matched_links=sum(matched_by_network.get(n, 0) for n in nets),
    )
    return CoverageReport(
        **total.model_dump(),
        networks=nets,
        scope=scope,
        by_network=by_net,
        min_ratio=min_ratio,
        low=bool(total.planned_devices) and total.ratio < min_ratio,
    )


def merge_coverage(reports: list[CoverageReport]) -> CoverageReport | None:
    """Coverage of several sources: per network, the best source's counts (sources overlap)."""
    if not reports:
        return None
    if len(reports) == 1:
        return reports[0]
    by_net: dict[str, Coverage] = {}
    for r in reports:
        for net, c in r.by_network.items():
            prev = by_net.get(net)
            if prev is None or (c.matched_devices, c.matched_links) > (
                prev.matched_devices,
                prev.matched_links,
            ):
                by_net[net] = c
    fields: dict[str, Any] = {
        k: sum(getattr(c, k) for c in by_net.values()) for k in Coverage.model_fields
    }
    total = Coverage(**fields)
    min_ratio = min(r.min_ratio for r in reports)
    return CoverageReport(
        **total.model_dump(),
        networks=list(by_net),
        scope="; ".join(dict.fromkeys(r.scope for r in reports)),
        by_network=by_net,
        min_ratio=min_ratio,
        low=bool(total.planned_devices) and total.ratio < min_ratio,
    )


def low_coverage_text(c: CoverageReport) -> str:
    """The warning printed at the top of a report whose coverage is below the threshold.

    True today: the likely cause is that the source names devices differently from
    the plan; the report's notes list what identity resolution could interpret.
    """
    return (
        f"LOW COVERAGE: only {c.matched_devices} of {c.planned_devices} planned devices "
        f"({c.ratio:.0%}) were seen in {', '.join(c.networks) or 'no network'} "
        f"(threshold {c.min_ratio:.0%}); {c.matched_links} of {c.planned_links} planned "
        "cables matched. The findings below are not a measure of drift. Likely cause: the "
        "source names devices differently from the plan (compare the names in the input "
        "with `fabric-stack cabling`), or it covers another network or plane (choose one "
        "with --network)."
    )


def infer_networks(
    device_networks: Mapping[str, frozenset[str]], seen: set[str], servers: set[str]
) -> tuple[frozenset[str], str]:
    """The networks a source can see when ``--network`` is not given, and why.

    A network is in scope when the source saw one of its planned switches
    (servers span every network, so seeing one says nothing). With no switch
    seen, the networks of any seen planned device; with nothing seen, all.
    ``device_networks`` maps each planned device to the networks of its links.
    """
    by_switch: set[str] = set()
    by_any: set[str] = set()
    for d in seen:
        nets = device_networks.get(d)
        if nets is None:
            continue
        by_any |= nets
        if d not in servers:
            by_switch |= nets
    if by_switch:
        return frozenset(by_switch), "the networks whose switches the input reports"
    if by_any:
        return frozenset(by_any), "the networks of the planned devices the input reports"
    return frozenset(NETWORKS), "all networks (the input matched no planned device)"
