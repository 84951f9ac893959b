"""Typed inputs and outputs of the policy rules: configs, violations, the report.

Each rule's config model (a :class:`RuleConfig`, in the rule's own module) doubles as
the CrossGuard ``config_schema`` of its policy and, assembled into
:class:`~fabric_stack.policy.registry.PolicyConfig`, as the schema of the file
``fabric-stack check --policy-config`` reads. That file has the same shape as
Pulumi's ``--policy-pack-config`` JSON (rule id → ``{enforcementLevel, ...}``
or a bare level), so one file serves both.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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
