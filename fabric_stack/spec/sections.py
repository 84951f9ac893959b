"""The spec's protocol sections: RoCE lossless QoS (``roce_qos``) and the InfiniBand control
plane (``infiniband``), each a frozen pydantic model :class:`~fabric_stack.spec.model.FabricSpec`
holds. Kept apart from ``spec.py`` so each file stays one screenful of concerns.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

SwitchRole = Literal["leaf", "spine", "core"]
"""Tiers of the compute fabric."""

RoceSide = Literal["leaf", "spine", "core", "host"]
"""Where a ``roce.overrides`` entry applies: a switch tier, or the servers' rail NICs."""

HOST_OVERRIDABLE = frozenset({"pfc_priorities", "ecn", "dscp_trust"})
"""What ``roce.overrides.host`` may change (the host MTU is ``networks.compute.mtu``)."""


class _RoceOverride(BaseModel):
    """The per-tier overridable RoCE settings, validated like the fields they override."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)

    # Defaults only make the fields optional; an override given as null is refused.
    pfc_priorities: tuple[int, ...] = ()
    ecn: bool = True
    dscp_trust: bool = True
    mtu: int = Field(default=9216, ge=1500, le=9216)

    @field_validator("pfc_priorities")
    @classmethod
    def _prios(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        for p in v:
            if not 0 <= p <= 7:
                raise ValueError(f"priority {p} is outside 0-7")
        return v


def _check_override(role: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One tier's overrides, type-checked (``mtu: big`` or PFC priority 99 is an error)."""
    try:
        checked = _RoceOverride.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        valid = {
            "mtu": "an integer 1500-9216",
            "pfc_priorities": "a list of priorities 0-7",
            "ecn": "true or false",
            "dscp_trust": "true or false",
        }.get(str(err["loc"][0]), "")
        raise ValueError(f"{role}.{key}: {msg} ({valid})") from None
    return {
        k: (list(v) if isinstance(v, tuple) else v)
        for k, v in checked.model_dump(exclude_unset=True).items()
    }


class RoceQos(BaseModel):
    """Lossless-Ethernet settings for RoCEv2, applied on every hop of the compute fabric.

    Defaults follow NVIDIA's RoCE lossless profile (Cumulus Linux ``qos roce``):
    PFC on priority 3, ECN on with 150 KB / 1,500 KB thresholds, DSCP trust,
    RoCE data on DSCP 26, CNPs on DSCP 48 (priority 6), jumbo MTU.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    pfc_priorities: tuple[int, ...] = Field(
        default=(3,), description="Priorities with PFC enabled; lossless RoCE uses exactly one."
    )
    ecn: bool = Field(default=True, description="ECN marking (DCQCN) enabled.")
    # At most 1 GiB: a switch's whole packet buffer is tens of MB, so a threshold above it
    # is a typo (and 10**39 KB would be rendered into every switch's configuration).
    ecn_min_kb: int = Field(default=150, ge=1, le=1 << 20, description="ECN minimum threshold, KB.")
    ecn_max_kb: int = Field(
        default=1500, ge=1, le=1 << 20, description="ECN maximum threshold, KB."
    )
    ecn_probability: int = Field(default=100, ge=1, le=100, description="Marking probability, %.")
    dscp_trust: bool = Field(default=True, description="Classify on the DSCP the host sets.")
    roce_dscp: int = Field(default=26, ge=0, le=63, description="DSCP of RoCE data traffic.")
    cnp_dscp: int = Field(default=48, ge=0, le=63, description="DSCP of congestion notifications.")
    cnp_priority: int = Field(default=6, ge=0, le=7, description="Priority CNPs are queued on.")
    lossless_pools: int = Field(
        default=1,
        ge=1,
        le=2,
        description=(
            "Lossless buffer pools the switches carve (NVIDIA's RoCE profile: one). Each PFC "
            "priority needs its own pool, so pfc_priorities may not list more."
        ),
    )
    tos: int | None = Field(
        default=None,
        ge=0,
        le=255,
        description=(
            "IP ToS byte of RoCE traffic (RDMA-CM default ToS, NCCL_IB_TC); must be "
            "roce_dscp << 2. Default: derived from roce_dscp."
        ),
    )
    mtu: int = Field(default=9216, ge=1500, le=9216, description="Switch port MTU, every hop.")
    overrides: dict[RoceSide, dict[str, Any]] = Field(
        default_factory=dict,
        description=(
            "Per-tier deviations, e.g. {spine: {mtu: 1500}}, or {host: {pfc_priorities: [4]}} "
            "for the servers' NICs: models a hop configured differently (the "
            "roce-lossless-consistency and roce-host-consistency policies flag it)."
        ),
    )

    @field_validator("pfc_priorities")
    @classmethod
    def _prios(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        for p in v:
            if not 0 <= p <= 7:
                raise ValueError(f"priority {p} is outside 0-7")
        return v

    @model_validator(mode="after")
    def _distinct_markings(self) -> RoceQos:
        if self.roce_dscp == self.cnp_dscp:
            raise ValueError(
                f"cnp_dscp: CNPs and RoCE data share DSCP {self.roce_dscp}; congestion "
                "notifications need their own marking (default 48)"
            )
        if self.cnp_priority in self.pfc_priorities:
            raise ValueError(
                f"cnp_priority: CNPs on priority {self.cnp_priority} would be paused by PFC; "
                "give them a priority without PFC (default 6)"
            )
        if len(self.pfc_priorities) > self.lossless_pools:
            shown = ", ".join(map(str, self.pfc_priorities))
            raise ValueError(
                f"pfc_priorities: {len(self.pfc_priorities)} priorities ({shown}) but "
                f"lossless_pools is {self.lossless_pools}; each PFC priority needs its own "
                "lossless pool (use one priority, e.g. [3], or raise lossless_pools)"
            )
        if self.tos is not None and self.tos != self.tos_byte:
            raise ValueError(
                f"tos: ToS {self.tos} carries DSCP {self.tos >> 2}, not roce_dscp "
                f"{self.roce_dscp}; ToS must be roce_dscp << 2 = {self.tos_byte} (or leave "
                "tos out)"
            )
        return self

    @property
    def tos_byte(self) -> int:
        """The IP ToS byte of RoCE data: DSCP in the upper six bits, the ECN bits 0 (the NIC
        sets ECT itself)."""
        return self.roce_dscp << 2

    @property
    def roce_priority(self) -> int:
        """The lossless priority RoCE data is mapped to: the first PFC priority (3 if none)."""
        return self.pfc_priorities[0] if self.pfc_priorities else 3

    @field_validator("overrides")
    @classmethod
    def _override_keys(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for role, fields in v.items():
            allowed = HOST_OVERRIDABLE if role == "host" else HOST_OVERRIDABLE | {"mtu"}
            bad = sorted(set(fields) - allowed)
            if bad:
                raise ValueError(
                    f"{role}: cannot override {bad[0]!r} (allowed: {', '.join(sorted(allowed))})"
                )
            out[role] = _check_override(role, fields)
        return out

    def for_role(self, role: str) -> dict[str, Any]:
        """The effective per-hop settings of a switch in ``role``."""
        base: dict[str, Any] = {
            "pfc_priorities": list(self.pfc_priorities),
            "ecn": self.ecn,
            "dscp_trust": self.dscp_trust,
            "mtu": self.mtu,
        }
        extra = self.overrides.get(role, {})  # type: ignore[call-overload]
        base.update({k: (list(v) if isinstance(v, list | tuple) else v) for k, v in extra.items()})
        return base


class InfinibandSettings(BaseModel):
    """InfiniBand control plane: fabric managers (cabled hosts unless on switches: the port
    rule is :mod:`fabric_stack.sizing.managers`; the ufm default keeps the seed card's figures,
    its SU has free downlinks), routing, SHARP."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subnet_managers: int = Field(
        default=2,
        ge=0,
        le=8,
        description="Subnet managers per plane (one master + standbys); ≥ 2 for HA.",
    )
    sm_location: Literal["ufm", "opensm-host", "switch"] = Field(
        default="ufm",
        description=(
            "Kind of fabric manager: 'ufm' (UFM appliances/hosts), 'opensm-host' (hosts "
            "running OpenSM; 'host' is accepted) or 'switch' (the switches' embedded SM)."
        ),
    )
    sm_attach: Literal["first-su", "last-su"] = Field(
        default="first-su",
        description=(
            "Scalable unit whose rail leaves take the managers' cables (manager i's port "
            "on the rail-i leaf, so master and standby land on different leaves). The "
            "first SU never changes when the cluster grows, so the managers stay cabled."
        ),
    )
    sm_links: int = Field(
        default=1,
        ge=1,
        le=4,
        description="Cables from each manager host into each plane (one HCA port each).",
    )
    opensm: Literal["nvidia", "upstream"] = Field(
        default="nvidia",
        description=(
            "OpenSM build: 'nvidia' (UFM / MLNX_OFED / DOCA OpenSM) or 'upstream' "
            "(linux-rdma/opensm, e.g. Debian's opensm; only with sm_location opensm-host)."
        ),
    )
    routing_engine: Literal["ftree", "updn", "ar_updn", "ar_ftree", "minhop"] = Field(
        default="ftree",
        description="OpenSM routing engine; fat-tree aware engines suit rail fabrics.",
    )
    sharp: bool = Field(
        default=False, description="SHARP in-network reduction (Aggregation Manager)."
    )
    mtu: int = Field(default=4096, description="IB MTU (256..4096).")

    @field_validator("sm_location", mode="before")
    @classmethod
    def _host_alias(cls, v: Any) -> Any:
        return "opensm-host" if v == "host" else v

    @model_validator(mode="after")
    def _nvidia_only(self) -> InfinibandSettings:
        # Upstream OpenSM's option table (osm_subnet.c) has no ar_* engines and no
        # sharp_enabled: it would fall back to minhop / ignore SHARP without an error.
        if self.opensm == "upstream":
            if self.sm_location != "opensm-host":
                raise ValueError(
                    f"opensm: 'upstream' runs only on hosts, not with sm_location "
                    f"{self.sm_location!r} (use opensm: nvidia, or sm_location: opensm-host)"
                )
            if self.routing_engine.startswith("ar_"):
                raise ValueError(
                    f"routing_engine: {self.routing_engine!r} is an NVIDIA OpenSM engine; "
                    "upstream OpenSM has ftree, updn or minhop (or set opensm: nvidia)"
                )
            if self.sharp:
                raise ValueError(
                    "sharp: sharp_enabled is an NVIDIA OpenSM option; upstream OpenSM has "
                    "no SHARP support (set sharp: false, or opensm: nvidia)"
                )
        return self
