"""Drift: compare the plan with what the inventory and the fabric report.

Readers (:mod:`.readers`) turn a source into a :class:`Snapshot`; identity
resolution (:mod:`.identity`) maps its names onto the plan's;
:func:`compute_drift` matches links by identity, compares attributes of the
matched pairs and classifies the rest into findings with fixes.
"""

from __future__ import annotations

from .coverage import NETWORKS, Coverage, CoverageReport
from .engine import combine, compute_drift
from .ignore import IgnoreRules, load_ignore, parse_ignore
from .model import (
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
from .plan import PlanIndex, PortScheme

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
