"""Policy as code: pure rules over a FabricIntent, shared by ``fabric-stack check`` and CrossGuard.

No Pulumi import anywhere in this package: the pack in ``policies/`` adapts these
functions to ``StackValidationPolicy`` / ``ResourceValidationPolicy``. One module per
rule in :mod:`.rules`, listed in :mod:`.registry`; :func:`evaluate` runs them all.

    >>> from fabric_stack import validate_spec, size_fabric, build_topology, derive_intent
    >>> from fabric_stack.policy import evaluate
    >>> intent = derive_intent(build_topology(size_fabric(validate_spec({}))))
    >>> evaluate(intent).status
    'pass'
"""

from __future__ import annotations

from fabric_stack.policy._common import parse_leaf_name
from fabric_stack.policy.config import load_policy_config, policy_config_from_data
from fabric_stack.policy.evaluate import evaluate
from fabric_stack.policy.models import Level, PolicyReport, RuleConfig, RuleResult, Violation
from fabric_stack.policy.registry import RULES, PolicyConfig, policy_config_schema, rule_ids
from fabric_stack.policy.rule import Rule, records_of
from fabric_stack.policy.rules.gpudirect_pcie_locality import check_pcie_locality
from fabric_stack.policy.rules.ib_subnet_manager_redundancy import check_ib_subnet_managers
from fabric_stack.policy.rules.link_speed_match import check_link_speed
from fabric_stack.policy.rules.network_separation import check_network_separation
from fabric_stack.policy.rules.oversubscription_1_to_1 import check_oversubscription
from fabric_stack.policy.rules.port_budget import check_port_budget
from fabric_stack.policy.rules.rail_alignment import check_rail_alignment
from fabric_stack.policy.rules.rail_grouped_nvlink import check_rail_grouped_nvlink
from fabric_stack.policy.rules.roce_host_consistency import check_roce_host
from fabric_stack.policy.rules.roce_lossless_consistency import check_roce_lossless

__all__ = [
    "RULES",
    "Level",
    "PolicyConfig",
    "PolicyReport",
    "Rule",
    "RuleConfig",
    "RuleResult",
    "Violation",
    "check_ib_subnet_managers",
    "check_link_speed",
    "check_network_separation",
    "check_oversubscription",
    "check_pcie_locality",
    "check_port_budget",
    "check_rail_alignment",
    "check_rail_grouped_nvlink",
    "check_roce_host",
    "check_roce_lossless",
    "evaluate",
    "load_policy_config",
    "parse_leaf_name",
    "policy_config_from_data",
    "policy_config_schema",
    "records_of",
    "rule_ids",
]
