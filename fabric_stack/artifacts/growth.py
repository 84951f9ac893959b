"""What a spec change does to allocations and device configuration (issue #27).

A capacity change must leave every existing address, ASN, router-id, VLAN,
partition key and SM setting alone unless the plan says so. This module is the
pure comparison behind ``fabric-stack plan`` and ``fabric-stack diff``:

* :func:`allocations_of` flattens one spec's allocations into ``object → value``
  (router-ids, ASNs, /31s, rail blocks, host addresses, VLANs, P_Keys, SM
  priorities and GUID bindings), keyed by the stable identity of the device or port;
* :func:`config_lines_of` renders the per-device configuration targets (NVUE, FRR,
  SONiC ``config_db``, QoS, OpenSM and partitions) and keeps the configuration
  lines of each device (comments dropped: headers quote the fabric's size);
* :func:`compare_specs` compares two specs: an address change is an object whose
  value differs on both sides (objects only on one side are growth or a shrink),
  a config change is a device whose lines differ, grouped by what they configure.

Both sides are derived from their specs, as the stack does, and then checked against
what the stack recorded (:func:`recorded_changes`): a switch recorded before stable
allocations, or with other values, is named per object with the reason. No Pulumi here;
what is rendered is kept per spec in the project's cache
(:mod:`fabric_stack.files.render_cache`), so the program and ``plan`` render a spec once.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from fabric_stack.analysis.growth_model import AddressChange, ConfigChange, GrowthDiff
from fabric_stack.artifacts import TARGETS, applies
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.artifacts.opensm import sm_instances
from fabric_stack.files.render_cache import cached
from fabric_stack.pipeline import paused_gc, run_pipeline
from fabric_stack.spec.model import FabricSpec
from fabric_stack.underlay.legacy import legacy_switch_allocations

if TYPE_CHECKING:
    from fabric_stack.adapters.pulumi.changes import ChangeSummary

CONFIG_TARGETS = ("cumulus", "frr", "sonic", "roce-qos", "infiniband")
"""Render targets whose files configure one device each (or the SM of a plane)."""

GROUPS = ("bgp", "ports", "qos", "sm", "partitions", "other")
"""Config change groups, in the order the plan shows them."""

_COMMENT = re.compile(r"^\s*(#|!|//|$)")
_BRACES = re.compile(r"^\s*[{}\[\],]*\s*$")
"""A JSON line that only opens or closes a table."""


def allocations_of(ctx: RenderContext) -> dict[str, str]:
    """Every allocation of a plan as ``'<identity> <kind>' → value`` (see module docstring)."""
    out: dict[str, str] = {}
    for net in ctx.topo.networks:
        for i, vlan in enumerate(net.vlans):
            out[f"network {net.name} vlan#{i + 1}"] = str(vlan)
    if ctx.fabric == "infiniband":
        out["compute pkey"] = ctx.spec.networks.compute.pkey
        for sm in sm_instances(ctx):
            out[f"sm {sm.name} sm_priority"] = str(sm.priority)
            out[f"sm {sm.name} guid binding"] = sm.guid_name
        return out
    u = ctx.underlay
    for sw in u.switches.values():
        out[f"{sw.name} router-id"] = sw.router_id
        out[f"{sw.name} asn"] = str(sw.asn)
    for lk in u.links:
        if not lk.unnumbered:
            out[f"link {lk.link_id} a-address"] = f"{lk.a_address}/31"
            out[f"link {lk.link_id} b-address"] = f"{lk.b_address}/31"
    for b in u.blocks:
        out[f"{b.leaf} rail-block"] = b.subnet
    for h in u.hosts:
        out[f"{h.server} {h.nic} address"] = f"{h.address}/{h.prefixlen} gw {h.gateway}"
    return out


def config_lines_of(ctx: RenderContext) -> dict[str, list[str]]:
    """Per device, the configuration lines its rendered files hold (comments dropped).

    A file belongs to the device its path names (``frr/<switch>.conf``,
    ``sonic/<switch>/config_db.json``); plane-wide files (``partitions.conf``)
    belong to the plane's SM configuration, ``sm``. JSON is flattened to one
    ``path = value`` line per leaf so a new port is one line, as in NVUE.
    """
    devices = {d.name for d in ctx.topo.devices} | {sm.name for sm in sm_instances(ctx)}
    # Every compute switch has an entry, with or without files of its own: an InfiniBand
    # switch takes its configuration from the SM, and a new one must still be listed.
    out: dict[str, list[str]] = {s.name: [] for s in ctx.compute_switches()}
    for name in CONFIG_TARGETS:
        if not applies(name, ctx):
            continue
        for art in TARGETS[name].render(ctx):
            owner = _owner(art.path, devices)
            if owner is None:
                continue
            lines = _config_lines(art.path, art.content)
            out.setdefault(owner, []).extend(f"{art.target}: {ln}" for ln in lines)
    return out


def _owner(path: str, devices: set[str]) -> str | None:
    """The device a rendered file configures (a part of its path), or None.

    InfiniBand switches take their configuration from the SM: ``opensm-<sm>.conf``
    belongs to that SM, ``partitions.conf*`` to ``partitions``, the node-name map
    and root GUIDs to ``sm-files``; the ``.topo``/IBNL/CVT files describe the
    cabling, which the cable diff already shows.
    """
    p = PurePosixPath(path)
    if p.parts[0] == "infiniband":
        stem = p.name.split(".")[0]
        if stem.startswith("opensm-") and stem[len("opensm-") :] in devices:
            return stem[len("opensm-") :]
        if stem == "partitions":
            return "partitions"
        if stem in ("ib-node-name-map", "root-guids"):
            return "sm-files"
        return None
    for part in (*p.parts[1:-1], p.name.split(".")[0]):
        if part in devices:
            return part
    return None


def _config_lines(path: str, text: str) -> list[str]:
    # config_db.json is written one entry (a port, a neighbour, a VLAN member) per
    # line, so its text lines are SONiC's units of change, as NVUE's are; parsing
    # and re-encoding 140k entries at 4,096 GPUs cost more than the rendering.
    skip = _BRACES if path.endswith(".json") else _COMMENT
    return [ln.rstrip().rstrip(",") for ln in text.splitlines() if not skip.match(ln)]


def group_of(line: str) -> str:
    """What a configuration line configures: bgp, ports, qos, sm, partitions or other."""
    low = line.lower()
    if low.startswith("infiniband:"):
        return "partitions" if "=full" in low or "=limited" in low or "pkey" in low else "sm"
    if any(k in low for k in ("neighbor", "bgp", "router-id", "peer", "asn")):
        return "bgp"
    if any(k in low for k in ("qos", "pfc", "ecn", "buffer", "roce", "dscp", "tc_")):
        return "qos"
    if any(k in low for k in ("interface", "port", "swp", "ethernet", "address", "mtu")):
        return "ports"
    return "other"


def compare_config(
    before: Mapping[str, list[str]], after: Mapping[str, list[str]]
) -> list[ConfigChange]:
    """Devices whose lines differ (multiset difference: order does not matter), and every
    device on one side only (new or removed), even one without lines of its own."""
    out: list[ConfigChange] = []
    for dev in sorted(set(before) | set(after)):
        old, new = Counter(before.get(dev, [])), Counter(after.get(dev, []))
        added = sorted((new - old).elements())
        removed = sorted((old - new).elements())
        if not added and not removed and dev in before and dev in after:
            continue
        groups: dict[str, dict[str, int]] = {}
        for side, lines in (("added", added), ("removed", removed)):
            for ln in lines:
                g = groups.setdefault(group_of(ln), {"added": 0, "removed": 0})
                g[side] += 1
        out.append(
            ConfigChange(
                device=dev,
                new=dev not in before,
                added=len(added),
                removed=len(removed),
                groups={g: groups[g] for g in GROUPS if g in groups},
                lines_added=added,
                lines_removed=removed,
            )
        )
    return out


def compare_allocations(before: Mapping[str, str], after: Mapping[str, str]) -> list[AddressChange]:
    """Objects allocated on both sides whose value differs (growth and shrink are not)."""
    return [
        AddressChange(object=k, before=before[k], after=after[k])
        for k in sorted(set(before) & set(after))
        if before[k] != after[k]
    ]


def context_of(spec: FabricSpec) -> RenderContext:
    """The render context of a spec (the whole pipeline, collector paused)."""
    with paused_gc():
        return RenderContext.from_topology(run_pipeline(spec).topology)


class _Side:
    """One spec's render context, built only when something is not in the cache."""

    def __init__(self, spec: FabricSpec, project_dir: Path | None) -> None:
        self.spec, self.project_dir = spec, project_dir
        self._ctx: RenderContext | None = None

    @property
    def ctx(self) -> RenderContext:
        if self._ctx is None:
            self._ctx = context_of(self.spec)
        return self._ctx

    def lines(self) -> dict[str, list[str]]:
        return cached(self.project_dir, "lines", self.spec, lambda: config_lines_of(self.ctx))

    def allocations(self) -> dict[str, str]:
        return cached(self.project_dir, "allocations", self.spec, lambda: allocations_of(self.ctx))

    def switch_allocations(self) -> dict[str, dict[str, Any]]:
        return cached(
            self.project_dir, "switch-allocations", self.spec, lambda: switch_allocations(self.ctx)
        )


def compare_specs(
    before: FabricSpec, after: FabricSpec, project_dir: Path | None = None
) -> GrowthDiff:
    """Config and address changes from ``before`` to ``after`` (see module docstring).

    ``project_dir``: read and keep what is rendered in that project's cache.
    """
    return _compare_sides(_Side(before, project_dir), _Side(after, project_dir))


def _compare_sides(old: _Side, new: _Side) -> GrowthDiff:
    a_old, a_new = old.allocations(), new.allocations()
    return GrowthDiff(
        config_changes=compare_config(old.lines(), new.lines()),
        address_changes=compare_allocations(a_old, a_new),
        allocations_added=len(set(a_new) - set(a_old)),
        allocations_removed=len(set(a_old) - set(a_new)),
    )


def with_growth(summary: ChangeSummary, project_dir: Path | None = None) -> ChangeSummary:
    """The summary with its config and address changes, from the Fabric record's two specs
    and the switch records' recorded allocations (:func:`recorded_changes`).

    A new or deleted stack has one side only: nothing to compare, ``compared`` stays False.
    """
    if not summary.spec_before or not summary.spec_after:
        return summary
    try:
        before = FabricSpec.model_validate(summary.spec_before)
        after = FabricSpec.model_validate(summary.spec_after)
    except ValidationError as exc:
        # Pulumi redacts secrets (a PostgreSQL backend's password) wherever they occur in
        # its JSON output, so a recorded spec can come back with words replaced: say so
        # rather than compare a spec that is not the one recorded.
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        why = f"the recorded spec does not read back ({where}: {first['msg']})"
        return summary.model_copy(update={"not_compared": why})
    old, new = _Side(before, project_dir), _Side(after, project_dir)
    diff = _compare_sides(old, new)
    moved = recorded_changes(summary.recorded, old, new)
    return summary.model_copy(
        update={
            "config_changes": diff.config_changes,
            "address_changes": merge_address_changes(diff.address_changes, moved),
            "compared": True,
        }
    )


LEGACY_CAVEAT = (
    "the switch record holds no allocations, so it is taken as numbered before stable "
    "allocations (fabric-stack before e696bf7); a stack recorded with "
    "fabric:config_records false by e696bf7…64ea23f (the release of e851846) was numbered "
    "as now, and then nothing moves: compare the 'before' value with what the switch runs"
)
"""Why a move derived from the old numbering is not certain (issue #27): records without
allocations were written both before stable allocations and, for one release, by stacks
with the config records off, and nothing in the records tells the two apart."""


def recorded_changes(
    recorded: Mapping[str, Mapping[str, Any]], old: _Side, new: _Side
) -> list[AddressChange]:
    """Allocations the stack recorded that the new plan moves, per object, with the reason.

    Per existing switch whose new record carries allocations: a record without them
    (unless the Fabric record says ``config_records: false``) was written before stable
    allocations (the values are what that code numbered:
    :mod:`fabric_stack.underlay.legacy`), with :data:`LEGACY_CAVEAT` on each such change
    because a stack of one release recorded with the records off looks the same; a record
    with other values than the current code derives for the recorded spec was written by
    another version. Either way the recorded value, not the re-derived one, is what the
    device runs, so it is compared with the new plan's. Empty when every record agrees
    (every stack this code wrote).
    """
    off = recorded.get("", {}).get("config_records") is False
    targets = {n: r for n, r in recorded.items() if n and r.get("records_config")}
    if not targets:
        return []
    after, derived = new.switch_allocations(), old.switch_allocations()
    legacy: dict[str, dict[str, str]] | None = None
    out: list[AddressChange] = []
    for name in sorted(targets):
        want = after.get(name)
        if want is None:
            continue  # InfiniBand (no IP allocations) or a switch the plan removes
        rec = targets[name].get("allocations")
        if rec is None and off:
            continue  # recorded by this numbering with the records off: the spec says it
        if rec is None:
            if legacy is None:
                legacy = legacy_switch_allocations(old.ctx.topo)
            was: Mapping[str, Any] = legacy.get(name, {})
            reason, caveat = "recorded before stable allocations", LEGACY_CAVEAT
        elif isinstance(rec, dict) and rec != derived.get(name):
            was, reason = rec, "the stack recorded other allocations than this version derives"
            caveat = ""
        else:
            continue
        out += _moves(name, was, want, reason, caveat)
    return out


_KINDS = (("router_id", "router-id"), ("asn", "asn"), ("rail_blocks", "rail-blocks"))


def _moves(
    name: str, was: Mapping[str, Any], want: Mapping[str, Any], reason: str, caveat: str = ""
) -> list[AddressChange]:
    """One change per allocation kind whose recorded value differs from the new one."""
    out = []
    for key, kind in _KINDS:
        if key not in want:
            continue
        after = _text(want[key])
        before = _text(was[key]) if key in was else "not recorded"
        if before != after:
            why = f"{reason}: {kind} {before} → {after}"
            out.append(
                AddressChange(
                    object=f"{name} {kind}", before=before, after=after, reason=why, caveat=caveat
                )
            )
    return out


def _text(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def merge_address_changes(
    derived: list[AddressChange], recorded: list[AddressChange]
) -> list[AddressChange]:
    """The spec-derived changes, with a recorded-state change replacing one of the same
    object (the recorded value is what the device runs), sorted by object."""
    by_object = {a.object: a for a in derived}
    by_object.update({a.object: a for a in recorded})
    return [by_object[k] for k in sorted(by_object)]


def device_records(
    ctx: RenderContext, lines: Mapping[str, list[str]] | None = None
) -> dict[str, dict[str, Any]]:
    """The config and allocation fields each switch record carries in the stack (issue #27).

    Per switch: ``config_digest`` (SHA-256 of its configuration lines, comments
    dropped), ``config_lines`` and, on a routed fabric, ``allocations`` (router-id,
    ASN, rail blocks). Under the key ``""`` the SM-wide files (InfiniBand) and
    the fabric-wide allocations (VLANs, P_Key, SM priorities and GUID bindings),
    for the Fabric record. ``pulumi preview --diff`` then shows per device a
    changed digest and each allocation that moves; the lines themselves are
    what ``fabric-stack diff --lines`` prints (kept out of the state: a leaf has
    thousands, and the engine's cost grows with every property byte).
    ``lines``: :func:`config_lines_of` of ``ctx`` when already at hand (the cache).
    """
    if lines is None:
        lines = config_lines_of(ctx)
    out: dict[str, dict[str, Any]] = {}
    for dev, ls in lines.items():
        out[dev] = {"config_digest": _digest(ls), "config_lines": len(ls)}
    for name, alloc in switch_allocations(ctx).items():
        out.setdefault(name, {})["allocations"] = alloc
    switches = {d.name for d in ctx.topo.switches("leaf", "spine", "core")}
    fabric_wide = {k: v for k, v in out.items() if k not in switches}
    records = {k: v for k, v in out.items() if k in switches}
    fabric_allocs = {
        k: v for k, v in allocations_of(ctx).items() if k.startswith(("network ", "sm ", "compute"))
    }
    records[""] = {"config_digests": fabric_wide, "allocations": fabric_allocs}
    return records


def switch_allocations(ctx: RenderContext) -> dict[str, dict[str, Any]]:
    """Per routed switch, the allocations its record carries: router-id, ASN, rail blocks
    (a leaf's); empty on InfiniBand (no IP underlay)."""
    if ctx.fabric == "infiniband":
        return {}
    u = ctx.underlay
    out: dict[str, dict[str, Any]] = {}
    for sw in u.switches.values():
        alloc: dict[str, Any] = {"router_id": sw.router_id, "asn": sw.asn}
        blocks = [b.subnet for b in u.blocks_of(sw.name)]
        if blocks:
            alloc["rail_blocks"] = blocks
        out[sw.name] = alloc
    return out


def _digest(lines: list[str]) -> str:
    # Sorted: the digest follows the lines a device has, not the renderers' order.
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]
