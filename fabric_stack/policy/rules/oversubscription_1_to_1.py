"""``oversubscription-1-to-1``.

Non-blocking compute fabric: leaf (and three-tier spine) uplink vs downlink capacity, and bisection.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field, field_validator

from fabric_stack.errors import FabricStackError
from fabric_stack.intent.model import FabricIntent
from fabric_stack.policy._common import (
    SpecOnce,
    cfg_or_default,
    is_compute_switch,
    level_of,
    plural,
    ratio_text,
)
from fabric_stack.policy.models import RuleConfig, Violation
from fabric_stack.policy.rule import EVERY_FABRIC, Rule
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.spec.model import parse_ratio
from fabric_stack.text.numbers import fmt_num

RULE_ID = "oversubscription-1-to-1"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


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


class _Growth:
    """What the fabric would need at the allowed ratio: the sizing rule, run once, lazily."""

    def __init__(self, intent: FabricIntent, spec: SpecOnce, allowed: str) -> None:
        self.intent = intent
        self.spec = spec
        self.allowed = allowed
        self._done = False
        self.plan: SizingPlan | None = None
        self.error = ""

    def _size(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            spec = self.spec.get()
            self.plan = size_fabric(spec.model_copy(update={"oversubscription": self.allowed}))
        except (FabricStackError, ValueError) as exc:
            self.error = str(exc)

    def more(self, role: str) -> int:
        """Extra switches of ``role`` the allowed ratio needs (0 when unknown or fewer)."""
        self._size()
        if self.plan is None:
            return 0
        have = self.intent.summary.switches.get(role, 0)
        want = {"spine": self.plan.switches.spine, "core": self.plan.switches.core}[role]
        return max(0, want - have)

    def paren(self, roles: tuple[str, ...]) -> str:
        """' (1 more spine)', ' (499 more spines, 176 more cores)' or ''."""
        parts = [plural(n, f"more {r}") for r in roles if (n := self.more(r))]
        return f" ({', '.join(parts)})" if parts else ""

    def advice(self, role: str, roles: tuple[str, ...]) -> str:
        """The message's short form of :meth:`fix`, from the same re-sized plan: a leaf
        cannot take more uplinks than its ports leave, so the advice is the new split
        (``re-size at 1:1: 32 down / 32 up per 64-port leaf (1 more spine)``)."""
        self._size()
        if self.plan is None:
            return f"re-size at {self.allowed} (it does not size as it is)"
        p = self.plan
        split = f": {p.leaf_down} down / {p.leaf_up} up per {p.radix}-port leaf"
        return f"re-size at {self.allowed}{split if role == 'leaf' else ''}{self.paren(roles)}"

    def fix(self) -> str:
        """Spec-level fix: re-size at the allowed ratio, with what that costs."""
        self._size()
        ratio = self.allowed
        if self.plan is None:
            return f'set oversubscription: "{ratio}" (does not size as it is: {self.error})'
        p = self.plan
        have = self.intent.summary.switches
        text = (
            f'set oversubscription: "{ratio}": each {p.radix}-port leaf then splits '
            f"{p.leaf_down} down / {p.leaf_up} up, and the fabric needs {p.switches.spine} "
            f"spines (now {have.get('spine', 0)})"
        )
        if p.switches.core or have.get("core", 0):
            text += f" and {p.switches.core} cores (now {have.get('core', 0)})"
        return text


def check_oversubscription(
    intent: FabricIntent, config: OversubscriptionConfig | None = None
) -> Iterator[Violation]:
    """Leaves (and three-tier spines) need uplink ≥ downlink capacity / ratio; bisection too.

    Downlink capacity is what the plan budgets (``ports_down_budget``) or what is
    cabled, whichever is larger: a partial SU is judged as the full SU it is built
    to become. Two-tier spines have no uplinks by design and are not judged.
    """
    cfg = cfg_or_default(config, OversubscriptionConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    a, b = parse_ratio(cfg.max_ratio)
    allowed = f"{a}:{b}"
    s = intent.summary
    spec = SpecOnce(intent)
    growth = _Growth(intent, spec, allowed)
    rid = RULE_ID
    for sw in intent.switches:
        if not is_compute_switch(sw):
            continue
        if not (sw.role == "leaf" or (sw.role == "spine" and s.tiers >= 3)):
            continue
        down = max(sw.ports_down, sw.ports_down_budget)
        up = sw.ports_up
        # Capacities, not port counts: an 800G uplink over 400G downlinks counts double.
        g, gu = sw.port_gbps, sw.uplink_gbps
        if down * g * b <= up * gu * a:
            continue
        need_up = -(-down * g * b // (a * gu))
        add = need_up - up
        measured = f"{down}×{g}G down, {up}×{gu}G up ({ratio_text(down * g, up * gu)})"
        above = ("spine", "core") if sw.role == "leaf" else ("core",)
        spec_ratio = parse_ratio(s.oversubscription)
        within = spec_ratio[0] * b <= spec_ratio[1] * a
        # One source for the message's advice and the fix line: the cables the plan
        # budgets when the spec is within the ratio, else the plan re-sized at it.
        if within:
            advice = f"add {plural(add, 'uplink')} per {sw.role}"
            fix = f"cable {add} more uplinks on {sw.name} (the plan budgets {sw.ports_up_budget})"
        else:
            advice, fix = growth.advice(sw.role, above), growth.fix()
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Switch",
            resource=sw.name,
            measured=measured,
            allowed=f"{allowed} (≥ {need_up}×{gu}G up)",
            message=f"{sw.name}: {measured}; {allowed} required — {advice}",
            fix=fix,
        )

    sp = spec.get()
    per_gpu = sp.nic_gbps * sp.rails // sp.gpus_per_node
    required = s.gpus * per_gpu * b / a / 1000
    if s.bisection_tbps + 1e-9 < required:
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Fabric",
            resource=s.name,
            measured=f"{fmt_num(s.bisection_tbps)} Tb/s bisection",
            allowed=f"≥ {fmt_num(required)} Tb/s",
            message=(
                f"{s.name}: bisection {fmt_num(s.bisection_tbps)} Tb/s, {fmt_num(required)} Tb/s "
                f"required ({s.gpus:,} GPUs × {per_gpu}G at {allowed}) — "
                f"{growth.advice('leaf', ('spine', 'core'))}"
            ),
            fix=growth.fix(),
        )


RULE = Rule(
    id=RULE_ID,
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
    applies=EVERY_FABRIC,
    check_cross=check_oversubscription,
    reads=("Fabric", "Switch"),
    config_field="oversubscription",
    config_description="Leaf/spine uplink vs downlink capacity and bisection.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
