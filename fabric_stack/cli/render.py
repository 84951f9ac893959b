"""`fabric-stack render TARGET --out-dir DIR`: deployment artifacts from the plan."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from fabric_stack.artifacts import (
    TARGET_NAMES,
    TARGETS,
    RenderContext,
    render_artifacts,
    skipped_targets,
    write_artifacts,
)
from fabric_stack.artifacts._base import (
    K8S_RDMA_MODES,
    Artifact,
    netdev_warning,
    parse_netdev_csv,
)
from fabric_stack.artifacts.banner import with_banners
from fabric_stack.artifacts.document import PAPER_SIZES, document_info
from fabric_stack.artifacts.infiniband import known_guid_names, parse_guid_csv
from fabric_stack.cli import progress
from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    out_dir_option,
    spec_options,
)
from fabric_stack.cli.params import NonEmptyPath
from fabric_stack.cli.render_pdf import chromium, print_pdf
from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.inputs import MAX_CONFIG_BYTES, read_text
from fabric_stack.policy import PolicyConfig, Violation, evaluate, load_policy_config
from fabric_stack.sizing.size import size_fabric
from fabric_stack.topology.build import build_topology

DEFAULT_MAX_SECONDS = 600.0
"""`render --max-seconds`: `render all` at 32,768 GPUs (RoCE) takes about a minute."""


def _read(path: Path) -> str:
    return read_text(path, MAX_CONFIG_BYTES)


def target_list() -> list[str]:
    """The targets as `render --help` lists them: name, description, where it applies.

    Generated from :data:`~fabric_stack.artifacts.TARGETS` (nothing here is kept by hand).
    """
    lines: list[str] = []
    pad = " " * 15
    for name, target in TARGETS.items():
        lines += textwrap.wrap(
            target.help, 88, initial_indent=f"  {name:<12} ", subsequent_indent=pad
        )
        lines += textwrap.wrap(
            f"applies to: {target.applies.describe()}",
            88,
            initial_indent=pad,
            subsequent_indent=pad + "  ",
        )
    return [*lines, f"  {'all':<12} every target that applies to the fabric"]


RENDER_HELP = "\n".join(
    [
        "Render deployment artifacts for TARGET from the plan into --out-dir DIR.",
        "",
        "\b",
        "Targets:",
        *target_list(),
        "",
        "`all` renders every target that applies and names each one it skips, with the "
        "reason, on stderr. The design report as PDF: add --pdf (prints "
        "report/design-report.html to report/design-report.pdf with headless Chromium; "
        "scripts/pdf-deps.sh installs it).",
        "",
        "A target that does not fit the fabric (roce-qos for InfiniBand) is an error "
        "(exit 2) and nothing is written. A plan that fails a mandatory policy rule "
        "(the rules of `fabric-stack check`) is refused: the violations are printed, "
        "exit 1, nothing is written; --allow-violations writes anyway, with a banner "
        "naming each violation at the top of every file.",
        "",
        "\b",
        "Examples:",
        "  fabric-stack render all --out-dir build/                 # seed cluster, InfiniBand",
        "  fabric-stack render slurm --ibnetdiscover fabric.txt --out-dir build/  # no plan",
        "  fabric-stack render k8s-topology --ibnetdiscover fabric.txt --node-name-map nodes.map"
        " \\",
        "      --nvlink-domains domains.txt --out-dir build/",
        "  fabric-stack render cumulus --fabric roce --switch sn5600 --out-dir build/",
        "  fabric-stack render frr --fabric roce --switch sn5600 --gpus 256 --su-nodes 16 "
        "--out-dir build/",
        "  fabric-stack render sonic --fabric roce --switch sn5600 --out-dir build/",
        "  fabric-stack render infiniband --guids guids.csv --out-dir build/",
        "  fabric-stack render report --config cluster.yaml --out-dir build/ --format json",
        '  fabric-stack render report --doc-revision B --doc-date 2026-12-01 --author "A. '
        'Architect" \\',
        "      --software nccl=2.23.4 --paper a4 --pdf --out-dir build/",
        "  fabric-stack render kubernetes --k8s-rdma ipoib --netdevs netdevs.csv --out-dir build/",
    ]
)
"""`fabric-stack render --help`: the target list comes from the registry."""


@click.command("render", help=RENDER_HELP)
@click.argument("target", type=click.Choice(TARGET_NAMES), metavar="TARGET")
@out_dir_option(
    "Directory to write into (created if missing; files are replaced atomically).",
    required=True,
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
@click.option(
    "--k8s-rdma",
    type=click.Choice(K8S_RDMA_MODES),
    default="sriov",
    show_default=True,
    help="Kubernetes: how pods get the rails: SR-IOV VFs (SR-IOV Network Operator, RDMA "
    "exclusive), the whole PF (Network Operator host-device) or IPoIB on shared HCAs "
    "(Network Operator, InfiniBand).",
)
@click.option("--doc-title", help="Design document title [default: Network design — NAME].")
@click.option("--doc-revision", help="Design document revision [default: draft].")
@click.option("--doc-date", help="Design document date, YYYY-MM-DD [default: undated].")
@click.option("--author", "authors", multiple=True, help="Design document author (repeat).")
@click.option(
    "--software",
    multiple=True,
    metavar="NAME=VERSION",
    help="Software baseline entry for the design document (repeat), e.g. nccl=2.23.4.",
)
@click.option(
    "--paper",
    type=click.Choice(sorted(PAPER_SIZES)),
    default="letter",
    show_default=True,
    help="Page size the design report prints on (its @page rule, and the --pdf).",
)
@click.option(
    "--pdf",
    is_flag=True,
    help="Also print report/design-report.html to design-report.pdf (headless Chromium).",
)
@click.option(
    "--policy-config",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="Rule levels and thresholds (YAML/JSON, same shape as pulumi --policy-pack-config).",
)
@click.option(
    "--allow-violations",
    is_flag=True,
    help="Write even when a mandatory policy rule fails; every file then starts with a "
    "banner naming each violation.",
)
@click.option(
    "--ibnetdiscover",
    "ibnetdiscover_file",
    type=NonEmptyPath(path_type=Path),  # as drift's and adopt's --ibnetdiscover
    metavar="FILE",
    help="slurm, k8s-topology: the topology of the fabric in this ibnetdiscover dump (no "
    "plan: hosts under the leaves they are cabled to, leaves under the switches above them).",
)
@click.option(
    "--node-name-map",
    "node_name_map",
    type=NonEmptyPath(path_type=Path),
    metavar="FILE",
    help="With --ibnetdiscover: GUID → host name map (opensm/ibnetdiscover format).",
)
@click.option(
    "--nvlink-domains",
    "nvlink_domains",
    type=NonEmptyPath(path_type=Path),
    metavar="FILE",
    help="With --ibnetdiscover: the NVLink domains the dump cannot show, one "
    "`<domain> <hostlist>` line each (nvl72-a01 gb200-a01-[01-18]): Slurm blocks and "
    "Topograph's accelerator label. Without it no block topology is written.",
)
@progress.max_seconds_option(DEFAULT_MAX_SECONDS)
@spec_options
@format_option
@handle_errors
def render_cmd(
    target: str,
    out_dir: Path,
    guids_file: Path | None,
    netdevs_file: Path | None,
    k8s_rdma: str,
    doc_title: str | None,
    doc_revision: str | None,
    doc_date: str | None,
    authors: tuple[str, ...],
    software: tuple[str, ...],
    paper: str,
    pdf: bool,
    policy_config: Path | None,
    allow_violations: bool,
    max_seconds: float,
    fmt: str,
    ibnetdiscover_file: Path | None = None,
    node_name_map: Path | None = None,
    nvlink_domains: Path | None = None,
    **kwargs: Any,
) -> None:
    """Render artifacts for TARGET from the plan into --out-dir DIR (help: RENDER_HELP)."""
    if ibnetdiscover_file or node_name_map or nvlink_domains:
        _render_discovered(
            target, ibnetdiscover_file, (node_name_map, nvlink_domains), out_dir, fmt
        )
        return
    step = progress.bounded(
        f"render {target}",
        max_seconds,
        "targets",
        "nothing written; raise --max-seconds, or render fewer targets",
    )
    spec = load_spec(kwargs)
    topo = build_topology(size_fabric(spec))
    ctx = RenderContext.from_topology(topo)
    guids: dict[str, str] = {}
    netdevs: dict[str, str] = {}
    if guids_file is not None:
        guids = parse_guid_csv(_read(guids_file), str(guids_file), known_guid_names(ctx))
    if netdevs_file is not None:
        netdevs = parse_netdev_csv(_read(netdevs_file), str(netdevs_file), set(ctx.rail_nics()))
    doc = document_info(doc_title, doc_revision, doc_date, authors, software, paper)
    ctx = RenderContext(topo, ctx.intent, guids, netdevs, k8s_rdma, doc)
    cfg = load_policy_config(policy_config) if policy_config else PolicyConfig()
    blocking = [v for v in evaluate(ctx.intent, cfg).violations if v.level == "mandatory"]
    if blocking and not allow_violations:
        _refuse(blocking)
    artifacts = render_artifacts(target, ctx, step)  # raises before anything is written
    if blocking:
        artifacts = with_banners(artifacts, blocking)
    if pdf:  # every --pdf refusal comes before anything is written
        if not any(a.target == "report" for a in artifacts):
            raise SpecError("--pdf", f"target {target} writes no report", "render report or all")
        if chromium() is None:
            raise SpecError("--pdf", "chromium is not installed", "run scripts/pdf-deps.sh")
    try:
        paths = write_artifacts(artifacts, out_dir)
    except OSError as exc:
        where = exc.filename or out_dir
        raise InputFileError(str(where), f"cannot write: {exc.strerror or exc}") from None
    if pdf:
        html = [p for a, p in zip(artifacts, paths, strict=True) if a.target == "report"]
        made = print_pdf(html[0])
        artifacts = [*artifacts, Artifact("report", "report/design-report.pdf", "")]
        paths = [*paths, made]
    rows = [
        {
            "target": a.target,
            "path": str(p),
            "file": a.path,
            "bytes": p.stat().st_size,
        }
        for a, p in zip(artifacts, paths, strict=True)
    ]
    _print_rows(fmt, out_dir, rows)
    warning = netdev_warning(ctx) if any(a.target == "hosts" for a in artifacts) else None
    if warning:  # the host files say it too; stderr so nobody misses it at render time
        click.echo(f"render hosts: {warning}", err=True)
    if target == "all":  # stderr: stdout stays the list of what was written
        for name, reason in skipped_targets(ctx):
            click.echo(f"render all: skipped {name}: {reason}", err=True)


DISCOVERED_TARGETS = ("slurm", "k8s-topology")
"""The targets ``--ibnetdiscover`` renders (the scheduler's view of the fabric that exists)."""


def _render_discovered(
    target: str,
    dump: Path | None,
    extra: tuple[Path | None, Path | None],
    out_dir: Path,
    fmt: str,
) -> None:
    """``render slurm|k8s-topology --ibnetdiscover FILE``: the fabric that exists.

    ``extra`` is (--node-name-map, --nvlink-domains). Every input is read and every file
    rendered before the first is written."""
    from fabric_stack.adapters.discovery import IbnetdiscoverReader
    from fabric_stack.artifacts import k8s_topology, slurm
    from fabric_stack.drift.discovered import discovered_tree
    from fabric_stack.drift.discovered_view import discovered_view, kubernetes_nodes
    from fabric_stack.drift.nvlink_domains import load_nvlink_domains

    name_map, domains_file = extra
    if dump is None:
        given = "--node-name-map" if name_map is not None else "--nvlink-domains"
        raise SpecError(given, "given without --ibnetdiscover", "add --ibnetdiscover")
    if target not in DISCOVERED_TARGETS:
        raise SpecError(
            "--ibnetdiscover",
            f"target {target} renders from a plan",
            "render slurm or k8s-topology --ibnetdiscover",
        )
    domains = load_nvlink_domains(domains_file) if domains_file is not None else None
    tree = discovered_tree(IbnetdiscoverReader(dump, name_map).load())
    if not tree.switches:
        raise InputFileError(str(dump), "no host is cabled to a switch: no topology to write")
    view = discovered_view(tree, domains)
    try:
        if target == "slurm":
            artifacts = slurm.render_discovered(view)
        else:
            artifacts = k8s_topology.render_view(kubernetes_nodes(view))
    except ValueError as exc:
        raise InputFileError(str(dump), f"cannot write {target}: {exc}") from None
    try:
        paths = write_artifacts(artifacts, out_dir)
    except OSError as exc:
        raise InputFileError(str(out_dir), f"cannot write: {exc.strerror or exc}") from None
    rows = [
        {"target": a.target, "path": str(p), "file": a.path, "bytes": p.stat().st_size}
        for a, p in zip(artifacts, paths, strict=True)
    ]
    _print_rows(fmt, out_dir, rows)
    if target == "slurm" and not view.blocks:  # stderr: stdout stays what was written
        click.echo(f"render slurm: {slurm.NO_BLOCKS}", err=True)


def _print_rows(fmt: str, out_dir: Path, rows: list[dict[str, Any]]) -> None:
    """What was written, as JSON, Markdown or a table."""
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


def _refuse(violations: list[Violation]) -> None:
    """Print the mandatory violations and exit 1 (nothing has been written)."""
    click.echo(
        f"render: the plan fails {len(violations)} mandatory policy check(s); nothing written "
        "(fix the spec, or --allow-violations to write files that carry a banner naming them):",
        err=True,
    )
    for v in violations:
        click.echo(f"  {v.rule}: {v.message}", err=True)
    sys.exit(1)


__all__ = ["TARGETS", "render_cmd"]
