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

from ._common import parse_leaf_name
from .config import load_policy_config, policy_config_from_data
from .evaluate import evaluate
from .models import Level, PolicyReport, RuleConfig, RuleResult, Violation
from .registry import RULES, PolicyConfig, policy_config_schema, rule_ids
from .rule import Rule, records_of
from .rules.gpudirect_pcie_locality import check_pcie_locality
from .rules.ib_subnet_manager_redundancy import check_ib_subnet_managers
from .rules.link_speed_match import check_link_speed
from .rules.network_separation import check_network_separation
from .rules.oversubscription_1_to_1 import check_oversubscription
from .rules.port_budget import check_port_budget
from .rules.rail_alignment import check_rail_alignment
from .rules.roce_lossless_consistency import check_roce_lossless

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
