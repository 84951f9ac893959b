"""The subnet-manager instances of a plan and their ``opensm-<sm>.conf`` (``render infiniband``).

Every plane is its own InfiniBand subnet, so every plane gets its own master and
standby: one SM instance per (manager, plane), bound to that plane's HCA port
with ``guid`` (the port GUID OpenSM runs on: upstream ``osm_subnet.c`` opt_tbl
``"guid"``). Switch-hosted SMs are the switches the plan flags, per plane.

Where the files go depends on the kind of manager:

* ``ufm`` — UFM owns its OpenSM files under ``/opt/ufm/files/conf/opensm/``
  (opensm.conf, ib-node-name-map, partitions.conf) and regenerates
  ``partitions.conf`` itself: custom partitions go in
  ``/opt/ufm/files/conf/partitions.conf.user_ext`` (:data:`sources.UFM_SM_FILES`,
  :data:`sources.UFM_PARTITIONS`).
* ``opensm-host`` / ``switch`` — ``/etc/opensm/``.

NVIDIA-only keys (``ar_*`` engines, ``sharp_enabled``, ``virt_enabled``) are
rendered only for NVIDIA OpenSM (UFM, switches, ``infiniband.opensm: nvidia``);
:func:`fabric_stack.spec.model.validate_spec` refuses them for upstream OpenSM.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import GENERATED_BY, RenderContext, comment_block
from fabric_stack.topology.build import MANAGER_ROLE

TARGET = "infiniband"

MASTER_PRIORITY = 15
"""Highest OpenSM sm_priority (range 0-15): the master; standbys count down from 14."""

SHARP_ROUTING_ENGINES = ("updn", "ar_updn", "ftree", "ar_ftree")
"""Routing engines NVIDIA's SHARP guide supports for tree topologies."""

UFM_CONF_DIR = "/opt/ufm/files/conf"
"""UFM's configuration directory (UFM Enterprise manual, 'SM Default Files')."""

CONF_DIRS = {"ufm": f"{UFM_CONF_DIR}/opensm", "opensm-host": "/etc/opensm", "switch": "/etc/opensm"}
"""Directory of the SM's own files (node-name map, partitions, root GUIDs) per kind."""


@dataclass(frozen=True)
class SmInstance:
    """One subnet manager: which host or switch, which plane, which port, which rank."""

    name: str
    """File stem: ``ufm-1`` (one plane), ``ufm-1-p2`` (plane 2), or the switch name."""
    host: str
    """Manager host or switch running it."""
    plane: int
    port: str
    """HCA device it binds to (``mlx5_1``); '' on a switch (its port 0)."""
    index: int
    """0 for the plane's master, 1… for its standbys."""
    count: int
    """Subnet managers in this plane."""

    @property
    def guid_name(self) -> str:
        """The name a ``--guids`` file and the node-name map use for its port."""
        return f"{self.host} {self.port}" if self.port else self.host

    @property
    def priority(self) -> int:
        """sm_priority: 15 for the master, counting down for the standbys."""
        return max(0, MASTER_PRIORITY - self.index)


def sm_instances(ctx: RenderContext) -> list[SmInstance]:
    """Every SM instance, plane by plane, master first (see the module docstring)."""
    planes = ctx.plan.planes
    out: list[SmInstance] = []
    for p in range(1, planes + 1):
        if ctx.spec.infiniband.sm_location == "switch":
            pairs = [(s.name, "") for s in ctx.intent.switches if s.subnet_manager and s.plane == p]
        else:
            seen: dict[str, str] = {}
            for link in ctx.topo.links_of(MANAGER_ROLE):
                if link.plane == p:
                    seen.setdefault(link.a_device, link.a_port)
            pairs = list(seen.items())
        for i, (host, port) in enumerate(pairs):
            name = host if not port or planes == 1 else f"{host}-p{p}"
            out.append(SmInstance(name, host, p, port, i, len(pairs)))
    return out


def uses_ib_vfs(ctx: RenderContext) -> bool:
    """True when the ``kubernetes`` target hands pods InfiniBand SR-IOV VFs.

    Only the SR-IOV path (``render --k8s-rdma sriov``, the default: ``ib-sriov``
    networks on VFs of every rail PF) does; the Network Operator paths
    (``host-device``: whole PFs, ``ipoib``: the shared RDMA device plugin) use no VF.
    """
    return ctx.fabric == "infiniband" and ctx.k8s_rdma == "sriov"


def opensm_conf(ctx: RenderContext, sm: SmInstance) -> str:
    """opensm.conf of one SM: core settings, binding, files, roots, SHARP, virtualization."""
    ib = ctx.spec.infiniband
    role = "master" if sm.index == 0 else "standby"
    where = {
        "ufm": f"UFM: merge into {CONF_DIRS['ufm']}/opensm.conf (or set through UFM)",
        "opensm-host": "a host running opensm: merge into /etc/opensm/opensm.conf",
        "switch": "a managed switch's embedded SM: apply the same values in its SM configuration",
    }[ib.sm_location]
    on_plane = f" of plane {sm.plane}" if ctx.plan.planes > 1 else ""
    build = "NVIDIA (UFM / MLNX_OFED / DOCA)" if _nvidia(ctx) else "upstream linux-rdma/opensm"
    head = comment_block(
        [
            f"OpenSM settings for subnet manager {sm.name} ({role}{on_plane}, {sm.index + 1} "
            f"of {sm.count}) — {ctx.spec.name}",
            GENERATED_BY.format(target=TARGET),
            f"Target: {where}.",
            f"OpenSM build: {build}.",
            "Only the settings the plan decides are here; the rest keeps OpenSM's default.",
            f"Parameter names: {sources.OPENSM_OPTIONS} (opt_tbl)",
        ]
    )
    parts = [head, _binding(ctx, sm), _routing(ctx), _lmc(), _priority(sm), *_files(ctx)]
    parts += _roots(ctx)
    parts += [_sharp(ctx), _virt(ctx)]
    return "".join(parts)


def _binding(ctx: RenderContext, sm: SmInstance) -> str:
    if not sm.port:
        return "\n" + comment_block(
            [
                f"Runs on {sm.host}'s management port (port 0): no guid binding needed.",
            ]
        )
    lines = [
        f"Port binding: this SM runs on {sm.host} port {sm.port}, its plane-{sm.plane} HCA",
        "port. `guid` is that port's GUID (ibstat -p on the host): each plane's SM must",
        "bind its own plane's port or it sweeps the wrong subnet.",
    ]
    guid = ctx.guids.get(sm.guid_name)
    if guid:
        return "\n" + comment_block(lines) + f"guid {guid}\n"
    lines.append(f"Fill in the GUID of '{sm.guid_name}' (or render with --guids) and uncomment:")
    return "\n" + comment_block(lines) + "# guid 0x________________\n"


def _routing(ctx: RenderContext) -> str:
    ib = ctx.spec.infiniband
    return (
        "\n"
        + comment_block(
            [
                f"Routing: '{ib.routing_engine}' from spec.infiniband.routing_engine.",
                "Fat-tree aware engines (ftree, updn and their adaptive-routing variants) keep",
                "a rail-optimized leaf/spine fabric deadlock-free and spread flows evenly",
                "over the spines. The ar_* engines are NVIDIA OpenSM only.",
                f"Source: {sources.OPENSM_ROUTING}",
            ]
        )
        + f"routing_engine {ib.routing_engine}\n"
    )


def _lmc() -> str:
    return (
        "\n"
        + comment_block(
            [
                "One LID per port (LMC 0): rail-optimized traffic needs no multipath LIDs, and",
                "LMC > 0 multiplies the LID space the SM must program.",
            ]
        )
        + "lmc 0\n"
    )


def _priority(sm: SmInstance) -> str:
    return (
        "\n"
        + comment_block(
            [
                f"Redundancy: {sm.count} subnet manager(s) in this subnet; the highest",
                "sm_priority (0-15) becomes master, the others stay standby and take over",
                "when the master stops answering SMInfo polls.",
                f"This instance: {'master' if sm.index == 0 else 'standby'}.",
            ]
        )
        + f"sm_priority {sm.priority}\n"
    )


def _files(ctx: RenderContext) -> list[str]:
    ib = ctx.spec.infiniband
    conf = CONF_DIRS[ib.sm_location]
    pkey = ctx.spec.networks.compute.pkey
    if ib.sm_location == "ufm":
        part = [
            f"Partitions (compute P_Key {pkey}, IPoIB MTU {ib.mtu}): UFM generates",
            f"{conf}/partitions.conf itself and must not be edited by hand; the compute",
            f"partition goes in {UFM_CONF_DIR}/partitions.conf.user_ext (see that file),",
            "which UFM merges into it.",
            f"Source: {sources.UFM_PARTITIONS}",
        ]
    else:
        part = [
            f"Partitions (compute P_Key {pkey}, IPoIB MTU {ib.mtu}): see partitions.conf.",
            f"Source: {sources.OPENSM_PARTITIONS}",
        ]
    return [
        "\n" + comment_block(part) + f"partition_config_file {conf}/partitions.conf\n",
        "\n"
        + comment_block(
            ["Plan names in the SM's logs and dumps (fill in the GUIDs in ib-node-name-map)."]
            + ([f"Source: {sources.UFM_SM_FILES}"] if ib.sm_location == "ufm" else [])
        )
        + f"node_name_map_name {conf}/ib-node-name-map\n",
    ]


def _roots(ctx: RenderContext) -> list[str]:
    """ftree engines: the root GUID file (commented out until the GUIDs are known)."""
    ib = ctx.spec.infiniband
    if ib.routing_engine not in ("ftree", "ar_ftree"):
        return []
    roots = root_names(ctx)
    path = f"{CONF_DIRS[ib.sm_location]}/root-guids.conf"
    comment = [
        f"Fat-tree roots: the {'core' if ctx.plan.tiers == 3 else 'spine'} switches. ftree",
        "detects them from the topology; pinning them avoids a wrong guess while the",
        "fabric is half cabled.",
    ]
    if roots and all(r in ctx.guids for r in roots):
        return ["\n" + comment_block(comment) + f"root_guid_file {path}\n"]
    comment.append("Enable once the root GUIDs are known (render with --guids):")
    return ["\n" + comment_block(comment) + f"# root_guid_file {path}\n"]


def root_names(ctx: RenderContext) -> list[str]:
    """The fat-tree roots: the top tier's switches."""
    top = "core" if ctx.plan.tiers == 3 else "spine"
    return [s.name for s in ctx.compute_switches() if s.role == top]


def _nvidia(ctx: RenderContext) -> bool:
    ib = ctx.spec.infiniband
    return ib.sm_location != "opensm-host" or ib.opensm == "nvidia"


def _sharp(ctx: RenderContext) -> str:
    """SHARP on or off (NVIDIA OpenSM only), with the routing-engine warning."""
    ib = ctx.spec.infiniband
    if not _nvidia(ctx):
        return "\n" + comment_block(
            ["SHARP: upstream OpenSM has no sharp_enabled option; SHARP needs NVIDIA OpenSM."]
        )
    lines = [
        "SHARP in-network reduction (spec.infiniband.sharp). `sharp_enabled` is an NVIDIA OpenSM",
        "(MLNX_OFED/UFM) option: 0 ignore, 1 disable on all switches, 2 enable on all switches.",
        "The SHARP Aggregation Manager runs next to the master SM (UFM starts it itself).",
        f"Source: {sources.SHARP_OPENSM}",
        f"Source: {sources.SHARP_SETUP}",
    ]
    if ib.sharp:
        if ib.routing_engine not in SHARP_ROUTING_ENGINES:
            lines.append(
                f"WARNING: SHARP trees need one of {', '.join(SHARP_ROUTING_ENGINES)}; "
                f"routing_engine is {ib.routing_engine}."
            )
        return "\n" + comment_block(lines) + "sharp_enabled 2\n"
    return "\n" + comment_block([*lines, "SHARP is off in the plan: the option is left unset."])


def _virt(ctx: RenderContext) -> str:
    """SM virtualization when Kubernetes pods get InfiniBand VFs (NVIDIA OpenSM key)."""
    if not uses_ib_vfs(ctx):
        return ""
    why = [
        "Virtualization: the kubernetes target gives pods SR-IOV VFs on every rail, and an",
        "IB VF is a virtual port the SM must manage (vport GUIDs, LIDs, P_Keys).",
        "`virt_enabled` (0 ignore, 1 disable, 2 enable on ports that support it) is an",
        "NVIDIA OpenSM option. UNVERIFIED: we could not confirm the key in source — it is",
        f"absent from upstream osm_subnet.c ({sources.OPENSM_OPTIONS} at commit fa74b98c)",
        "and NVIDIA's OpenSM source is not public; check `opensm -c` output of your build.",
    ]
    if not _nvidia(ctx):
        why.append("WARNING: upstream OpenSM has no such option: VFs may stay DOWN without it.")
        return "\n" + comment_block(why)
    return "\n" + comment_block(why) + "virt_enabled 2\n"
