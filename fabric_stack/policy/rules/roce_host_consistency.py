"""``roce-host-consistency``.

RoCEv2 end to end: the switches, the servers' rail NICs, the RDMA-CM ToS and ``NCCL_IB_TC``
agree on the lossless priority, DSCP trust, ECN and the DSCP RoCE is marked with.

This file holds the whole rule: its config model, its check (with the violation messages
and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry. Each side is read from
the function that decides it for its renderer: the switch intents (``render cumulus``,
``render sonic``, ``render roce-qos``), :func:`~fabric_stack.intent.nic_qos.build_nic_qos`
(``render hosts``, ``render kubernetes``) and :func:`~fabric_stack.intent.nic_qos.nccl_ib_tc`
(``render nccl``, the pods' environment).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabric_stack.intent.model import FabricIntent, SwitchIntent
from fabric_stack.intent.nic_qos import NicQos, build_nic_qos, nccl_ib_tc
from fabric_stack.policy._common import cfg_or_default, is_compute_switch, level_of, some
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import Rule, on_fabrics

RULE_ID = "roce-host-consistency"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class RoceHostConfig(RuleConfig):
    """Settings of ``roce-host-consistency`` (only the level)."""


APPLIES = on_fabrics("roce", otherwise="the compute fabric is {fabric}, not RoCEv2")
"""RoCEv2 only: the other fabrics have no DSCP/PFC host side."""


def _violation(lvl: ViolationLevel, resource: str, what: str, fix: str) -> Violation:
    """A fabric-wide disagreement between two sides."""
    return Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Fabric",
        resource=resource,
        measured=what,
        allowed="hosts, switches, ToS and NCCL_IB_TC agree",
        message=f"{resource}: {what} — {fix}",
        fix=fix,
    )


def _switch_side(hops: list[SwitchIntent]) -> tuple[tuple[int, ...], bool, bool]:
    """What most compute hops run: (PFC priorities, DSCP trust, ECN)."""
    pfc = Counter(tuple(sw.pfc_priorities) for sw in hops).most_common(1)[0][0]
    trust = Counter(sw.dscp_trust for sw in hops).most_common(1)[0][0]
    ecn = Counter(sw.ecn for sw in hops).most_common(1)[0][0]
    return pfc, trust, ecn


def check_roce_host(
    intent: FabricIntent, config: RoceHostConfig | None = None
) -> Iterator[Violation]:
    """RoCEv2: the rail NICs' PFC, trust and ECN equal the switches'; the RDMA-CM ToS carries
    the DSCP the switches map to the lossless priority; ``NCCL_IB_TC`` equals that ToS."""
    cfg = cfg_or_default(config, RoceHostConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or APPLIES(intent):
        return
    hops = [sw for sw in intent.switches if is_compute_switch(sw)]
    if not hops:
        return
    spec = intent.spec
    host = build_nic_qos(spec)
    name = intent.summary.name
    overrides = {str(k): v for k, v in spec.roce.overrides.items()}
    yield from _host_vs_switches(lvl, name, host, hops, overrides)
    if host.tos >> 2 != spec.roce.roce_dscp:
        yield _violation(
            lvl,
            name,
            f"RDMA-CM ToS {host.tos} marks DSCP {host.tos >> 2}, the switches map DSCP "
            f"{spec.roce.roce_dscp} to priority {spec.roce.roce_priority}",
            f"set roce.tos: {spec.roce.roce_dscp << 2} (or leave it out)",
        )
    tc = nccl_ib_tc(spec)
    if tc != host.tos:
        yield _violation(
            lvl,
            name,
            f"NCCL_IB_TC {tc}, RDMA-CM ToS {host.tos}",
            "NCCL and the NICs must mark the same ToS (roce_dscp << 2)",
        )


def _fix(overrides: dict[str, dict[str, object]], key: str, why: str) -> str:
    """The spec change that makes both sides agree on ``key``: drop the override(s) that set it
    apart (the host's first: the switches' own agreement is roce-lossless-consistency's)."""
    roles = [r for r in ("host", "leaf", "spine", "core") if key in overrides.get(r, {})]
    if not roles:
        return f"{why}: set roce.{key} once for both sides"
    return f"{why}: remove " + ", ".join(f"roce.overrides.{r}.{key}" for r in roles)


def _host_vs_switches(
    lvl: ViolationLevel,
    name: str,
    host: NicQos,
    hops: list[SwitchIntent],
    overrides: dict[str, dict[str, object]],
) -> Iterator[Violation]:
    """The NICs' PFC, trust and ECN against what the compute hops run."""
    pfc, trust, ecn = _switch_side(hops)
    if host.pfc_priorities != pfc:
        odd = [sw.name for sw in hops if tuple(sw.pfc_priorities) != host.pfc_priorities]
        yield _violation(
            lvl,
            name,
            f"host NICs PFC on {_prios(host.pfc_priorities)}, switches on {_prios(pfc)} "
            f"({some(odd)} differ)",
            _fix(overrides, "pfc_priorities", "one PFC priority on both sides"),
        )
    if (host.trust == "dscp") != trust:
        yield _violation(
            lvl,
            name,
            f"host NICs trust {host.trust}, switches DSCP trust {'on' if trust else 'off'}",
            _fix(overrides, "dscp_trust", "DSCP trust on both sides"),
        )
    if host.ecn != ecn:
        yield _violation(
            lvl,
            name,
            f"host NICs DCQCN {'on' if host.ecn else 'off'}, switches ECN {'on' if ecn else 'off'}",
            _fix(overrides, "ecn", "ECN marking needs DCQCN on the NICs to act on it"),
        )


def _prios(prios: tuple[int, ...]) -> str:
    return "priority " + ", ".join(map(str, prios)) if prios else "no priority"


RULE = Rule(
    id=RULE_ID,
    title="RoCE host-switch consistency",
    description=(
        "RoCEv2 only: the servers' rail NICs run the switches' PFC priority, DSCP trust and "
        "ECN, their RDMA-CM ToS carries the DSCP the switches make lossless, and NCCL_IB_TC "
        "equals that ToS."
    ),
    default_level="mandatory",
    remediation="Drop roce.overrides.host and roce.tos: one roce spec sets both sides.",
    config_model=RoceHostConfig,
    applies=APPLIES,
    check_cross=check_roce_host,
    reads=("Fabric", "Switch"),
    config_field="roce_host",
    config_description="Host NICs, switches, RDMA-CM ToS and NCCL_IB_TC agree.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
