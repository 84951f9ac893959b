"""Drift data: what a source observed, and what the comparison with the plan found.

Two volumes, two kinds of record. A snapshot of a large fabric holds ~100k
observed links, so :class:`Endpoint` and :class:`ObservedLink` are slotted
frozen dataclasses (as the topology's ``Link`` is): validating each as a
pydantic model would cost seconds for data the readers have already checked
line by line. Findings are few and are the output people and machines read,
so :class:`Finding` and :class:`DriftReport` are frozen pydantic models with
every field described (their JSON schema documents ``--format json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from fabric_stack.drift.coverage import CoverageReport
from fabric_stack.records import fast_init

FindingKind = Literal[
    "missing_link",
    "unexpected_link",
    "wrong_peer",
    "speed_mismatch",
    "missing_device",
    "unexpected_device",
    "attribute_changed",
    "link_up_no_neighbor",
    "unknown_port",
    "plan_mismatch",
]
"""What kind of drift a finding reports (``plan_mismatch``: the site's shape is not the plan's,
one finding standing for every consequence, see :mod:`~fabric_stack.drift.shape_fold`)."""

KINDS: tuple[FindingKind, ...] = get_args(FindingKind)
"""Every finding kind, in report order."""

CABLE_ATTRS: tuple[str, ...] = (
    "role",
    "network",
    "a_speed_gbps",
    "b_speed_gbps",
    "rail",
    "plane",
    "su",
    "pod",
    "medium",
    "a_optic",
    "b_optic",
    "cable_type",
    "status",
)
"""Cable-record attributes drift compares with the plan (a record source such as the
inventory or NetBox carries them in :attr:`ObservedLink.attrs`). Keys starting ``a_``/``b_``
refer to the link's ends; ``status`` is compared with :data:`ABSENT_STATUSES`."""

SPEED_ATTRS: tuple[str, ...] = ("a_speed_gbps", "b_speed_gbps")
"""Cable attributes compared with the planned link speed."""

LINK_FIELDS: tuple[str, ...] = tuple(
    f for f in CABLE_ATTRS if f not in SPEED_ATTRS and f != "status"
)
"""Cable attributes compared with the planned :class:`~fabric_stack.topology.build.Link` field
of the same name."""

ABSENT_STATUSES = frozenset(
    {"decommissioned", "decommissioning", "removed", "deleted", "retired", "failed", "offline"}
)
"""Record statuses that mean the cable (or switch) is not in service."""

PortType = Literal["name", "mac", "number", "unresolved", "unknown"]
"""How a source spelled a port: a name, a MAC address, a bare logical number,
something identity resolution could not map onto the plan, or (``unknown``) a
port that cannot exist on the planned switch model."""


@fast_init
@dataclass(frozen=True, slots=True)
class Endpoint:
    """One end of a link: a device and a port, as a source spelled them or as resolved.

    ``hint`` carries a second spelling the source offered (lldpd's port
    description when the port id is a MAC), tried when the first fails.
    """

    device: str
    port: str
    port_type: PortType = "name"
    hint: str = ""

    def text(self) -> str:
        """``su1-node07 mlx5_3`` (``su1-node07 mac 0c:42:…`` for an unresolved MAC)."""
        if self.port_type == "mac":
            return f"{self.device} mac {self.port}"
        return f"{self.device} {self.port}"


@fast_init
@dataclass(frozen=True, slots=True)
class ObservedLink:
    """A cable (or a neighbour relation) one source reports.

    ``a`` is the end the source reported from (the local port for LLDP, the
    first side of a DCIM record). ``where`` is ``file:line`` or
    ``file:$.json.path`` so a finding can point at its evidence. ``attrs``
    holds record fields worth comparing (status, optics, medium); keys starting
    ``a_``/``b_`` refer to the ``a``/``b`` ends.
    """

    a: Endpoint
    b: Endpoint
    speed_gbps: float | None = None
    width: str | None = None
    rate: str | None = None
    state: str = "up"
    where: str = ""
    attrs: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PortState:
    """A port whose link state a source knows even when no neighbour was seen on it."""

    endpoint: Endpoint
    up: bool
    speed_gbps: float | None = None
    where: str = ""


@dataclass(slots=True)
class DeviceSeen:
    """A device a source saw, with identity attributes (GUID, model, status…).

    ``expected`` holds what a side file (a node-name-map) says those
    attributes should be; the engine reports the differences.
    """

    name: str
    kind: str = ""
    where: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SchedulerSwitch:
    """One switch of a scheduler's topology file (Slurm's ``SwitchName`` line)."""

    name: str
    nodes: tuple[str, ...]
    """``Nodes=`` as written (expanded); for ``scontrol show topology`` output, the nodes of a
    level-0 switch only (Slurm prints the union above it)."""
    switches: tuple[str, ...]
    """``Switches=`` (expanded)."""
    where: str


@dataclass(slots=True)
class SchedulerObservation:
    """What a scheduler is told about the fabric: a Slurm tree or Kubernetes node labels.

    A source of this kind reports no cables: drift compares it with the plan's scheduler
    view (:mod:`fabric_stack.drift.scheduler`), not with the link list.
    """

    kind: Literal["slurm-topology", "k8s-nodes"]
    switches: dict[str, SchedulerSwitch] = field(default_factory=dict)
    """Slurm: switch name → its line."""
    labels: dict[str, tuple[dict[str, str], str]] = field(default_factory=dict)
    """Kubernetes: node name → (its labels, where in the file)."""


@dataclass(slots=True)
class Snapshot:
    """Everything one source reported, as :meth:`load` of a reader returns it.

    Coverage says which planned links the source should have seen, so a link
    it could not see is not reported missing: ``networks`` (``None`` = all)
    limits the networks (ibnetdiscover sees only the compute fabric) and
    ``covered`` (``None`` = every device) names the devices whose every port
    the source reports (LLDP files). ``physical`` distinguishes what the
    fabric says (cabling fixes) from records (DCIM / inventory edits).
    ``one_plane`` asks the engine to limit the scope to the plane(s) whose
    switches appear (an IB subnet is one plane).
    """

    source: str
    origin: str
    links: list[ObservedLink] = field(default_factory=list)
    devices: dict[str, DeviceSeen] = field(default_factory=dict)
    covered: frozenset[str] | None = None
    networks: frozenset[str] | None = None
    physical: bool = True
    one_plane: bool = False
    port_states: list[PortState] = field(default_factory=list)
    macs: dict[str, Endpoint] = field(default_factory=dict)
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    chassis_macs: dict[str, str] = field(default_factory=dict)
    """Device (as the source names it) → its chassis MAC, when the source reports one (LLDP
    chassis id): ``adopt`` writes it to the names file."""
    scheduler: SchedulerObservation | None = None
    """A scheduler's view (Slurm topology file, Kubernetes nodes) instead of cables."""


# --------------------------------------------------------------------------- findings


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Side(_Out):
    """The expected (planned) or actual (observed) side of a finding: a link or a device."""

    a_device: str = Field(description="Device at the a-end (the lower tier for planned links).")
    a_port: str = Field(default="", description="Port at the a-end; empty for a device.")
    b_device: str = Field(default="", description="Device at the b-end; empty for a device.")
    b_port: str = Field(default="", description="Port at the b-end.")
    speed_gbps: int | float | None = Field(
        default=None, description="Link speed, Gb/s, when known (2.5 for 1xSDR)."
    )
    rate: str | None = Field(
        default=None,
        description="InfiniBand width and speed as the fabric reports it, e.g. '4xNDR'.",
    )
    state: str | None = Field(default=None, description="Link state or record status.")
    where: str = Field(
        default="", description="Evidence: 'file:line', 'file:$.json.path', or the plan link id."
    )
    attributes: dict[str, Any] = Field(
        default_factory=dict, description="Other compared attributes (optics, medium, GUID…)."
    )


class Finding(_Out):
    """One drift item: what was expected, what is there, and how to fix it."""

    id: str = Field(
        description="Stable id: kind + a hash of source, kind and endpoints (same drift, same id)."
    )
    kind: FindingKind = Field(description="What kind of drift this is.")
    cause: str = Field(
        default="",
        description=(
            "Sub-class of wrong_peer: swap_same_switch, swap_across_switches, wrong_port, "
            "wrong_rail, wrong_switch, displaced; empty otherwise."
        ),
    )
    source: str = Field(
        description="Reader that reported it: lldp, eos, ibnetdiscover, netbox, inventory."
    )
    switch: str = Field(default="", description="Switch to work on (grouping key of the report).")
    rail: int = Field(default=0, description="Rail of the planned link (0: not a rail link).")
    su: int = Field(default=0, description="Scalable unit of the planned link (0: none).")
    plane: int = Field(default=0, description="Fabric plane (0 outside the compute fabric).")
    summary: str = Field(description="One line saying what is wrong.")
    fix: str = Field(description="A concrete action that removes the finding.")
    expected: list[Side] = Field(default_factory=list, description="What the plan says.")
    actual: list[Side] = Field(default_factory=list, description="What the source reports.")
    changes: list[str] = Field(
        default_factory=list, description="Attribute differences, 'field: planned → actual'."
    )
    links: int = Field(default=0, description="Links folded into a device finding.")
    planned: dict[str, str] = Field(
        default_factory=dict,
        description="Site name → planned position of each renamed device the finding names "
        "(only with a names file or naming templates; omitted when empty).",
    )

    @model_serializer(mode="wrap")
    def _omit_empty_planned(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.planned:
            data.pop("planned", None)
        return data


class SourceInfo(_Out):
    """One source that was compared with the plan."""

    source: str = Field(description="Reader name.")
    origin: str = Field(description="File, directory or URL read.")
    links: int = Field(description="Observed links (after merging both directions).")
    devices: int = Field(description="Devices the source mentions.")
    notes: list[str] = Field(default_factory=list, description="Identity notes and caveats.")
    coverage: CoverageReport | None = Field(
        default=None, description="How much of the plan in scope this source saw."
    )


class DriftReport(_Out):
    """The whole comparison: counts per kind, then every finding."""

    summary: dict[str, int] = Field(
        description="Findings per kind (every kind listed) and 'total'."
    )
    coverage: CoverageReport | None = Field(
        default=None,
        description=(
            "Planned / seen / matched devices and links, in total and per network; "
            "'low' when fewer than min_ratio of the planned devices were seen."
        ),
    )
    sources: list[SourceInfo] = Field(default_factory=list, description="What was compared.")
    findings: list[Finding] = Field(default_factory=list, description="Every finding, sorted.")

    @property
    def clean(self) -> bool:
        """True when nothing drifted and coverage is not low."""
        return not self.findings and not (self.coverage is not None and self.coverage.low)

    def to_json(self) -> dict[str, Any]:
        """JSON-compatible dict: ``{"summary", "coverage", "sources", "findings"}``."""
        return self.model_dump(mode="json")


def summarize(findings: list[Finding]) -> dict[str, int]:
    """Counts per kind (every kind, zeros included) plus ``total``."""
    out: dict[str, int] = dict.fromkeys(KINDS, 0)
    for f in findings:
        out[f.kind] += 1
    out["total"] = len(findings)
    return out
