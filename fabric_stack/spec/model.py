"""FabricSpec: the cluster intent a user writes once (YAML, flags or Pulumi config).

Defaults are the seed card's cluster: 128 GPUs in 8-GPU servers, 400 Gb/s NICs
on 8 rails, InfiniBand on NVIDIA Quantum-2 QM9700 (64 × NDR), non-blocking.

:func:`validate_spec` is the only way in from untyped data: it turns pydantic's
error list into one :class:`~fabric_stack.errors.SpecError` line that names the
field and what would be valid.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from fabric_stack.errors import SpecError
from fabric_stack.hardware.nodes import NodeProfile, check_nic_speed, check_plane_ports
from fabric_stack.hardware.server_profiles import PROFILES, default_profile
from fabric_stack.hardware.switches import FabricKind
from fabric_stack.naming.site import NamingTemplates, SiteNames
from fabric_stack.spec.growth import SpineGrouping, check_build_out
from fabric_stack.spec.layout import LayoutSettings
from fabric_stack.spec.networks import Networks, check_networks
from fabric_stack.spec.sections import InfinibandSettings, RoceQos
from fabric_stack.spec.underlay import UnderlaySettings, pool_overlaps

_RATIO = re.compile(r"^\s*(\d{1,9})\s*(?::\s*(\d{1,9})\s*)?$")

MAX_PLANES = 4
"""Most planes a NIC's line rate is split over (ConnectX-8 800G as 4 × 200G, Spectrum-X
multiplane; see :mod:`fabric_stack.sizing.tiers` for the source)."""

NIC_LANES = 8
"""SerDes lanes of a NIC's OSFP port (8 × 100G on an 800G ConnectX-8): a plane takes a whole
number of them, so the planes must divide it (1, 2 or 4)."""

TIER_SWITCH_KEYS = ("leaf_switch", "spine_switch", "core_switch")
"""Spec keys naming one tier's switch model (each defaults to ``switch``)."""

MAX_GPUS = 262_144
"""Largest cluster one machine plans: bench/ measures 131,072 GPUs at 10 s and 0.9 GB, so
this bound keeps a run under a minute and ~2 GB; it is checked before any sizing work."""

_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")

INT_FIELDS = (
    "gpus",
    "gpus_per_node",
    "nic_gbps",
    "rails",
    "su_nodes",
    "planes",
    "uplink_gbps",
    "build_out_gpus",
)
"""Integer spec fields that may arrive as strings (Pulumi stack config always does)."""

_INT_TEXT = re.compile(r"^\s*[+-]?\d{1,40}\s*$")


def coerce_ints(data: dict[str, Any]) -> dict[str, Any]:
    """Integer fields given as text (``rails: '0'``) read as the CLI reads ``--rails 0``."""
    for key in INT_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and _INT_TEXT.match(value):
            data[key] = int(value)
    return data


def parse_ratio(text: str) -> tuple[int, int]:
    """Parse ``"A:B"`` (or ``"A"``, meaning ``A:1``) into a reduced (down, up) pair, A ≥ B ≥ 1."""
    m = _RATIO.match(str(text))
    if not m:
        raise ValueError(f"{str(text)[:40]!r} is not a ratio like '1:1', '2:1' or '3:1'")
    a, b = int(m.group(1)), int(m.group(2) or 1)
    if a < 1 or b < 1:
        raise ValueError(f"{text!r}: both sides must be ≥ 1, e.g. '1:1' or '2:1'")
    if a < b:
        raise ValueError(
            f"{text!r} has more uplink than downlink; use '1:1' (non-blocking) or A:B with A ≥ B"
        )
    g = math.gcd(a, b)
    return a // g, b // g


class FabricSpec(BaseModel):
    """What the architect asks for. Every other stage is derived from this."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(
        default="gpu-cluster",
        description=(
            "Cluster name used in reports, file names and Kubernetes object names: "
            "1-40 lowercase letters, digits and '-', starting and ending with a letter or digit."
        ),
    )
    gpus: int = Field(
        default=128,
        ge=1,
        le=MAX_GPUS,
        description=f"Total GPUs in the cluster (at most {MAX_GPUS:,}: what one machine plans).",
    )
    gpus_per_node: int = Field(default=8, ge=1, le=64, description="GPUs in one server.")
    nic_gbps: int = Field(
        default=400,
        ge=1,
        le=3200,
        description="Line rate of each GPU's RDMA NIC, Gb/s (split evenly across the planes).",
    )
    rails: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Compute NICs (rails) per server; 0 or unset: one per GPU (= gpus_per_node).",
    )
    fabric: FabricKind = Field(
        default="infiniband",
        description="Compute fabric: 'infiniband', 'roce' (RoCEv2) or 'ethernet'.",
    )
    switch: str = Field(
        default="qm9700",
        description="Leaf, spine and core switch model (catalog key or generic-<radix>x<speed>).",
    )
    leaf_switch: str | None = Field(default=None, description="Leaf switch model; unset: `switch`.")
    spine_switch: str | None = Field(
        default=None, description="Spine switch model; unset: `switch`."
    )
    core_switch: str | None = Field(default=None, description="Core switch model; unset: `switch`.")
    uplink_gbps: int | None = Field(
        default=None,
        ge=1,
        le=3200,
        description="Leaf-to-spine and spine-to-core link speed, Gb/s; unset: the host link "
        "speed (NIC line rate / planes).",
    )
    oversubscription: str = Field(
        default="1:1",
        description="Leaf downlink:uplink capacity ratio; '1:1' is non-blocking.",
    )
    su_nodes: int = Field(
        default=0,
        ge=0,
        le=MAX_GPUS,
        description="Servers per scalable unit; 0 or unset means the leaf's downlink port count.",
    )
    planes: int = Field(
        default=1,
        ge=1,
        le=MAX_PLANES,
        description=f"Independent fabric planes (1-{MAX_PLANES}); the NIC line rate is split "
        "evenly over them.",
    )
    spine_grouping: SpineGrouping = Field(
        default="full",
        description=(
            "'full': every leaf reaches every spine of its pod; 'rail': each rail (per plane) "
            "has its own spine group, cross-rail traffic only through NVLink/PXN, no core "
            "while a rail fits in two tiers."
        ),
    )
    build_out_gpus: int = Field(
        default=0,
        ge=0,
        le=MAX_GPUS,
        description=(
            "Final size of a build-out (0 or unset: none): this phase is cabled as the final "
            "fabric places those cables, so growing up to it only adds switches and cables."
        ),
    )
    node_profile: NodeProfile = Field(
        default_factory=lambda: PROFILES["hgx-8gpu"],
        description=(
            "Server model: a built-in name (" + ", ".join(PROFILES) + ") or a full profile; "
            "unset: hgx-8gpu (hgx-8gpu-cx8 above 400G) for 8 GPUs and 8 rails, else generic."
        ),
    )
    networks: Networks = Field(default_factory=Networks, description="Separate-networks plan.")
    roce: RoceQos = Field(default_factory=RoceQos, description="RoCEv2 lossless settings.")
    underlay: UnderlaySettings = Field(
        default_factory=UnderlaySettings,
        description="Routed underlay of a RoCE/Ethernet fabric: pools, ASNs, addressing.",
    )
    infiniband: InfinibandSettings = Field(
        default_factory=InfinibandSettings, description="InfiniBand control-plane settings."
    )
    naming: NamingTemplates = Field(
        default_factory=NamingTemplates,
        description="The site's naming templates per role (server: 'dgx{index:04d}', …).",
    )
    names: SiteNames = Field(
        default_factory=SiteNames,
        description=(
            "The site's names per planned device: a names file (CSV planned,actual"
            "[,rack,u,serial,guid,mac]) given as --names, 'names:' or fabric:names."
        ),
    )
    layout: LayoutSettings = Field(
        default_factory=LayoutSettings,
        description="The data hall: rows of racks, tray routing, slack, rack budgets, labels.",
    )

    @model_serializer(mode="wrap")
    def _omit_default_names(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A plan without site names dumps as before (records, goldens, stack state).
        data = handler(self)
        if isinstance(data, dict):
            if not self.naming.any():
                data.pop("naming", None)
            if not self.names.rows:
                data.pop("names", None)
            # Likewise a plan on the default data hall (SuperPOD-style layout).
            if self.layout == LayoutSettings():
                data.pop("layout", None)
            # Per-tier keys appear only when set, so a plan without them dumps as before.
            for key in (*TIER_SWITCH_KEYS, "uplink_gbps"):
                if data.get(key) is None:
                    data.pop(key, None)
            # And a plan without the #43 shape keys (today's fat tree, no build-out).
            if self.spine_grouping == "full":
                data.pop("spine_grouping", None)
            if not self.build_out_gpus:
                data.pop("build_out_gpus", None)
        return data

    @field_validator("name")
    @classmethod
    def _k8s_name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(
                f"{v[:60]!r} is not usable in Kubernetes and file names (1-40 lowercase "
                "letters, digits and '-', starting and ending with a letter or digit, "
                "e.g. 'gpu-cluster')"
            )
        return v

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = coerce_ints(dict(data))
        prof = data.get("node_profile")
        if isinstance(prof, str):
            key = prof.strip().lower()
            if key not in PROFILES:
                raise ValueError(
                    f"node_profile: unknown profile {prof!r} (built-in: {', '.join(PROFILES)}; "
                    "or give a full profile with pcie_switches)"
                )
            data["node_profile"] = prof = PROFILES[key]
            # A named server says how many GPUs it has: gpus_per_node defaults to it.
            data.setdefault("gpus_per_node", prof.gpus)
        gpn = data.get("gpus_per_node", 8)
        if not data.get("rails"):
            data["rails"] = gpn
        if prof is None:
            try:
                gpn_i, rails_i = int(gpn), int(data["rails"])
                gbps = int(data.get("nic_gbps", 400))
            except (TypeError, ValueError):
                return data  # field validation reports the bad value
            if 1 <= gpn_i <= 64 and 1 <= rails_i <= 64:  # bounds first: the profile scales
                data["node_profile"] = default_profile(gpn_i, rails_i, gbps)
        return data

    @field_validator("switch", mode="before")
    @classmethod
    def _norm_switch(cls, v: Any) -> str:
        return str(v).strip().lower()

    @field_validator(*TIER_SWITCH_KEYS, mode="before")
    @classmethod
    def _norm_tier_switch(cls, v: Any) -> str | None:
        return None if v is None or str(v).strip() == "" else str(v).strip().lower()

    @field_validator("oversubscription", mode="before")
    @classmethod
    def _norm_ratio(cls, v: Any) -> str:
        a, b = parse_ratio(str(v))
        return f"{a}:{b}"

    @model_validator(mode="after")
    def _cross_checks(self) -> FabricSpec:
        others = {"networks.compute.subnet": self.networks.compute.subnet} | {
            f"networks.{k}.subnet": v.subnet for k, v in self.networks.access().items()
        }
        overlap = pool_overlaps(self.underlay, others)
        if overlap:
            raise ValueError(overlap)
        if self.gpus % self.gpus_per_node:
            below = self.gpus - self.gpus % self.gpus_per_node
            above = below + self.gpus_per_node
            tries = f"{below} or {above}" if below else f"{above}"
            raise ValueError(
                f"gpus: {self.gpus} is not a multiple of gpus_per_node {self.gpus_per_node} "
                f"(try {tries})"
            )
        if self.rails < 1 or self.rails > self.gpus_per_node or self.gpus_per_node % self.rails:
            raise ValueError(
                f"rails: {self.rails} rails cannot serve {self.gpus_per_node} GPUs per node "
                f"(rails must divide gpus_per_node, e.g. {self.gpus_per_node})"
            )
        build_out = check_build_out(self.gpus, self.gpus_per_node, self.build_out_gpus)
        if build_out:
            raise ValueError(build_out)
        if self.nic_gbps % self.planes:
            even = [p for p in range(1, MAX_PLANES + 1) if self.nic_gbps % p == 0]
            raise ValueError(
                f"planes: {self.nic_gbps} Gb/s NICs do not split evenly over {self.planes} "
                f"planes (use planes {', '.join(map(str, even))}, or a NIC rate divisible "
                f"by {self.planes})"
            )
        if NIC_LANES % self.planes:
            fits = [p for p in range(1, MAX_PLANES + 1) if NIC_LANES % p == 0]
            raise ValueError(
                f"planes: {self.planes} planes cannot split a NIC's {NIC_LANES} SerDes lanes "
                f"(its ports) evenly (use planes {', '.join(map(str, fits))})"
            )
        prof = self.node_profile
        if prof.gpus != self.gpus_per_node:
            raise ValueError(
                f"node_profile: profile {prof.name!r} has {prof.gpus} GPUs but gpus_per_node is "
                f"{self.gpus_per_node}"
            )
        if prof.rdma_nics > self.rails:
            raise ValueError(
                f"node_profile: profile {prof.name!r} has {prof.rdma_nics} RDMA NICs, "
                f"more than the {self.rails} rails "
                f"(set rails: {prof.rdma_nics} or remove NICs from the profile)"
            )
        if prof.rdma_nics < self.rails:
            raise ValueError(
                f"node_profile: profile {prof.name!r} has {prof.rdma_nics} RDMA NICs for "
                f"{self.rails} rails (one NIC per rail is needed)"
            )
        check_plane_ports(prof, self.planes)
        for net_name, net in self.networks.access().items():
            hosts = max(0, net.subnet.num_addresses - 2)
            if hosts < self.nodes:
                raise ValueError(
                    f"networks.{net_name}.subnet: {net.subnet} has {hosts} host address(es) "
                    f"for {self.nodes} servers (use a prefix of at most "
                    f"/{_prefix_for(self.nodes)})"
                )
        vlans = self.networks.compute.rail_vlans
        if vlans is not None and len(vlans) != self.rails:
            raise ValueError(
                f"networks.compute.rail_vlans: {len(vlans)} VLANs for {self.rails} rails "
                "(give one per rail)"
            )
        return self

    @property
    def ratio(self) -> tuple[int, int]:
        """Oversubscription as a reduced (downlink, uplink) pair: (1, 1) is non-blocking."""
        return parse_ratio(self.oversubscription)

    @property
    def nodes(self) -> int:
        """Servers in the cluster."""
        return self.gpus // self.gpus_per_node

    @property
    def link_gbps(self) -> int:
        """Speed of one NIC-to-leaf link: the NIC line rate split over the planes."""
        return self.nic_gbps // self.planes

    @property
    def uplink_speed(self) -> int:
        """Speed of a leaf-spine and spine-core link: ``uplink_gbps``, else the host link's."""
        return self.uplink_gbps or self.link_gbps

    @property
    def per_tier(self) -> bool:
        """True when the spec sets a per-tier key (a tier's switch or ``uplink_gbps``)."""
        return self.uplink_gbps is not None or any(
            getattr(self, k) is not None for k in TIER_SWITCH_KEYS
        )

    def tier_switch(self, role: str) -> str:
        """The switch model key of tier ``role`` (leaf, spine or core): its key or ``switch``."""
        return getattr(self, f"{role}_switch", None) or self.switch

    def rail_vlan(self, rail: int) -> int:
        """VLAN id of rail ``rail`` (1-based) on Ethernet fabrics."""
        for net_name, net in self.networks.access().items():
            hosts = max(0, net.subnet.num_addresses - 2)
            if hosts < self.nodes:
                raise ValueError(
                    f"networks.{net_name}.subnet: {net.subnet} has {hosts} host address(es) "
                    f"for {self.nodes} servers (use a prefix of at most "
                    f"/{_prefix_for(self.nodes)})"
                )
        vlans = self.networks.compute.rail_vlans
        return vlans[rail - 1] if vlans is not None else 100 + rail


def _prefix_for(hosts: int) -> int:
    """Longest IPv4 prefix whose subnet holds ``hosts`` host addresses."""
    return 32 - max(2, (hosts + 1).bit_length())


SPEC_FIELDS: tuple[str, ...] = tuple(FabricSpec.model_fields)
"""Top-level keys a spec file may use."""


def _loc_text(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or part.startswith("function-"):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _first_error(exc: ValidationError, prefix: str = "") -> SpecError:
    err = exc.errors(include_url=False)[0]
    loc = _loc_text(tuple(err["loc"]))
    msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    typ = err["type"]
    if typ == "extra_forbidden":
        parent, _, key = loc.rpartition(".")
        valid = _valid_keys(parent)
        field = (prefix + "." + loc if prefix else loc) if loc else prefix or "spec"
        return SpecError(field, f"unknown key {key!r}", f"valid keys: {', '.join(valid)}")
    # Validators that check several fields name the field themselves ("gpus: …").
    m = re.match(r"^([a-z_][\w.\[\]]*): (.*)$", msg, re.S)
    if m and not loc:
        field, msg = m.group(1), m.group(2)
    elif m:
        field, msg = f"{loc}.{m.group(1)}", m.group(2)
    else:
        field = loc or "spec"
        if typ == "literal_error" and "expected" in err.get("ctx", {}):
            return SpecError(
                _join(prefix, field),
                f"{err.get('input')!r} is not allowed",
                f"expected {err['ctx']['expected']}",
            )
        accepts = _valid_values(err)
        if accepts is not None:
            if typ.startswith(("greater_than", "less_than")):
                msg = f"{err.get('input')!r} is out of range"
            return SpecError(_join(prefix, field), msg, accepts)
    return SpecError(_join(prefix, field), msg)


_RANGE_TYPES = ("greater_than", "less_than", "int_parsing", "int_type", "int_from_float")


def _valid_values(err: Any) -> str | None:
    """What a plain typed field accepts (``an integer 1-64``), from its model constraints."""
    typ = str(err["type"])
    if typ.startswith(("bool_",)):
        return "true or false"
    if typ == "string_type":
        return "text"
    if not typ.startswith(_RANGE_TYPES):
        return None
    model: type[BaseModel] = FabricSpec
    info = None
    for part in [p for p in err["loc"] if isinstance(p, str)]:
        info = model.model_fields.get(part)
        ann = getattr(info, "annotation", None)
        if info is None:
            return "an integer"
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
    low = next((m.ge for m in getattr(info, "metadata", []) if hasattr(m, "ge")), None)
    high = next((m.le for m in getattr(info, "metadata", []) if hasattr(m, "le")), None)
    if low is not None and high is not None:
        return f"an integer {low}-{high}"
    if low is not None:
        return f"an integer ≥ {low}"
    return "an integer"


def _join(prefix: str, field: str) -> str:
    return f"{prefix}.{field}" if prefix else field


def _valid_keys(parent: str) -> list[str]:
    model: type[BaseModel] = FabricSpec
    for part in [p for p in re.split(r"[.\[\]]+", parent) if p and not p.isdigit()]:
        field = model.model_fields.get(part)
        ann = getattr(field, "annotation", None) if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            # pcie_switches is a tuple of models: walk into the item type.
            args = getattr(ann, "__args__", ())
            inner = next(
                (a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None
            )
            if inner is None:
                return sorted(model.model_fields)
            ann = inner
        model = ann
    return list(model.model_fields)


def validate_spec(data: Mapping[str, Any] | None = None, **overrides: Any) -> FabricSpec:
    """Build a :class:`FabricSpec` from plain data (YAML, flags, Pulumi config).

    ``overrides`` (e.g. from CLI flags) win over ``data``; ``None`` values are
    ignored so unset flags do not erase file values. Raises :class:`SpecError` for a
    field error, and for a spec no topology can be built from (an attach chain, an
    unknown access-switch model, a compute subnet too small for the rails).
    """
    merged: dict[str, Any] = dict(data or {})
    merged.update({k: v for k, v in overrides.items() if v is not None})
    try:
        spec = FabricSpec.model_validate(merged)
    except ValidationError as exc:
        raise _first_error(exc) from None
    # Rules that span the networks, the node profile and the catalog: checked here so that
    # every command (size included) refuses such a spec with the line the build would print.
    check_nic_speed(spec.node_profile, spec.nic_gbps)
    check_networks(spec.networks, spec.node_profile, spec.rails * spec.planes)
    return spec
