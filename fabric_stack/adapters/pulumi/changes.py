"""What a `pulumi preview`/`up` changes, in the words of a network architect.

:func:`summarize_changes` turns the engine's resource steps (op, type, old and
new inputs) into a :class:`ChangeSummary`: switches to add or remove by model,
cables by role and record type (added, removed, re-patched), and the ports touched on
switches that already exist. Cable bundles are opened up and compared cable by
cable, so the summary is the same whichever granularity the stack uses.
Pure: the Automation API adapter (:mod:`fabric_stack.adapters.pulumi.ops`) feeds it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.analysis.growth_model import AddressChange, ConfigChange
from fabric_stack.intent.wire import decode_cables, record_of

_COUNTED_OPS = {"create", "update", "delete", "replace", "same"}


class Step(BaseModel):
    """One resource step as the engine reports it."""

    model_config = ConfigDict(frozen=True)

    op: str = Field(description="create, update, delete, replace, same (others are ignored).")
    kind: str = Field(description="Last part of the type token: Switch, CableBundle, Cable, …")
    name: str = Field(description="Resource name.")
    old: dict[str, Any] = Field(
        default_factory=dict,
        description="State before: outputs when known (they reflect a refresh), else inputs.",
    )
    new: dict[str, Any] = Field(default_factory=dict, description="Inputs after.")

    @classmethod
    def from_props(
        cls,
        op: str,
        kind: str,
        name: str,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> Step:
        """A step from the engine's resource props: their ``record`` text becomes the fields."""
        return cls(op=op, kind=kind, name=name, old=_fields(old), new=_fields(new))


def _fields(props: Mapping[str, Any] | None) -> dict[str, Any]:
    props = dict(props or {})
    try:
        return record_of(props)
    except ValueError:  # not one of our records: keep what the engine gave
        return props


class SwitchChange(BaseModel):
    """A switch added, removed, replaced or changed."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Switch name.")
    op: str = Field(description="create, delete, replace or update.")
    role: str = Field(description="leaf, spine, core, storage, inband, oob.")
    model: str = Field(description="Switch model (new one for replace).")
    changed: list[str] = Field(default_factory=list, description="Props that change (update).")


class CableChange(BaseModel):
    """A cable added, removed or moved (re-patched at its b-end)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Cable id (its a-end).")
    op: str = Field(description="add, remove, move or update.")
    role: str = Field(description="Cable role.")
    cable_type: str = Field(description="Fiber/copper type.")
    speed_gbps: int = Field(description="Link speed.")
    a_device: str = Field(description="a-end device.")
    a_port: str = Field(description="a-end port.")
    b_device: str = Field(description="b-end device (new for move).")
    b_port: str = Field(description="b-end port (new for move).")
    old_b_device: str = Field(default="", description="b-end before a move.")
    old_b_port: str = Field(default="", description="b-end port before a move.")


class ChangeSummary(BaseModel):
    """Everything a reviewer needs from a preview or an update."""

    model_config = ConfigDict(frozen=True)

    stack: str = Field(description="Stack name.")
    operation: str = Field(description="preview or update.")
    switches: list[SwitchChange] = Field(description="Switch changes, by name.")
    cables: list[CableChange] = Field(description="Cable changes, by id.")
    cable_counts: dict[str, dict[str, int]] = Field(
        description="role → op → cable records (one per link)."
    )
    cable_types: dict[str, dict[str, int]] = Field(
        description="cable type as the cable records hold it (the builder's class) → op → links."
    )
    cable_parts: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="The part each changed cable is ordered as, as `bom`'s order list names "
        "and counts it (a splitter or twin-port cable once) → op → cables; empty when the "
        "recorded specs do not read back (fabric_stack.adapters.pulumi.change_parts).",
    )
    cable_roles: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="role → op → cables as `bom` counts them (a splitter or twin-port cable "
        "once, in the role of one of its legs); empty with cable_parts.",
    )
    switches_by_model: dict[str, dict[str, int]] = Field(description="op → model → count.")
    ports_touched: dict[str, list[str]] = Field(
        description=(
            "Switches that already exist → their ports gaining, losing or changing a cable."
        )
    )
    resource_ops: dict[str, int] = Field(description="Resource steps by op (all kinds).")
    other: dict[str, dict[str, int]] = Field(description="kind → op → count for Rail, Vlan, NICs …")
    policy_violations: list[dict[str, str]] = Field(
        default_factory=list, description="Policy events."
    )
    gpus_requested: int = Field(
        default=0, description="GPUs the spec asks for after the change (0: no Fabric record)."
    )
    gpus_built: int = Field(
        default=0, description="GPUs cabled after the change (fewer when managers took a server)."
    )
    servers_removed: int = Field(
        default=0, description="Server positions given to the fabric managers (RA rule)."
    )
    config_changes: list[ConfigChange] = Field(
        default_factory=list,
        description="Devices whose rendered config changes (fabric_stack.artifacts.growth).",
    )
    address_changes: list[AddressChange] = Field(
        default_factory=list,
        description="Allocations (addresses, ASNs, VLANs, P_Keys, SM) that move: [] on growth.",
    )
    compared: bool = Field(
        default=False,
        description="True when config and address changes were computed (both specs known).",
    )
    not_compared: str = Field(
        default="",
        description="Why config and address changes were not compared although both sides "
        "exist (a recorded spec that does not read back), or empty.",
    )
    # What the stack recorded for each existing switch that stays (its old record's
    # ``allocations`` and ``config_digest``, only the keys it has) and whether the new
    # record carries them (``records_config``): plan compares against the recorded
    # values, not only against the recorded spec re-derived by this code (issue #27).
    recorded: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        exclude=True,
        description="Existing switch → {allocations?, config_digest?, records_config}.",
    )
    # The spec on each side, from the Fabric summary record (for `plan --estimate`);
    # kept out of the JSON dump: a reviewer wants the change, not two whole specs.
    spec_before: dict[str, Any] = Field(
        default_factory=dict, exclude=True, description="FabricSpec before ({} on a new stack)."
    )
    spec_after: dict[str, Any] = Field(
        default_factory=dict, exclude=True, description="FabricSpec after ({} when deleted)."
    )

    @property
    def has_changes(self) -> bool:
        """True when anything other than 'same' steps is planned."""
        return any(op != "same" and n for op, n in self.resource_ops.items())

    @property
    def destructive(self) -> bool:
        """True when a switch or cable is removed or replaced."""
        return any(s.op in ("delete", "replace") for s in self.switches) or any(
            c.op == "remove" for c in self.cables
        )


def _cables_of(kind: str, props: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    if not props:
        return {}
    if kind == "CableBundle":
        return {str(c["name"]): c for c in decode_cables(props)}
    if kind == "Cable":
        return {str(props.get("name")): props}
    return {}


def _change(op: str, new: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> CableChange:
    return CableChange(
        name=str(new.get("name")),
        op=op,
        role=str(new.get("role", "")),
        cable_type=str(new.get("cable_type", "")),
        speed_gbps=int(new.get("a_speed_gbps", 0) or 0),
        a_device=str(new.get("a_device", "")),
        a_port=str(new.get("a_port", "")),
        b_device=str(new.get("b_device", "")),
        b_port=str(new.get("b_port", "")),
        old_b_device=str(old.get("b_device", "")) if old else "",
        old_b_port=str(old.get("b_port", "")) if old else "",
    )


def summarize_changes(
    steps: Iterable[Step],
    stack: str = "",
    operation: str = "preview",
    policy_violations: list[dict[str, str]] | None = None,
) -> ChangeSummary:
    """Summarize engine steps (see module docstring). Pure.

    The steps: :func:`_sort_steps` (switch changes, cables before and after, other
    kinds), :func:`_cable_changes` (one change per cable that differs), then
    :func:`_tally` (per role, per cable type, per switch model, ports touched).
    """
    steps = [s for s in steps if s.op in _COUNTED_OPS]
    ops = Counter(s.op for s in steps)
    sorted_steps = _sort_steps(steps)
    cables = _cable_changes(sorted_steps.old_cables, sorted_steps.new_cables)
    counts, types, touched = _tally(cables, sorted_steps.created)
    by_model: dict[str, Counter[str]] = defaultdict(Counter)
    for sw in sorted_steps.switches:
        by_model[sw.op][sw.model] += 1
    return ChangeSummary(
        stack=stack,
        operation=operation,
        switches=sorted(sorted_steps.switches, key=lambda x: x.name),
        cables=cables,
        cable_counts={k: dict(v) for k, v in sorted(counts.items())},
        cable_types={k: dict(v) for k, v in sorted(types.items())},
        switches_by_model={k: dict(v) for k, v in sorted(by_model.items())},
        ports_touched={k: sorted(v, key=_port_key) for k, v in sorted(touched.items())},
        resource_ops=dict(sorted(ops.items())),
        other={k: dict(v) for k, v in sorted(sorted_steps.other.items())},
        policy_violations=policy_violations or [],
        recorded=sorted_steps.recorded,
        spec_before=_spec_dict(sorted_steps.specs[0]),
        spec_after=_spec_dict(sorted_steps.specs[1]),
        **_gpus(sorted_steps.fabric),
    )


def _gpus(fabric: Mapping[str, Any]) -> dict[str, int]:
    """Asked vs built from the Fabric record after the change (zeros when there is none)."""
    spec = fabric.get("spec")
    if not isinstance(spec, dict):
        return {}
    try:
        return {
            "gpus_requested": int(spec.get("gpus", 0)),
            "gpus_built": int(fabric.get("gpus", 0)),
            "servers_removed": int(fabric.get("servers_removed", 0) or 0),
        }
    except (TypeError, ValueError):  # a record from another version: say nothing
        return {}


def _spec_dict(spec: Any) -> dict[str, Any]:
    """The Fabric record's spec, or {} when the step has none."""
    return spec if isinstance(spec, dict) else {}


@dataclass
class _SortedSteps:
    switches: list[SwitchChange] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    """Switches the steps create (their ports are new, not touched)."""
    other: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    old_cables: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    new_cables: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    specs: tuple[Any, Any] = (None, None)
    """The Fabric record's spec before and after (for ``plan --estimate``)."""
    fabric: Mapping[str, Any] = field(default_factory=dict)
    """The Fabric record after the change ({} when it is deleted or absent)."""
    recorded: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Existing switches that stay: what their old record holds (see ChangeSummary)."""


_RECORDED_KEYS = ("allocations", "config_digest")


def _recorded(s: Step) -> dict[str, Any]:
    """The old record's config/allocation fields and whether the new record has them."""
    out = {k: s.old[k] for k in _RECORDED_KEYS if k in s.old}
    out["records_config"] = "allocations" in s.new or "config_digest" in s.new
    return out


def _sort_steps(steps: list[Step]) -> _SortedSteps:
    """Switch changes (with the fields an update changes), cables before/after, the rest."""
    out = _SortedSteps()
    for s in steps:
        if s.kind == "Switch":
            props = s.new or s.old
            if s.op == "create":
                out.created.add(s.name)
            elif s.op != "delete" and s.old:
                out.recorded[s.name] = _recorded(s)
            if s.op != "same":
                changed = (
                    sorted(
                        k
                        for k in set(s.old) | set(s.new)
                        if s.old.get(k) != s.new.get(k) and k not in ("inventory", "stack")
                    )
                    if s.op == "update"
                    else []
                )
                out.switches.append(
                    SwitchChange(
                        name=s.name,
                        op=s.op,
                        role=str(props.get("role", "")),
                        model=str(props.get("model", "")),
                        changed=changed,
                    )
                )
        elif s.kind in ("CableBundle", "Cable"):
            old_side = s.old if s.op != "create" else {}
            new_side = s.new if s.op != "delete" else {}
            out.old_cables.update(_cables_of(s.kind, old_side))
            out.new_cables.update(_cables_of(s.kind, new_side))
        else:
            out.other[s.kind][s.op] += 1
            if s.kind == "Fabric":
                out.specs = (
                    s.old.get("spec") if s.op != "create" else None,
                    s.new.get("spec") if s.op != "delete" else None,
                )
                out.fabric = s.new if s.op != "delete" else {}
                if s.op != "create" and s.old.get("config_records") is False:
                    # Recorded with fabric:config_records off: a switch record without
                    # allocations says nothing about the numbering it was given.
                    out.recorded[""] = {"config_records": False}
    return out


def _cable_changes(
    old_cables: Mapping[str, Mapping[str, Any]], new_cables: Mapping[str, Mapping[str, Any]]
) -> list[CableChange]:
    """Added, removed, moved (b-end elsewhere) and updated cables, by name."""
    cables: list[CableChange] = []
    for name in sorted(set(old_cables) | set(new_cables)):
        o, n = old_cables.get(name), new_cables.get(name)
        if o is None and n is not None:
            cables.append(_change("add", n))
        elif n is None and o is not None:
            cables.append(_change("remove", o))
        elif o is not None and n is not None and dict(o) != dict(n):
            moved = (o.get("b_device"), o.get("b_port")) != (n.get("b_device"), n.get("b_port"))
            cables.append(_change("move" if moved else "update", n, o))
    return cables


def _tally(
    cables: list[CableChange], created: set[str]
) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]], dict[str, set[str]]]:
    """Cable changes per role and per cable type, and the ports touched on existing switches."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    touched: dict[str, set[str]] = defaultdict(set)
    for c in cables:
        counts[c.role][c.op] += 1
        types[c.cable_type][c.op] += 1
        # The b-end is always a switch; the a-end only for uplinks (else it is a server).
        ends = [(c.b_device, c.b_port)]
        if c.role in ("leaf_spine", "spine_core"):
            ends.append((c.a_device, c.a_port))
        if c.op == "move":
            ends.append((c.old_b_device, c.old_b_port))
        for dev, port in ends:
            if dev and dev not in created:
                touched[dev].add(port)
    return counts, types, touched


def _port_key(port: str) -> tuple[Any, ...]:
    import re

    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", port))
