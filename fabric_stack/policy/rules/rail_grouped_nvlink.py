"""``rail-grouped-nvlink``: rail-grouped spines only with servers whose GPUs share NVLink.

With ``spine_grouping: rail`` each rail has its own spine group: no network path joins
two rails, so traffic between a rail-*a* GPU and a rail-*b* GPU must first cross NVLink
inside a server (NCCL's PXN) — the design NVIDIA's DGX B300 SuperPOD RA is read as
(:data:`~fabric_stack.sizing.rail_groups.B300_SUPERPOD_RA`). A server without NVLink
(or with one GPU) cannot do that: such a fabric splits every job into per-rail islands.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric_stack.hardware.nvlink import NVLINK_BY_PROFILE
from fabric_stack.intent.model import FabricIntent
from fabric_stack.policy._common import cfg_or_default, level_of
from fabric_stack.policy.models import RuleConfig, Violation
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "rail-grouped-nvlink"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class RailGroupedNvlinkConfig(RuleConfig):
    """Settings of ``rail-grouped-nvlink`` (level only)."""


def lacks_nvlink(profile_name: str, gpus_per_node: int) -> str:
    """Why a server cannot carry cross-rail traffic over NVLink, or '' when it can."""
    if gpus_per_node < 2:
        return "one GPU per server (no NVLink peer to forward through)"
    if profile_name not in NVLINK_BY_PROFILE:
        return f"server profile {profile_name!r} has no NVLink (no published NVLink figure)"
    return ""


def check_rail_grouped_nvlink(
    intent: FabricIntent, config: RailGroupedNvlinkConfig | None = None
) -> Iterator[Violation]:
    """A rail-grouped fabric whose servers lack NVLink: cross-rail traffic has no path."""
    cfg = cfg_or_default(config, RailGroupedNvlinkConfig)
    lvl = level_of(cfg, "mandatory")
    s = intent.summary
    if lvl is None or s.spec.get("spine_grouping", "full") != "rail":
        return
    prof = s.spec.get("node_profile") or {}
    name = prof.get("name", "") if isinstance(prof, dict) else str(prof)
    why = lacks_nvlink(name, int(s.spec.get("gpus_per_node", 8)))
    if not why:
        return
    yield Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Fabric",
        resource=s.name,
        measured=f"spine_grouping: rail; {why}",
        allowed="rail-grouped spines with NVLink servers (cross-rail traffic via PXN)",
        message=(
            f"{s.name}: rail-grouped spines join no two rails, so cross-rail traffic must go "
            f"over NVLink inside a server (PXN), but {why} — use spine_grouping: full or an "
            "NVLink server profile"
        ),
        fix="set spine_grouping: full (or node_profile: an NVLink server such as dgx-h100)",
    )


RULE = Rule(
    id=RULE_ID,
    title="Rail-grouped spines need NVLink",
    description=(
        "A fabric with rail-grouped spines (spine_grouping: rail) has servers whose GPUs "
        "share NVLink: cross-rail traffic goes through NVLink/PXN, never the network."
    ),
    default_level="mandatory",
    remediation="Use spine_grouping: full, or servers with NVLink.",
    config_model=RailGroupedNvlinkConfig,
    applies=EVERY_FABRIC,
    check_cross=check_rail_grouped_nvlink,
    reads=("Fabric",),
    config_field="rail_grouped_nvlink",
    config_description="Rail-grouped spines only with NVLink servers.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
