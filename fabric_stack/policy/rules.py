"""The policy rules: pure functions over a :class:`~fabric_stack.intent.FabricIntent`.

Each rule is ``check_<name>(intent, config=None) -> Iterator[Violation]`` and is
listed in :data:`RULES` with its id, title, description, default level,
remediation hint and config model. :func:`evaluate` runs them all and returns a
:class:`~fabric_stack.policy.models.PolicyReport`. ``fabric-stack check`` and the
CrossGuard pack (``policies/``) call the same functions, so a design fails the
same way with or without the Pulumi engine.

Three rules can judge one resource at a time (``port-budget``,
``link-speed-match``, ``rail-alignment``): their :class:`Rule` also has a
``check_record`` part that the pack runs as a resource policy, plus a
``check_cross`` part for what needs two resources. ``Rule.run`` is always
record part + cross part, so ``check`` and the pack report the same set.

Every rule is O(records) with dict lookups: a 32,768-GPU intent (~115k cables)
is judged in well under a second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..intent import FabricIntent
from ._common import level_of
from .capacity import check_oversubscription, port_budget_records
from .locality import check_pcie_locality
from .lossless import _ib_applies, _roce_applies, check_ib_subnet_managers, check_roce_lossless
from .models import (
    Level,
    LinkSpeedConfig,
    NetworkSeparationConfig,
    OversubscriptionConfig,
    PcieLocalityConfig,
    PolicyConfig,
    PolicyReport,
    PortBudgetConfig,
    RailAlignmentConfig,
    RoceLosslessConfig,
    RuleConfig,
    RuleResult,
    SubnetManagerConfig,
    UnderlayConsistencyConfig,
    Violation,
    ViolationLevel,
)
from .separation import check_network_separation
from .underlay import check_underlay_consistency, underlay_applies
from .wiring import (
    link_speed_cross,
    link_speed_records,
    rail_alignment_cross,
    rail_alignment_records,
)

RecordCheck = Callable[[str, Iterable[Any], Any], Iterator[Violation]]
"""``(kind, records, config)``: judge records of one kind, each on its own."""

FabricCheck = Callable[[FabricIntent, Any], Iterator[Violation]]
"""``(intent, config)``: judge what needs several resources together."""


def _always(intent: FabricIntent) -> str | None:
    return None


ALL_KINDS = ("Fabric", "Switch", "Rail", "Vlan", "RdmaNic", "Cable")
"""Record kinds of an intent (resource kinds, grouped kinds aside)."""


@dataclass(frozen=True)
class Rule:
    """A policy rule: metadata plus its check functions.

    ``check_record(kind, records, config)`` judges records of a kind in
    ``record_kinds`` one at a time (the pack runs it as a resource policy);
    ``check_cross(intent, config)`` judges what needs several resources.
    :meth:`run` does both over a whole intent. ``reads`` lists the record kinds
    the cross part reads, so the pack rebuilds only those from a large stack.
    """

    id: str
    title: str
    description: str
    default_level: ViolationLevel
    remediation: str
    config_model: type[RuleConfig]
    check_cross: FabricCheck | None = None
    record_kinds: tuple[str, ...] = ()
    check_record: RecordCheck | None = None
    applies: Callable[[FabricIntent], str | None] = field(default=_always)
    reads: tuple[str, ...] = ALL_KINDS

    def config(self, data: Any = None) -> RuleConfig:
        """Validate ``data`` (mapping, model or None) into this rule's config model."""
        if isinstance(data, self.config_model):
            return data
        if isinstance(data, RuleConfig):
            return self.config_model.model_validate(data.model_dump(exclude_unset=True))
        return self.config_model.model_validate(dict(data or {}))

    def level(self, cfg: RuleConfig) -> Level:
        """Effective level: mandatory, advisory or disabled."""
        return level_of(cfg, self.default_level) or "disabled"

    def run(self, intent: FabricIntent, config: Any = None) -> Iterator[Violation]:
        """Every violation of this rule in ``intent`` (record part, then cross part)."""
        cfg = self.config(config)
        if self.check_record is not None:
            for kind in self.record_kinds:
                yield from self.check_record(kind, records_of(intent, kind), cfg)
        if self.check_cross is not None:
            yield from self.check_cross(intent, cfg)

    def config_schema(self) -> dict[str, dict[str, Any]]:
        """JSON-schema properties of the rule's settings (enforcementLevel left to CrossGuard)."""
        props = self.config_model.model_json_schema(by_alias=True).get("properties", {})
        return {k: v for k, v in props.items() if k != "enforcementLevel"}


def records_of(intent: FabricIntent, kind: str) -> Iterable[Any]:
    """The intent's records of one resource kind: Switch, RdmaNic, Cable, Vlan, Rail, Fabric."""
    table: dict[str, Iterable[Any]] = {
        "Switch": intent.switches,
        "RdmaNic": intent.nics,
        "Cable": intent.cables,
        "Vlan": intent.vlans,
        "Rail": intent.rails,
        "Fabric": (intent.summary,),
    }
    return table[kind]


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            id="oversubscription-1-to-1",
            title="Non-blocking compute fabric",
            description=(
                "Every leaf (and, in three tiers, every spine) has at least as much uplink as "
                "downlink capacity (up to the allowed ratio), and the bisection is GPUs × line "
                "rate."
            ),
            default_level="mandatory",
            remediation='Re-size at the allowed ratio (oversubscription: "1:1"): more uplinks '
            "per leaf and more spines.",
            config_model=OversubscriptionConfig,
            check_cross=check_oversubscription,
            reads=("Fabric", "Switch"),
        ),
        Rule(
            id="gpudirect-pcie-locality",
            title="GPUDirect RDMA PCIe locality",
            description=(
                "Every RDMA NIC shares a PCIe switch and NUMA node with each GPU it serves, and "
                "each GPU has exactly one serving NIC per plane."
            ),
            default_level="mandatory",
            remediation="Fix the node profile's pcie_switches map, or pair each GPU with the NIC "
            "under its own PCIe switch.",
            config_model=PcieLocalityConfig,
            check_cross=check_pcie_locality,
            reads=("Fabric", "RdmaNic"),
        ),
        Rule(
            id="network-separation",
            title="Separate compute, storage and management networks",
            description=(
                "Compute, storage, in-band and OOB use distinct switches or VLANs; no VLAN id is "
                "shared between networks; compute switches carry no storage or management VLAN "
                "or port; compute NICs land only on compute leaves."
            ),
            default_level="mandatory",
            remediation="Give each network its own VLAN id and storage/management their own "
            "switches (networks.<name>.attach: dedicated).",
            config_model=NetworkSeparationConfig,
            check_cross=check_network_separation,
        ),
        Rule(
            id="rail-alignment",
            title="Rail alignment",
            description="A rail-r RDMA NIC is cabled to its SU's rail-r leaf (of its plane).",
            default_level="mandatory",
            remediation="Re-cable the NIC to the leaf of its rail.",
            config_model=RailAlignmentConfig,
            record_kinds=("RdmaNic", "Switch"),
            check_record=rail_alignment_records,
            check_cross=rail_alignment_cross,
            reads=("Fabric", "Switch", "RdmaNic"),
        ),
        Rule(
            id="port-budget",
            title="Port budget",
            description=(
                "On every switch ports_down + ports_up ≤ radix, and each side stays within the "
                "plan's budget."
            ),
            default_level="mandatory",
            remediation="Re-size the fabric instead of over-filling a switch.",
            config_model=PortBudgetConfig,
            record_kinds=("Switch",),
            check_record=port_budget_records,
        ),
        Rule(
            id="link-speed-match",
            title="Link speed match",
            description=(
                "Both ends of every cable run one speed, and every RDMA NIC runs its leaf's port "
                "speed."
            ),
            default_level="mandatory",
            remediation="Set the same speed (and split mode) at both ends.",
            config_model=LinkSpeedConfig,
            record_kinds=("Cable",),
            check_record=link_speed_records,
            check_cross=link_speed_cross,
            reads=("Fabric", "Switch", "RdmaNic"),
        ),
        Rule(
            id="roce-lossless-consistency",
            title="RoCE lossless consistency",
            description=(
                "RoCEv2 only: every compute switch has exactly one PFC priority (the same one "
                "everywhere), ECN and DSCP trust on, and the same jumbo MTU on every hop."
            ),
            default_level="mandatory",
            remediation="Apply one RoCE QoS profile everywhere (drop per-tier roce.overrides).",
            config_model=RoceLosslessConfig,
            check_cross=check_roce_lossless,
            reads=("Fabric", "Switch", "Vlan"),
            applies=_roce_applies,
        ),
        Rule(
            id="ib-subnet-manager-redundancy",
            title="InfiniBand subnet-manager redundancy",
            description="InfiniBand only: at least two subnet managers (master + standby).",
            default_level="advisory",
            remediation="Run a standby subnet manager (infiniband.subnet_managers ≥ 2).",
            config_model=SubnetManagerConfig,
            check_cross=check_ib_subnet_managers,
            reads=("Fabric", "Switch"),
            applies=_ib_applies,
        ),
    )
}
"""Every rule by id, in report order."""

RULES["underlay-consistency"] = Rule(
    id="underlay-consistency",
    title="Routed underlay consistency",
    description=(
        "RoCE/Ethernet: fabric links both ends addressed or unnumbered, no duplicate address or "
        "router-id, ASNs per the RFC 7938 plan, each rail block originated once, host addresses "
        "in their leaf's block."
    ),
    default_level="mandatory",
    remediation="Re-plan the underlay from the spec (underlay.* pools) instead of editing it.",
    config_model=UnderlayConsistencyConfig,
    check_cross=check_underlay_consistency,
    reads=("Fabric",),
    applies=underlay_applies,
)


def evaluate(intent: FabricIntent, config: PolicyConfig | None = None) -> PolicyReport:
    """Run every rule of :data:`RULES` over ``intent`` with ``config``; pure."""
    cfg = config or PolicyConfig()
    results: list[RuleResult] = []
    violations: list[Violation] = []
    for rule in RULES.values():
        rc = rule.config(cfg.for_rule(rule.id))
        level = rule.level(rc)
        if level == "disabled":
            results.append(
                RuleResult(
                    id=rule.id,
                    title=rule.title,
                    level="disabled",
                    status="disabled",
                    violations=0,
                    reason="disabled by policy config",
                )
            )
            continue
        reason = rule.applies(intent)
        if reason:
            results.append(
                RuleResult(
                    id=rule.id,
                    title=rule.title,
                    level=level,
                    status="skipped",
                    violations=0,
                    reason=reason,
                )
            )
            continue
        found = list(rule.run(intent, rc))
        violations.extend(found)
        results.append(
            RuleResult(
                id=rule.id,
                title=rule.title,
                level=level,
                status="fail" if found else "pass",
                violations=len(found),
            )
        )
    counts = {
        "mandatory": sum(1 for v in violations if v.level == "mandatory"),
        "advisory": sum(1 for v in violations if v.level == "advisory"),
    }
    return PolicyReport(
        fabric=intent.summary.name,
        rules=tuple(results),
        violations=tuple(violations),
        counts=counts,
    )


def check_rail_alignment(
    intent: FabricIntent, config: RailAlignmentConfig | None = None
) -> Iterator[Violation]:
    """A rail-r NIC lands on its SU's rail-r leaf (of its plane)."""
    return RULES["rail-alignment"].run(intent, config)


def check_port_budget(
    intent: FabricIntent, config: PortBudgetConfig | None = None
) -> Iterator[Violation]:
    """Per switch: ports_down + ports_up ≤ radix, each side within the plan's budget."""
    return RULES["port-budget"].run(intent, config)


def check_link_speed(
    intent: FabricIntent, config: LinkSpeedConfig | None = None
) -> Iterator[Violation]:
    """Both ends of every cable at one speed; every NIC at its leaf's port speed."""
    return RULES["link-speed-match"].run(intent, config)
