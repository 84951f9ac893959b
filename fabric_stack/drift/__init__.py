"""Drift: compare the plan with what the inventory and the fabric report.

Readers (:mod:`.readers`) turn a source into a :class:`Snapshot`; identity
resolution (:mod:`.identity`) maps its names onto the plan's;
:func:`compute_drift` matches links by identity, compares attributes of the
matched pairs and classifies the rest into findings with fixes.
"""

from __future__ import annotations

from fabric_stack.drift.coverage import NETWORKS, Coverage, CoverageReport
from fabric_stack.drift.engine import combine, compute_drift
from fabric_stack.drift.ignore import IgnoreRules, load_ignore, parse_ignore
from fabric_stack.drift.model import (
    KINDS,
    DeviceSeen,
    DriftReport,
    Endpoint,
    Finding,
    ObservedLink,
    PortState,
    Side,
    Snapshot,
)
from fabric_stack.drift.plan import PlanIndex, PortScheme

__all__ = [
    "KINDS",
    "NETWORKS",
    "Coverage",
    "CoverageReport",
    "DeviceSeen",
    "DriftReport",
    "Endpoint",
    "Finding",
    "IgnoreRules",
    "ObservedLink",
    "PlanIndex",
    "PortScheme",
    "PortState",
    "Side",
    "Snapshot",
    "combine",
    "compute_drift",
    "load_ignore",
    "parse_ignore",
]
