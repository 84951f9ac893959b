"""Typed inputs and outputs of the policy rules: configs, violations, the report.

The per-rule config models double as the CrossGuard ``config_schema`` of each
policy and, assembled into :class:`PolicyConfig`, as the schema of the file
``fabric-stack check --policy-config`` reads. That file has the same shape as
Pulumi's ``--policy-pack-config`` JSON (rule id → ``{enforcementLevel, ...}``
or a bare level), so one file serves both.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..spec import parse_ratio

Level = Literal["mandatory", "advisory", "disabled"]
"""What a rule's violations do: fail the check (mandatory), warn (advisory), or nothing."""

ViolationLevel = Literal["mandatory", "advisory"]
"""Level stamped on a reported violation (a disabled rule reports nothing)."""

ConfigLevel = Literal["mandatory", "advisory", "disabled", "remediate"]
"""Levels a config may name: CrossGuard's four; ``remediate`` counts as mandatory here
because these rules do not rewrite resources."""

RuleStatus = Literal["pass", "fail", "skipped", "disabled"]
"""Outcome of one rule in a report."""


class RuleConfig(BaseModel):
    """Settings every rule accepts: only the enforcement level."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    enforcement_level: ConfigLevel | None = Field(
        default=None,
        alias="enforcementLevel",
        description="mandatory, advisory or disabled; unset means the rule's default level.",
    )


class UnderlayConsistencyConfig(RuleConfig):
    """Settings of ``underlay-consistency`` (only the enforcement level)."""


class OversubscriptionConfig(RuleConfig):
    """Settings of ``oversubscription-1-to-1``."""

    max_ratio: str = Field(
        default="1:1",
        pattern=r"^\s*\d+\s*(:\s*\d+\s*)?$",
        description=(
            "Largest downlink:uplink capacity ratio allowed on a leaf (and a three-tier "
            "spine), e.g. '1:1' (non-blocking) or '2:1'. Bisection must reach GPUs × line "
            "rate divided by this ratio."
        ),
    )

    @field_validator("max_ratio")
    @classmethod
    def _ratio(cls, v: str) -> str:
        a, b = parse_ratio(v)
        return f"{a}:{b}"


class PcieLocalityConfig(RuleConfig):
    """Settings of ``gpudirect-pcie-locality``."""

    require_same_numa: bool = Field(
        default=True,
        description="Also require the NIC and its GPU on one NUMA node (not only one PCIe switch).",
    )


class NetworkSeparationConfig(RuleConfig):
    """Settings of ``network-separation`` (level only)."""


class RailAlignmentConfig(RuleConfig):
    """Settings of ``rail-alignment`` (level only)."""


class PortBudgetConfig(RuleConfig):
    """Settings of ``port-budget``."""

    enforce_budgets: bool = Field(
        default=True,
        description=(
            "Also hold each switch to the plan's down/up split (ports_down_budget, "
            "ports_up_budget), not only to its radix."
        ),
    )


class LinkSpeedConfig(RuleConfig):
    """Settings of ``link-speed-match`` (level only)."""


class RoceLosslessConfig(RuleConfig):
    """Settings of ``roce-lossless-consistency``."""

    min_mtu: int = Field(
        default=9000,
        ge=1500,
        le=9216,
        description="Smallest switch MTU accepted as jumbo on the compute fabric.",
    )


class SubnetManagerConfig(RuleConfig):
    """Settings of ``ib-subnet-manager-redundancy``."""

    min_subnet_managers: int = Field(
        default=2, ge=1, le=16, description="Subnet managers required (one master + standbys)."
    )


class PolicyConfig(BaseModel):
    """Per-rule levels and thresholds: the ``--policy-config`` file, keyed by rule id.

    ``all`` sets the level of every rule that does not set its own (as in CrossGuard).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    all: ConfigLevel | None = Field(
        default=None, description="Level for every rule without an enforcementLevel of its own."
    )
    oversubscription: OversubscriptionConfig = Field(
        default_factory=OversubscriptionConfig,
        alias="oversubscription-1-to-1",
        description="Leaf/spine uplink vs downlink capacity and bisection.",
    )
    pcie_locality: PcieLocalityConfig = Field(
        default_factory=PcieLocalityConfig,
        alias="gpudirect-pcie-locality",
        description="GPU and RDMA NIC on one PCIe switch and NUMA node.",
    )
    network_separation: NetworkSeparationConfig = Field(
        default_factory=NetworkSeparationConfig,
        alias="network-separation",
        description="Compute, storage, in-band and OOB kept apart.",
    )
    rail_alignment: RailAlignmentConfig = Field(
        default_factory=RailAlignmentConfig,
        alias="rail-alignment",
        description="Rail-r NICs on rail-r leaves.",
    )
    port_budget: PortBudgetConfig = Field(
        default_factory=PortBudgetConfig,
        alias="port-budget",
        description="Cabled ports within radix and the plan's split.",
    )
    link_speed: LinkSpeedConfig = Field(
        default_factory=LinkSpeedConfig,
        alias="link-speed-match",
        description="Both cable ends, and NIC vs leaf port, at one speed.",
    )
    roce_lossless: RoceLosslessConfig = Field(
        default_factory=RoceLosslessConfig,
        alias="roce-lossless-consistency",
        description="One PFC priority, ECN, DSCP trust and one MTU on every RoCE hop.",
    )
    subnet_managers: SubnetManagerConfig = Field(
        default_factory=SubnetManagerConfig,
        alias="ib-subnet-manager-redundancy",
        description="Redundant InfiniBand subnet managers.",
    )
    underlay: UnderlayConsistencyConfig = Field(
        default_factory=UnderlayConsistencyConfig,
        alias="underlay-consistency",
        description="Routed underlay: addressing, router-ids, ASNs, rail blocks consistent.",
    )

    def for_rule(self, rule_id: str) -> RuleConfig:
        """The config of rule ``rule_id`` (its level falls back to ``all`` when unset)."""
        for name, info in type(self).model_fields.items():
            if info.alias == rule_id:
                cfg: RuleConfig = getattr(self, name)
                if cfg.enforcement_level is None and self.all is not None:
                    cfg = cfg.model_copy(update={"enforcement_level": self.all})
                return cfg
        raise KeyError(rule_id)


def rule_ids() -> list[str]:
    """Rule ids :class:`PolicyConfig` accepts, in registry order."""
    return [str(f.alias) for n, f in PolicyConfig.model_fields.items() if n != "all"]


def policy_config_schema() -> dict[str, Any]:
    """JSON schema of the ``--policy-config`` file, generated from :class:`PolicyConfig`."""
    return PolicyConfig.model_json_schema(by_alias=True)


class Violation(BaseModel):
    """One broken rule on one resource, with what was measured, what is allowed and the fix."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str = Field(description="Rule id, e.g. 'oversubscription-1-to-1'.")
    level: ViolationLevel = Field(description="mandatory fails the check; advisory warns.")
    kind: str = Field(description="Resource kind: Fabric, Switch, Rail, Vlan, RdmaNic or Cable.")
    resource: str = Field(description="Resource (record) name, e.g. 'su1-r3-leaf'.")
    measured: str = Field(description="What the design has.")
    allowed: str = Field(description="What the rule allows.")
    message: str = Field(description="One line: resource, measured, allowed and the fix.")
    fix: str = Field(description="What to change, in spec/config terms where possible.")


class RuleResult(BaseModel):
    """How one rule fared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Rule id.")
    title: str = Field(description="Short title.")
    level: Level = Field(description="Effective enforcement level.")
    status: RuleStatus = Field(description="pass, fail, skipped (not applicable) or disabled.")
    violations: int = Field(description="Violations reported.")
    reason: str = Field(default="", description="Why the rule was skipped, if it was.")


class PolicyReport(BaseModel):
    """Every rule's outcome and every violation, for one fabric."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fabric: str = Field(description="Cluster name.")
    rules: tuple[RuleResult, ...] = Field(description="Per-rule outcome, registry order.")
    violations: tuple[Violation, ...] = Field(description="All violations, by rule then resource.")
    counts: dict[str, int] = Field(description="Violations by level: mandatory, advisory.")

    @property
    def blocking(self) -> bool:
        """True when a mandatory rule is violated (``fabric-stack check`` exits 1)."""
        return self.counts.get("mandatory", 0) > 0

    @property
    def status(self) -> str:
        """'fail' (mandatory violations), 'warn' (advisory only) or 'pass'."""
        if self.blocking:
            return "fail"
        return "warn" if self.violations else "pass"
