"""The rule registry: every policy rule in report order, and what derives from the list.

:data:`RULES` is built from the rule modules of :mod:`fabric_stack.policy.rules` (one per
rule, named after its id). From it derive the ``--policy-config`` model
(:class:`PolicyConfig`: one field per rule, aliased by the rule id), :func:`rule_ids`, and
the CrossGuard pack's policy list (``policies/fabric_policies.py``), ``check --help`` and
the docs' rule table (:func:`fabric_stack.views.registry_tables.rules_table`), so adding a
rule is one new module plus one line here.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from fabric_stack.policy.models import ConfigLevel, RuleConfig
from fabric_stack.policy.rule import Rule
from fabric_stack.policy.rules import (
    gpudirect_pcie_locality,
    ib_subnet_manager_redundancy,
    link_speed_match,
    network_separation,
    oversubscription_1_to_1,
    port_budget,
    rail_alignment,
    rail_grouped_nvlink,
    roce_host_consistency,
    roce_lossless_consistency,
    underlay_consistency,
)

RULE_MODULES: tuple[ModuleType, ...] = (
    oversubscription_1_to_1,
    gpudirect_pcie_locality,
    network_separation,
    rail_alignment,
    port_budget,
    link_speed_match,
    roce_lossless_consistency,
    roce_host_consistency,
    ib_subnet_manager_redundancy,
    underlay_consistency,
    rail_grouped_nvlink,
)
"""One module per rule, in report order."""

RULES: dict[str, Rule] = {m.RULE.id: m.RULE for m in RULE_MODULES}
"""Every rule by id, in report order."""


class PolicyConfigBase(BaseModel):
    """The part of the policy config every rule shares: ``all``, and lookup by rule id."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    all: ConfigLevel | None = Field(
        default=None, description="Level for every rule without an enforcementLevel of its own."
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


def _config_fields() -> dict[str, Any]:
    return {
        r.config_field: (
            r.config_model,
            Field(
                default_factory=r.config_model,
                alias=r.id,
                description=r.config_description,
            ),
        )
        for r in RULES.values()
    }


_POLICY_CONFIG_DOC = (
    "Per-rule levels and thresholds: the ``--policy-config`` file, keyed by rule id.\n\n"
    "``all`` sets the level of every rule that does not set its own (as in CrossGuard)."
)

if TYPE_CHECKING:
    PolicyConfig = PolicyConfigBase
else:
    PolicyConfig = create_model(
        "PolicyConfig",
        __base__=PolicyConfigBase,
        __doc__=_POLICY_CONFIG_DOC,
        __module__=__name__,
        **_config_fields(),
    )
    """Per-rule levels and thresholds (derived from :data:`RULES`)."""


def rule_ids() -> list[str]:
    """Rule ids :class:`PolicyConfig` accepts, in registry order."""
    return [str(f.alias) for n, f in PolicyConfig.model_fields.items() if n != "all"]


def policy_config_schema() -> dict[str, Any]:
    """JSON schema of the ``--policy-config`` file, generated from :class:`PolicyConfig`."""
    return PolicyConfig.model_json_schema(by_alias=True)
