"""``gpudirect-pcie-locality``.

GPUDirect RDMA locality: each NIC on the PCIe switch and NUMA node of the GPUs it serves.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import Field

from fabric_stack.intent.model import FabricIntent, RdmaNicIntent
from fabric_stack.policy._common import cfg_or_default, level_of
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "gpudirect-pcie-locality"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class PcieLocalityConfig(RuleConfig):
    """Settings of ``gpudirect-pcie-locality``."""

    require_same_numa: bool = Field(
        default=True,
        description="Also require the NIC and its GPU on one NUMA node (not only one PCIe switch).",
    )


def check_pcie_locality(
    intent: FabricIntent, config: PcieLocalityConfig | None = None
) -> Iterator[Violation]:
    """Every RDMA NIC on the PCIe switch (and NUMA node) of each GPU it serves;
    every GPU of a node served by exactly one NIC per plane.

    :func:`_pair_nics` indexes the NICs, then :func:`_misplaced_nics` and
    :func:`_gpus_without_one_nic` report.
    """
    cfg = cfg_or_default(config, PcieLocalityConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or _all_paired(intent, cfg):
        return
    pairs = _pair_nics(intent, cfg)
    yield from _misplaced_nics(pairs, lvl)
    yield from _gpus_without_one_nic(intent, pairs.served, lvl)


@dataclass
class _Pairs:
    near: dict[tuple[str, int, str], str] = field(default_factory=dict)
    """First NIC per (node, plane, PCIe switch): a fix can name a NIC next to the GPU."""
    served: dict[tuple[str, int], dict[int, list[RdmaNicIntent]]] = field(default_factory=dict)
    """Per (node, plane): the NICs serving each GPU."""
    bad: list[tuple[RdmaNicIntent, int, str, int]] = field(default_factory=list)
    """(NIC, GPU, the GPU's PCIe switch, its NUMA node) of every misplaced pairing."""


def _all_paired(intent: FabricIntent, cfg: PcieLocalityConfig) -> bool:
    """True when the rule has nothing to report: every NIC on its GPUs' PCIe switch (and NUMA
    node) and every GPU of a (node, plane) served once.

    The common case, decided with list counts in C and no per-GPU index (~500k NICs at
    131k GPUs with four planes, #43); anything unusual (lists of unequal length, a GPU
    outside the node's range) answers False and :func:`_pair_nics` judges it exactly.
    """
    want = list(range(spec_gpus_per_node(intent)))
    if not want:
        return False
    same_numa = cfg.require_same_numa
    served: dict[tuple[str, int], list[int]] = {}
    for nic in intent.nics:
        gpus, sws, numas = nic.gpus, nic.gpu_pcie_switches, nic.gpu_numas
        n = len(gpus)
        if len(sws) != n or len(numas) != n or sws.count(nic.pcie_switch) != n:
            return False
        if same_numa and numas.count(nic.numa) != n:
            return False
        key = (nic.node, nic.plane)
        got = served.get(key)
        if got is None:
            served[key] = list(gpus)
        else:
            got.extend(gpus)
    return all(sorted(g) == want for g in served.values())


def _pair_nics(intent: FabricIntent, cfg: PcieLocalityConfig) -> _Pairs:
    """Index NICs per (node, plane, PCIe switch) and collect who serves which GPU."""
    pairs = _Pairs()
    for nic in intent.nics:
        pairs.near.setdefault((nic.node, nic.plane, nic.pcie_switch), nic.nic)
        srv = pairs.served.setdefault((nic.node, nic.plane), {})
        for g, gsw, gnuma in zip(nic.gpus, nic.gpu_pcie_switches, nic.gpu_numas, strict=False):
            srv.setdefault(g, []).append(nic)
            if gsw != nic.pcie_switch or (cfg.require_same_numa and gnuma != nic.numa):
                pairs.bad.append((nic, g, gsw, gnuma))
    return pairs


def _misplaced_nics(pairs: _Pairs, lvl: ViolationLevel) -> Iterator[Violation]:
    """A NIC not on its GPU's PCIe switch (or NUMA node)."""
    rid, near, bad = RULE_ID, pairs.near, pairs.bad
    for nic, g, gsw, gnuma in bad:
        if gsw != nic.pcie_switch:
            numa = f" (NUMA {gnuma})" if gnuma != nic.numa else ""
            nnuma = f" (NUMA {nic.numa})" if gnuma != nic.numa else ""
            where = (
                f"GPU {g} is on PCIe switch {gsw}{numa} but its RDMA NIC {nic.nic} is on "
                f"{nic.pcie_switch}{nnuma}"
            )
        else:
            where = (
                f"GPU {g} is on NUMA node {gnuma} but its RDMA NIC {nic.nic} is on NUMA node "
                f"{nic.numa} (both under {gsw})"
            )
        cand = near.get((nic.node, nic.plane, gsw))
        alt = f" ({cand})" if cand and cand != nic.nic else ""
        yield Violation(
            rule=rid,
            level=lvl,
            kind="RdmaNic",
            resource=nic.name,
            measured=f"NIC {nic.pcie_switch} / NUMA {nic.numa}",
            allowed=f"{gsw} / NUMA {gnuma} (GPU {g}'s)",
            message=(
                f"{nic.node}: {where}; GPUDirect RDMA needs one PCIe switch and NUMA node — "
                f"move NIC {nic.nic} under {gsw} or re-pair GPU {g} with a NIC on {gsw}{alt}"
            ),
            fix=(
                f"in node_profile.pcie_switches put NIC {nic.rail - 1} under {gsw} with GPU {g} "
                f"(or use a server whose GPU {g} and NIC {nic.rail - 1} share a PCIe switch)"
            ),
        )


def _gpus_without_one_nic(
    intent: FabricIntent,
    served: dict[tuple[str, int], dict[int, list[RdmaNicIntent]]],
    lvl: ViolationLevel,
) -> Iterator[Violation]:
    """A GPU served by no NIC, or by more than one, on a plane."""
    rid = RULE_ID
    if not served:
        return
    gpus = spec_gpus_per_node(intent)
    planes = max((p for _, p in served), default=1)
    for (node, plane), srv in served.items():
        on_plane = f" on plane {plane}" if planes > 1 else ""
        first = next(iter(srv.values()))[0]
        for g in range(gpus):
            nics = srv.get(g, [])
            if len(nics) == 1:
                continue
            if not nics:
                yield Violation(
                    rule=rid,
                    level=lvl,
                    kind="RdmaNic",
                    resource=first.name,
                    measured="0 NICs",
                    allowed="exactly 1 NIC",
                    message=(
                        f"{node}: GPU {g} has no RDMA NIC{on_plane}; every GPU needs exactly one "
                        f"— pair GPU {g} with a NIC on its PCIe switch"
                    ),
                    fix="give every GPU one NIC in the node profile (rails = NICs per node)",
                )
            else:
                names = [n.nic for n in nics]
                yield Violation(
                    rule=rid,
                    level=lvl,
                    kind="RdmaNic",
                    resource=nics[1].name,
                    measured=f"{len(nics)} NICs ({', '.join(names)})",
                    allowed="exactly 1 NIC",
                    message=(
                        f"{node}: GPU {g} is served by {len(nics)} RDMA NICs{on_plane} "
                        f"({', '.join(names)}); exactly one per GPU required — keep "
                        f"{names[0]} for GPU {g} and re-pair the others"
                    ),
                    fix="each GPU maps to one NIC per plane; fix the NIC records' gpus lists",
                )


def spec_gpus_per_node(intent: FabricIntent) -> int:
    """GPUs per server as the intent's spec records it."""
    value = intent.summary.spec.get("gpus_per_node", 8)
    return int(value)


RULE = Rule(
    id=RULE_ID,
    title="GPUDirect RDMA PCIe locality",
    description=(
        "Every RDMA NIC shares a PCIe switch and NUMA node with each GPU it serves, and "
        "each GPU has exactly one serving NIC per plane."
    ),
    default_level="mandatory",
    remediation="Fix the node profile's pcie_switches map, or pair each GPU with the NIC "
    "under its own PCIe switch.",
    config_model=PcieLocalityConfig,
    applies=EVERY_FABRIC,
    check_cross=check_pcie_locality,
    reads=("Fabric", "RdmaNic"),
    config_field="pcie_locality",
    config_description="GPU and RDMA NIC on one PCIe switch and NUMA node.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
