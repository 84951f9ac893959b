"""`fabric-stack render TARGET --out DIR`: deployment artifacts from the plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..artifacts import TARGET_NAMES, TARGETS, RenderContext, render_artifacts, write_artifacts
from ..artifacts._base import parse_netdev_csv
from ..artifacts.infiniband import known_guid_names, parse_guid_csv
from ..errors import InputFileError
from ..inputs import MAX_CONFIG_BYTES, read_text
from ..sizing import size_fabric
from ..topology import build_topology
from .common import console, echo_json, format_option, handle_errors, load_spec, spec_options
from .params import NonEmptyPath


def _read(path: Path) -> str:
    return read_text(path, MAX_CONFIG_BYTES)


@click.command("render")
@click.argument("target", type=click.Choice(TARGET_NAMES), metavar="TARGET")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=NonEmptyPath(file_okay=False, path_type=Path),
    help="Directory to write into (created if missing; files are replaced atomically).",
)
@click.option(
    "--guids",
    "guids_file",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="InfiniBand: CSV name,guid (e.g. su1-r1-leaf,0x0002c90300a1b2c3 or "
    "'su1-node01 mlx5_0,0x…') to fill the node-name-map.",
)
@click.option(
    "--netdevs",
    "netdevs_file",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="CSV nic,netdev (mlx5_0,ibp24s0) naming each rail NIC's Linux interface "
    "[default: rail1, rail2, …].",
)
@spec_options
@format_option
@handle_errors
def render_cmd(
    target: str,
    out_dir: Path,
    guids_file: Path | None,
    netdevs_file: Path | None,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Render deployment artifacts for TARGET from the plan into --out DIR.

    \b
    Targets (fabric):
      roce-qos     per-switch lossless QoS intent, YAML            (RoCEv2)
      cumulus      QoS + BGP underlay as Cumulus Linux NVUE        (RoCEv2, Cumulus)
      frr          FRR bgpd/zebra underlay config per switch       (RoCEv2, Ethernet)
      sonic        SONiC config_db.json per switch                 (RoCEv2, Ethernet; SN5600)
      hosts        netplan + ip script per server: rail tables/rules (RoCEv2, Ethernet)
      infiniband   opensm.conf per SM, partitions, node map, .topo (InfiniBand)
      nccl         NCCL env file: HCAs, socket ifname, GID/TC      (all)
      kubernetes   SR-IOV policies, networks, NADs, sample pod     (all)
      report       self-contained HTML design report              (all)
      all          every target that applies to the fabric

    A target that does not fit the fabric (roce-qos for InfiniBand) is an error
    (exit 2) and nothing is written.

    \b
    Examples:
      fabric-stack render all --out build/                     # seed cluster, InfiniBand
      fabric-stack render cumulus --fabric roce --switch sn5600 --out build/
      fabric-stack render frr --fabric roce --switch sn5600 --gpus 256 --su-nodes 16 --out build/
      fabric-stack render sonic --fabric roce --switch sn5600 --out build/
      fabric-stack render infiniband --guids guids.csv --out build/
      fabric-stack render report --config cluster.yaml --out build/ --format json
    """
    spec = load_spec(kwargs)
    topo = build_topology(size_fabric(spec))
    ctx = RenderContext.from_topology(topo)
    guids: dict[str, str] = {}
    netdevs: dict[str, str] = {}
    if guids_file is not None:
        guids = parse_guid_csv(_read(guids_file), str(guids_file), known_guid_names(ctx))
    if netdevs_file is not None:
        netdevs = parse_netdev_csv(_read(netdevs_file), str(netdevs_file), set(ctx.rail_nics()))
    if guids or netdevs:
        ctx = RenderContext(topo, ctx.intent, guids, netdevs)
    artifacts = render_artifacts(target, ctx)  # raises before anything is written
    try:
        paths = write_artifacts(artifacts, out_dir)
    except OSError as exc:
        where = exc.filename or out_dir
        raise InputFileError(str(where), f"cannot write: {exc.strerror or exc}") from None
    rows = [
        {
            "target": a.target,
            "path": str(p),
            "file": a.path,
            "bytes": len(a.content.encode("utf-8")),
        }
        for a, p in zip(artifacts, paths, strict=True)
    ]
    if fmt == "json":
        echo_json([{k: r[k] for k in ("target", "path", "bytes")} for r in rows])
    elif fmt == "markdown":
        click.echo(f"Rendered {len(rows)} file(s) into `{out_dir}`:\n")
        for r in rows:
            click.echo(f"- `{r['file']}` ({r['target']}, {r['bytes']:,} bytes)")
    else:
        click.echo(f"{len(rows)} file(s) written to {out_dir}")
        table = Table()
        table.add_column("Target")
        table.add_column("File")
        table.add_column("Bytes", justify="right")
        for r in rows:
            table.add_row(str(r["target"]), str(r["file"]), f"{r['bytes']:,}")
        console().print(table)


__all__ = ["TARGETS", "render_cmd"]
