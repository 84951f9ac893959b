"""Result records of `fabric-stack whatif` (:mod:`fabric_stack.analysis.whatif` computes them).

Frozen pydantic models: the JSON the CLI prints is their dump, so the field
names here are the stable keys (``failed``, ``bisection_tbps``, ``isolated``,
``ecmp``, ``capacity_lost_pct``, ``n_minus_1``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

FailureKind = Literal["fail", "drain"]
"""fail: broken; drain: taken out of service on purpose (same effect on capacity)."""


class Failure(BaseModel):
    """One thing taken out: a device, or one cable named by a ``DEVICE:PORT`` end."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device: str = Field(description="Device name, e.g. 'spine-01' or 'su1-node03'.")
    port: str = Field(default="", description="Port of the device; empty = the whole device.")
    kind: FailureKind = Field(default="fail", description="fail or drain.")

    @property
    def target(self) -> str:
        """``DEVICE`` or ``DEVICE:PORT``."""
        return f"{self.device}:{self.port}" if self.port else self.device


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FailedItem(_Frozen):
    """One failure as applied."""

    target: str = Field(description="DEVICE or DEVICE:PORT.")
    kind: FailureKind = Field(description="fail or drain.")
    role: str = Field(description="Device role (leaf, spine, core, server) or cable role.")
    cables: int = Field(description="Compute cables this takes out.")


class BeforeAfter(_Frozen):
    """A figure healthy and after the failures."""

    before: float = Field(description="Healthy.")
    after: float = Field(description="After the failures.")


class Isolated(_Frozen):
    """What lost its connection to the fabric."""

    gpus: int = Field(description="GPUs with no live NIC cable in any plane.")
    servers: int = Field(description="Servers with no live NIC cable at all.")
    by_rail: dict[str, int] = Field(description="Isolated GPUs per rail ('1'..).")
    by_plane: dict[str, int] = Field(description="GPUs cut off from each plane ('1'..).")
    rails_without_leaf: list[str] = Field(description="(SU, rail, plane) whose leaf is out.")
    leaves_cut_off: list[str] = Field(description="Live leaves with no live uplink left.")


class EcmpPair(_Frozen):
    """An SU pair whose same-rail leaves lost ECMP width."""

    su_a: int = Field(description="First SU.")
    su_b: int = Field(description="Second SU.")
    rail: int = Field(description="Rail.")
    plane: int = Field(description="Plane.")
    width: int = Field(description="Live first-hop uplinks with a path between them.")


class Ecmp(_Frozen):
    """First-hop ECMP width between every two leaves of one rail and plane: in different SUs,
    and with several leaves per rail (#43) also two leaves of the same SU."""

    healthy: int = Field(description="Width on the healthy fabric (a leaf's uplinks).")
    min: int | None = Field(description="Narrowest pair after the failures (null: no pair).")
    median: float | None = Field(description="Median over all pairs (null: no pair).")
    pairs: int = Field(
        description="Leaf pairs counted: two leaves of the same rail and plane, in different "
        "SUs or (several leaves per rail) in the same SU."
    )
    degraded_pairs: int = Field(description="Pairs narrower than healthy.")
    worst: list[EcmpPair] = Field(description="Up to 10 narrowest SU pairs.")


class CapacityLost(_Frozen):
    """Share of each tier's cables out of service, percent."""

    node_leaf: float = Field(description="Server-to-leaf cables, %.")
    leaf_spine: float = Field(description="Leaf-to-spine cables, %.")
    spine_core: float = Field(description="Spine-to-core cables, % (0 in two tiers).")


class NMinus1Row(_Frozen):
    """One single failure and what it does, for the ranked N−1 table."""

    rank: int = Field(description="1 = worst.")
    target: str = Field(description="The device or cable (DEVICE:PORT) that fails.")
    role: str = Field(description="Device role or cable role.")
    equivalent: int = Field(description="Failures of the same class this row stands for.")
    bisection_tbps: float = Field(description="Bisection after this failure, Tb/s.")
    bisection_lost_pct: float = Field(description="Bisection lost, % of healthy.")
    isolated_gpus: int = Field(description="GPUs isolated.")
    ecmp_min: int | None = Field(description="Narrowest ECMP width.")
    capacity_lost_pct: CapacityLost = Field(description="Cables out per tier.")


class WhatIfResult(_Frozen):
    """Everything `fabric-stack whatif` reports."""

    name: str = Field(description="Cluster name.")
    gpus: int = Field(description="GPUs in the cluster.")
    failed: list[FailedItem] = Field(description="The failures applied.")
    bisection_tbps: BeforeAfter = Field(description="Full-duplex bisection, Tb/s.")
    isolated: Isolated = Field(description="GPUs, servers and rails cut off.")
    ecmp: Ecmp = Field(description="ECMP width per SU pair.")
    capacity_lost_pct: CapacityLost = Field(description="Cables out per tier, %.")
    n_minus_1: list[NMinus1Row] = Field(description="Ranked single failures (when asked).")
    n_minus_1_scope: str = Field(default="", description="switch, link or all; '' = not run.")
    traffic: str = Field(
        default="",
        description=(
            "What the spine grouping means for traffic, when the spines are rail-grouped "
            "('' for a full grouping, which the JSON then leaves out)."
        ),
    )

    @model_serializer(mode="wrap")
    def _omit_full_grouping(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A fully grouped fabric's result dumps as before (docs, goldens).
        data = handler(self)
        if isinstance(data, dict) and not self.traffic:
            data.pop("traffic", None)
        return data


__all__ = [
    "BeforeAfter",
    "CapacityLost",
    "Ecmp",
    "EcmpPair",
    "FailedItem",
    "Failure",
    "FailureKind",
    "Isolated",
    "NMinus1Row",
    "WhatIfResult",
]
