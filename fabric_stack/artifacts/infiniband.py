"""`render infiniband`: subnet managers, partitions, node-name map, `.topo`, IBNL and CVT files.

Files (under ``infiniband/``):

* ``opensm-<sm>.conf`` — one per subnet-manager instance, per plane (master and
  standby of every plane, bound to its plane's port with ``guid``): see
  :mod:`fabric_stack.artifacts.opensm`.
* ``partitions.conf`` (OpenSM hosts, switches) or ``partitions.conf.user_ext``
  (UFM, which generates partitions.conf itself) — the compute partition (P_Key from
  the spec) with the IPoIB multicast group at the fabric's IB MTU.
* ``ib-node-name-map`` — ``<guid> "<name>"`` per switch, per GPU-server HCA and per
  fabric-manager HCA so ``ibnetdiscover``/``ibdiagnet`` print plan names. GUIDs are
  unknown at plan time: without ``--guids`` every entry is a commented placeholder.
* ``root-guids.conf`` — the fat-tree roots (top tier) for ``ftree``, only when
  their GUIDs are known.
* ``<cluster>.topo`` — the planned topology for ``ibdiagnet -t``, from
  :func:`fabric_stack.views.exports.topo_file` (the one `.topo` writer).
* ``ibnl/<HCA system type>.ibnl`` — one IBNL per HCA system type the `.topo` names
  (GPU servers, fabric managers), for ``ibdiagnet --out_ibnl_dir``.
* ``hca_mapping.csv`` — UFM Cable Validation Tool ``hca_mapping`` (interface number →
  RDMA device) from the GPU server's real device names.

The `.topo`, the name map and the P2P sheet share one port-naming convention, stated
in each file's header (:func:`fabric_stack.views.ib_naming.port_naming_header`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    comment_block,
    safe_name,
)
from fabric_stack.artifacts.opensm import (
    CONF_DIRS,
    UFM_CONF_DIR,
    opensm_conf,
    root_names,
    sm_instances,
)
from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.inputs import csv_reader
from fabric_stack.topology.build import MANAGER_ROLE
from fabric_stack.views.exports import topo_file
from fabric_stack.views.ib_naming import (
    hca_mapping_csv,
    hca_systems,
    ibnl,
    port_naming_header,
    server_hcas,
)

TARGET = "infiniband"

IB_MTU_CODES: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
"""IBTA MTU encoding used by partitions.conf (``mtu=5`` is 4096)."""

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
    """(name, description) of every IB node the map covers: switches, then HCAs of the
    GPU servers and of the fabric managers. Ports are named by the one convention
    (``P<n>``, see the file header)."""
    out = [
        (
            sw.name,
            f"{sw.model_name} {sw.role}"
            + (f", rail {sw.rail}" if sw.rail else "")
            + (f", SU {sw.su}" if sw.su else ""),
        )
        for sw in ctx.compute_switches()
    ]
    model = ctx.spec.node_profile.nic_model
    port = {
        (k.a_device, k.a_port): f"{k.b_device} P{k.b_port_number}"
        for k in ctx.topo.links_of("node_leaf", MANAGER_ROLE)
    }
    out += [
        (f"{n.node} {n.nic}", f"{model} HCA, rail {n.rail}, {port[(n.node, n.nic)]}")
        for n in ctx.intent.nics
    ]
    out += [
        (f"{k.a_device} {k.a_port}", f"{model} HCA, fabric manager, {port[(k.a_device, k.a_port)]}")
        for k in ctx.topo.links_of(MANAGER_ROLE)
    ]
    return out


# --------------------------------------------------------------------------- renderers


def subnet_managers(ctx: RenderContext) -> list[str]:
    """Names of the planned SM instances, plane by plane, master first."""
    return [sm.name for sm in sm_instances(ctx)]


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
    ufm = ib.sm_location == "ufm"
    head_lines = [
        f"OpenSM partitions for {ctx.spec.name}",
        GENERATED_BY.format(target=TARGET),
        f"IPoIB multicast group MTU uses the IBTA code: mtu={code} is {ib.mtu} bytes.",
        f"Format: {sources.OPENSM_PARTITIONS}",
    ]
    if ufm:
        head_lines[0] = f"UFM partition extension for {ctx.spec.name}"
        head_lines += [
            f"Install as {UFM_CONF_DIR}/partitions.conf.user_ext: UFM generates",
            f"{CONF_DIRS['ufm']}/partitions.conf (Default partition included) and merges",
            "this file into it; run /opt/ufm/scripts/sync_partitions_conf.sh to apply now.",
            f"Source: {sources.UFM_PARTITIONS}",
        ]
    head = comment_block(head_lines)
    compute = (
        "\n"
        + comment_block(
            [f"Compute partition (spec.networks.compute.pkey {pkey}): every HCA a full member."]
        )
        + f"compute={pkey}, ipoib, mtu={code}, defmember=full : ALL_CAS, SELF=full ;\n"
    )
    if int(pkey, 16) & 0x7FFF == 0x7FFF:
        if ufm:
            return (
                head
                + "\n"
                + comment_block(
                    ["The compute traffic runs in UFM's default partition: nothing to add."]
                )
            )
        return (
            head
            + "\n"
            + comment_block(
                ["The compute traffic runs in the default partition: every port a full member."]
            )
            + f"Default=0x7fff, ipoib, mtu={code}, defmember=full : "
            "ALL, ALL_SWITCHES=full, SELF=full ;\n"
        )
    if ufm:
        return head + compute
    return (
        head
        + "\n"
        + comment_block(
            ["Default partition: switches and the SM full, hosts limited (OpenSM's rule)."]
        )
        + "Default=0x7fff : ALL=limited, ALL_SWITCHES=full, SELF=full ;\n"
        + compute
    )


def _root_guids(ctx: RenderContext) -> str | None:
    roots = root_names(ctx)
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
        "Use: ibnetdiscover --node-name-map <this file>; OpenSM node_name_map_name"
        + (
            f" ({CONF_DIRS['ufm']}/ib-node-name-map on UFM)."
            if ctx.spec.infiniband.sm_location == "ufm"
            else "."
        ),
        f"Format: {sources.NODE_NAME_MAP}",
        f"GUIDs known: {known} of {len(names)}.",
        *ctx.profile_notes(),
        "",
        *port_naming_header(ctx.topo),
        "",
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
    return [path for path, _ in _renderers(ctx)]


def _renderers(ctx: RenderContext) -> list[tuple[str, Callable[[], str]]]:
    """(path, how to render it) of every file, in the order they are written."""
    out: list[tuple[str, Callable[[], str]]] = [
        (f"infiniband/opensm-{sm.name}.conf", partial(opensm_conf, ctx, sm))
        for sm in sm_instances(ctx)
    ]
    ufm = ctx.spec.infiniband.sm_location == "ufm"
    out.append(
        (f"infiniband/partitions.conf{'.user_ext' if ufm else ''}", partial(_partitions, ctx))
    )
    out.append(("infiniband/ib-node-name-map", partial(_node_name_map, ctx)))
    roots = _root_guids(ctx)
    if roots is not None:
        out.append(("infiniband/root-guids.conf", lambda: roots))
    out.append((f"infiniband/{safe_name(ctx.spec.name)}.topo", partial(topo_file, ctx.topo)))
    model = ctx.spec.node_profile.nic_model
    for system, devices in hca_systems(ctx.topo).items():
        out.append((f"infiniband/ibnl/{system}.ibnl", partial(ibnl, system, devices, model)))
    out.append(("infiniband/hca_mapping.csv", partial(hca_mapping_csv, server_hcas(ctx.topo))))
    return out


def render(ctx: RenderContext) -> list[Artifact]:
    """The InfiniBand control-plane files (see the module docstring)."""
    require_infiniband(ctx)
    return [Artifact(TARGET, path, make()) for path, make in _renderers(ctx)]


def known_guid_names(ctx: RenderContext) -> set[str]:
    """Every name a ``--guids`` file may use."""
    return {n for n, _ in guid_names(ctx)}
