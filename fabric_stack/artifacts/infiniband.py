"""`render infiniband`: subnet-manager settings, partitions, node-name-map and the planned `.topo`.

Files (under ``infiniband/``):

* ``opensm-<sm>.conf`` — one OpenSM configuration fragment per planned subnet
  manager: the routing engine from ``spec.infiniband.routing_engine``, a distinct
  ``sm_priority`` per instance (the first is the master: OpenSM elects the highest
  priority), LMC, the partition and node-name-map files, and SHARP
  (``sharp_enabled``) when ``spec.infiniband.sharp`` is on.
* ``partitions.conf`` — the compute partition (P_Key from the spec) with the IPoIB
  multicast group at the fabric's IB MTU.
* ``ib-node-name-map`` — ``<guid> "<name>"`` per switch and per HCA so
  ``ibnetdiscover``/``ibdiagnet`` print plan names. GUIDs are unknown at plan
  time: without ``--guids`` every entry is a commented placeholder to fill in.
* ``root-guids.conf`` — the fat-tree roots (top tier) for ``ftree``, only when
  their GUIDs are known.
* ``<cluster>.topo`` — the planned topology for ``ibdiagnet``, from
  :func:`fabric_stack.views.exports.topo_file` (the one `.topo` writer).

Parameter names are upstream OpenSM's option table (``osm_subnet.c``) except
``sharp_enabled``, an NVIDIA OpenSM (MLNX_OFED / UFM) extension.
"""

from __future__ import annotations

import re

from ..errors import InputFileError, SpecError
from ..inputs import csv_reader
from ..views.exports import topo_file  # the single .topo writer
from . import sources
from ._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    comment_block,
    safe_name,
)

TARGET = "infiniband"

IB_MTU_CODES: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
"""IBTA MTU encoding used by partitions.conf (``mtu=5`` is 4096)."""

SHARP_ROUTING_ENGINES = ("updn", "ar_updn", "ftree", "ar_ftree")
"""Routing engines NVIDIA's SHARP guide supports for tree topologies."""

MASTER_PRIORITY = 15
"""Highest OpenSM sm_priority (range 0-15): the master; standbys count down from 14."""

_GUID = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,16})$")


def require_infiniband(ctx: RenderContext) -> None:
    """Raise :class:`TargetMismatchError` unless the compute fabric is InfiniBand."""
    if ctx.fabric != "infiniband":
        raise TargetMismatchError(
            TARGET,
            f"the plan's fabric is {ctx.fabric}; subnet managers, partitions and .topo "
            "are InfiniBand only",
            "use `render roce-qos` / `render cumulus` for RoCEv2"
            if ctx.fabric == "roce"
            else "plan with `--fabric infiniband`",
        )


# --------------------------------------------------------------------------- GUID input


def normalize_guid(text: str) -> str | None:
    """``0x`` + 16 lower-case hex digits, or None when ``text`` is not a GUID."""
    m = _GUID.match(text.strip())
    return f"0x{int(m.group(1), 16):016x}" if m else None


def parse_guid_csv(text: str, source: str, known: set[str]) -> dict[str, str]:
    """Parse a ``name,guid`` CSV (header optional) into {plan name: GUID}.

    Names are switch names (``su1-r1-leaf``) or HCAs as ``su1-node01 mlx5_0``
    (``su1-node01:mlx5_0`` is accepted too). Errors name the file and line.
    """
    out: dict[str, str] = {}
    seen_guid: dict[str, str] = {}
    for lineno, row in enumerate(csv_reader(text, source), start=1):
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if lineno == 1 and cells[0].lower() == "name":
            continue
        if len(cells) != 2:
            raise InputFileError(
                source, f"expected 2 columns 'name,guid', got {len(cells)}", lineno
            )
        name = re.sub(r"[:\s]+", " ", cells[0])
        guid = normalize_guid(cells[1])
        if guid is None:
            raise InputFileError(
                source,
                f"{cells[1]!r} is not a GUID (expected 16 hex digits, e.g. 0x0002c90300a1b2c3)",
                lineno,
            )
        if name not in known:
            raise InputFileError(
                source,
                f"{cells[0]!r} is not in the plan (switch names like 'su1-r1-leaf', "
                "HCAs like 'su1-node01 mlx5_0')",
                lineno,
            )
        if name in out:
            raise InputFileError(source, f"{name!r} is listed twice", lineno)
        if guid in seen_guid:
            raise InputFileError(
                source, f"GUID {guid} is already given to {seen_guid[guid]!r}", lineno
            )
        out[name] = guid
        seen_guid[guid] = name
    return out


def guid_names(ctx: RenderContext) -> list[tuple[str, str]]:
    """(name, description) of every IB node the map covers: compute switches, then HCAs."""
    out = [
        (
            sw.name,
            f"{sw.model_name} {sw.role}"
            + (f", rail {sw.rail}" if sw.rail else "")
            + (f", SU {sw.su}" if sw.su else ""),
        )
        for sw in ctx.compute_switches()
    ]
    out += [
        (
            f"{n.node} {n.nic}",
            f"{ctx.spec.node_profile.nic_model} HCA, rail {n.rail}, {n.leaf} {n.leaf_port}",
        )
        for n in ctx.intent.nics
    ]
    return out


# --------------------------------------------------------------------------- renderers


def subnet_managers(ctx: RenderContext) -> list[str]:
    """Names of the planned SM instances, master first."""
    ib = ctx.spec.infiniband
    if ib.sm_location == "switch":
        return [s.name for s in ctx.intent.switches if s.subnet_manager]
    prefix = "ufm" if ib.sm_location == "ufm" else "sm-host"
    return [f"{prefix}-{i}" for i in range(1, ib.subnet_managers + 1)]


def _opensm_conf(ctx: RenderContext, sm: str, index: int, count: int) -> str:
    """opensm.conf of one subnet manager: the core settings, then the fat-tree roots
    (:func:`_opensm_roots`) and SHARP (:func:`_opensm_sharp`)."""
    ib = ctx.spec.infiniband
    role = "master" if index == 0 else "standby"
    prio = max(0, MASTER_PRIORITY - index)
    where = {
        "ufm": "UFM: merge into /opt/ufm/files/conf/opensm/opensm.conf (or set through UFM)",
        "host": "a host running opensm: merge into /etc/opensm/opensm.conf",
        "switch": "a managed switch's embedded SM: apply the same values in its SM configuration",
    }[ib.sm_location]
    lines = [
        comment_block(
            [
                f"OpenSM settings for subnet manager {sm} ({role}, {index + 1} of {count}) "
                f"— {ctx.spec.name}",
                GENERATED_BY.format(target=TARGET),
                f"Target: {where}.",
                "Only the settings the plan decides are here; the rest keeps OpenSM's default.",
                f"Parameter names: {sources.OPENSM_OPTIONS} (opt_tbl)",
            ]
        ),
        "\n"
        + comment_block(
            [
                f"Routing: '{ib.routing_engine}' from spec.infiniband.routing_engine.",
                "Fat-tree aware engines (ftree, updn and their adaptive-routing variants) keep",
                "a rail-optimized leaf/spine fabric deadlock-free and spread flows evenly",
                "over the spines.",
                f"Source: {sources.OPENSM_ROUTING}",
            ]
        )
        + f"routing_engine {ib.routing_engine}\n",
        "\n"
        + comment_block(
            [
                "One LID per port (LMC 0): rail-optimized traffic needs no multipath LIDs, and",
                "LMC > 0 multiplies the LID space the SM must program.",
            ]
        )
        + "lmc 0\n",
        "\n"
        + comment_block(
            [
                f"Redundancy: {count} subnet manager(s); the highest sm_priority (0-15)",
                "becomes master, the others stay standby and take over when the master",
                "stops answering SMInfo polls.",
                f"This instance: {role}.",
            ]
        )
        + f"sm_priority {prio}\n",
        "\n"
        + comment_block(
            [
                f"Partitions (compute P_Key {ctx.spec.networks.compute.pkey}, IPoIB MTU {ib.mtu}):",
                "see partitions.conf.",
                f"Source: {sources.OPENSM_PARTITIONS}",
            ]
        )
        + "partition_config_file /etc/opensm/partitions.conf\n",
        "\n"
        + comment_block(
            ["Plan names in the SM's logs and dumps (fill in the GUIDs in ib-node-name-map)."]
        )
        + "node_name_map_name /etc/opensm/ib-node-name-map\n",
    ]
    lines.extend(_opensm_roots(ctx))
    lines.append(_opensm_sharp(ctx))
    return "".join(lines)


def _opensm_roots(ctx: RenderContext) -> list[str]:
    """ftree engines: the root GUID file (commented out until the GUIDs are known)."""
    ib = ctx.spec.infiniband
    roots = _roots(ctx)
    have_roots = all(r in ctx.guids for r in roots)
    lines: list[str] = []
    if ib.routing_engine in ("ftree", "ar_ftree"):
        root_comment = [
            f"Fat-tree roots: the {'core' if ctx.plan.tiers == 3 else 'spine'} switches. ftree",
            "detects them from the topology; pinning them avoids a wrong guess while the",
            "fabric is half cabled.",
        ]
        if have_roots and roots:
            lines.append(
                "\n" + comment_block(root_comment) + "root_guid_file /etc/opensm/root-guids.conf\n"
            )
        else:
            lines.append(
                "\n"
                + comment_block(
                    [*root_comment, "Enable once the root GUIDs are known (render with --guids):"]
                )
                + "# root_guid_file /etc/opensm/root-guids.conf\n"
            )
    return lines


def _opensm_sharp(ctx: RenderContext) -> str:
    """SHARP on or off, with the routing-engine warning when the trees cannot form."""
    ib = ctx.spec.infiniband
    sharp_lines = [
        "SHARP in-network reduction (spec.infiniband.sharp). `sharp_enabled` is an NVIDIA OpenSM",
        "(MLNX_OFED/UFM) option: 0 ignore, 1 disable on all switches, 2 enable on all switches.",
        "The SHARP Aggregation Manager runs next to the master SM (UFM starts it itself).",
        f"Source: {sources.SHARP_OPENSM}",
        f"Source: {sources.SHARP_SETUP}",
    ]
    if ib.sharp:
        if ib.routing_engine not in SHARP_ROUTING_ENGINES:
            sharp_lines.append(
                f"WARNING: SHARP trees need one of {', '.join(SHARP_ROUTING_ENGINES)}; "
                f"routing_engine is {ib.routing_engine}."
            )
        return "\n" + comment_block(sharp_lines) + "sharp_enabled 2\n"
    return "\n" + comment_block(
        [*sharp_lines, "SHARP is off in the plan: the option is left unset."]
    )


def _partitions(ctx: RenderContext) -> str:
    ib = ctx.spec.infiniband
    code = IB_MTU_CODES.get(ib.mtu)
    if code is None:
        raise SpecError(
            "infiniband.mtu",
            f"{ib.mtu} is not an InfiniBand MTU",
            "one of 256, 512, 1024, 2048, 4096",
        )
    pkey = ctx.spec.networks.compute.pkey.lower()
    head = comment_block(
        [
            f"OpenSM partitions for {ctx.spec.name}",
            GENERATED_BY.format(target=TARGET),
            f"IPoIB multicast group MTU uses the IBTA code: mtu={code} is {ib.mtu} bytes.",
            f"Format: {sources.OPENSM_PARTITIONS}",
        ]
    )
    if int(pkey, 16) & 0x7FFF == 0x7FFF:
        body = (
            "\n"
            + comment_block(
                ["The compute traffic runs in the default partition: every port a full member."]
            )
            + f"Default=0x7fff, ipoib, mtu={code}, defmember=full : "
            "ALL, ALL_SWITCHES=full, SELF=full ;\n"
        )
    else:
        body = (
            "\n"
            + comment_block(
                ["Default partition: switches and the SM full, hosts limited (OpenSM's rule)."]
            )
            + "Default=0x7fff : ALL=limited, ALL_SWITCHES=full, SELF=full ;\n"
            + "\n"
            + comment_block(
                [f"Compute partition (spec.networks.compute.pkey {pkey}): every HCA a full member."]
            )
            + f"compute={pkey}, ipoib, mtu={code}, defmember=full : ALL_CAS, SELF=full ;\n"
        )
    return head + body


def _roots(ctx: RenderContext) -> list[str]:
    top = "core" if ctx.plan.tiers == 3 else "spine"
    return [s.name for s in ctx.compute_switches() if s.role == top]


def _root_guids(ctx: RenderContext) -> str | None:
    roots = _roots(ctx)
    if not roots or not all(r in ctx.guids for r in roots):
        return None
    head = comment_block(
        [
            f"ftree root switches (the top tier) for {ctx.spec.name}: one GUID per line.",
            GENERATED_BY.format(target=TARGET),
            f"Source: {sources.OPENSM_ROUTING}",
        ]
    )
    return head + "".join(f"{ctx.guids[r]}\n" for r in roots)


def _node_name_map(ctx: RenderContext) -> str:
    names = guid_names(ctx)
    known = sum(1 for n, _ in names if n in ctx.guids)
    header = [
        f'InfiniBand node-name-map for {ctx.spec.name}: <guid> "<name>" per line, # comments.',
        GENERATED_BY.format(target=TARGET),
        "Use: ibnetdiscover --node-name-map <this file>; OpenSM node_name_map_name.",
        f"Format: {sources.NODE_NAME_MAP}",
        f"GUIDs known: {known} of {len(names)}.",
        *ctx.profile_notes(),
    ]
    if known < len(names):
        header += [
            "Placeholders are commented out: replace 0x________________ with the node GUID",
            "(ibstat on the host, ibswitches on the fabric) and uncomment the line, or render",
            "again with --guids FILE (CSV name,guid).",
        ]
    lines = [comment_block(header)]
    section = ""
    for name, desc in names:
        kind = "HCAs" if " " in name else "Switches"
        if kind != section:
            lines.append(f"\n# {kind}\n")
            section = kind
        guid = ctx.guids.get(name)
        if guid:
            lines.append(f'{guid} "{name}"\n')
        else:
            lines.append(f'# 0x________________ "{name}"  # {desc}\n')
    return "".join(lines)


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    out = [f"infiniband/opensm-{sm}.conf" for sm in subnet_managers(ctx)]
    out += ["infiniband/partitions.conf", "infiniband/ib-node-name-map"]
    roots = _roots(ctx)
    if roots and all(r in ctx.guids for r in roots):
        out.append("infiniband/root-guids.conf")
    out.append(f"infiniband/{safe_name(ctx.spec.name)}.topo")
    return out


def render(ctx: RenderContext) -> list[Artifact]:
    """The InfiniBand control-plane files (see the module docstring)."""
    require_infiniband(ctx)

    sms = subnet_managers(ctx)
    contents = [_opensm_conf(ctx, sm, i, len(sms)) for i, sm in enumerate(sms)]
    contents += [_partitions(ctx), _node_name_map(ctx)]
    roots = _root_guids(ctx)
    if roots is not None:
        contents.append(roots)
    contents.append(topo_file(ctx.topo))
    return [Artifact(TARGET, p, c) for p, c in zip(files(ctx), contents, strict=True)]


def known_guid_names(ctx: RenderContext) -> set[str]:
    """Every name a ``--guids`` file may use."""
    return {n for n, _ in guid_names(ctx)}
