"""Running the rules: :func:`evaluate` judges an intent with every registered rule.

``fabric-stack check`` and the CrossGuard pack (``policies/``) call the same rule
functions, so a design fails the same way with or without the Pulumi engine. Every
rule is O(records) with dict lookups: a 32,768-GPU intent (~115k cables) is judged in
well under a second.
"""

from __future__ import annotations

from fabric_stack.intent.model import FabricIntent
from fabric_stack.policy.models import PolicyReport, RuleResult, Violation
from fabric_stack.policy.registry import RULES, PolicyConfig


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
