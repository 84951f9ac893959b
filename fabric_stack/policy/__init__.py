"""Policy as code: pure rules over a FabricIntent, shared by ``fabric-stack check`` and CrossGuard.

No Pulumi import anywhere in this package: the pack in ``policies/`` adapts these
functions to ``StackValidationPolicy`` / ``ResourceValidationPolicy``.

    >>> from fabric_stack import validate_spec, size_fabric, build_topology, derive_intent
    >>> from fabric_stack.policy import evaluate
    >>> intent = derive_intent(build_topology(size_fabric(validate_spec({}))))
    >>> evaluate(intent).status
    'pass'
"""

from __future__ import annotations

from ._common import parse_leaf_name
from .capacity import check_oversubscription
from .config import load_policy_config, policy_config_from_data
from .locality import check_pcie_locality
from .lossless import check_ib_subnet_managers, check_roce_lossless
from .models import (
    Level,
    PolicyConfig,
    PolicyReport,
    RuleConfig,
    RuleResult,
    Violation,
    policy_config_schema,
    rule_ids,
)
from .rules import (
    RULES,
    Rule,
    check_link_speed,
    check_port_budget,
    check_rail_alignment,
    evaluate,
    records_of,
)
from .separation import check_network_separation

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
    "check_roce_lossless",
    "evaluate",
    "load_policy_config",
    "parse_leaf_name",
    "policy_config_from_data",
    "policy_config_schema",
    "records_of",
    "rule_ids",
]
