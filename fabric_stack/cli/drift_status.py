"""`fabric-stack drift --write-status`: the drift report written back to the NetBox it read."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import click

from fabric_stack.adapters.discovery import Reader
from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.adapters.discovery.selection import Selection
from fabric_stack.adapters.inventory.netbox.status import (
    cable_statuses,
    fabric_sources,
    journal_entries,
    write_back,
)
from fabric_stack.drift.model import DriftReport, Snapshot
from fabric_stack.topology.build import FabricTopology

Writer = Callable[[FabricTopology, DriftReport, Sequence[Snapshot]], str]


def status_writer(readers: Sequence[Reader], sources: Selection) -> Writer:
    """The write-back of the ``--netbox`` reader among ``readers``; a usage error when there
    is none (``sources`` is the selection, for the message)."""
    netbox = next((r for r in readers if isinstance(r, NetboxApiReader)), None)
    if netbox is None:
        given = ", ".join(c.source.name for c in sources.chosen) or "none"
        raise click.UsageError(f"--write-status needs --netbox URL (sources given: {given})")

    def write(topo: FabricTopology, report: DriftReport, snapshots: Sequence[Snapshot]) -> str:
        fabric = fabric_sources(snapshots)
        if not fabric:
            raise click.UsageError(
                "--write-status needs a source that reads the fabric itself "
                "(--ibnetdiscover, --lldp, --eos …) next to --netbox"
            )
        seen: set[str] = set()
        for s in snapshots:
            if s.source in fabric:
                seen |= set(s.devices)
                seen |= {e.device for link in s.links for e in (link.a, link.b)}
        statuses = cable_statuses(topo.links, report, fabric, seen)
        done = write_back(netbox.api, statuses, journal_entries(report, fabric), netbox.site_id())
        return (
            f"NetBox {netbox.base}: {done.cables} cable status(es) set, {done.unchanged} "
            f"already right, {done.entries} journal entr{'y' if done.entries == 1 else 'ies'} added"
        )

    return write


__all__ = ["status_writer"]
