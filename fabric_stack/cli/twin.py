"""`fabric-stack twin`: a digital twin of the planned fabric, from real daemons, on this machine."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from fabric_stack.artifacts.infiniband import parse_guid_csv
from fabric_stack.cli.common import (
    console,
    echo_json,
    handle_errors,
    load_spec,
    out_dir_option,
    spec_options,
)
from fabric_stack.cli.params import FiniteFloat, NonEmptyPath
from fabric_stack.files.inputs import MAX_CONFIG_BYTES, read_text

_DIR = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The twin's directory (state file, rendered files, logs).",
)


@click.group("twin")
def twin_cmd() -> None:
    """Digital twin of the plan, built from real daemons on this machine (needs root).

    InfiniBand: ibsim simulates the planned fabric (deterministic GUIDs, real
    NodeDescriptions), real OpenSM routes it with the rendered opensm.conf, and
    real infiniband-diags read it. Ethernet/RoCE: one network namespace per
    device, a veth pair per planned cable (ends named as the plan names the
    ports) and lldpd in every namespace.

    \b
    Examples:
      fabric-stack twin up --dir /tmp/twin                      # the seed cluster, InfiniBand
      fabric-stack twin check --dir /tmp/twin --format json
      fabric-stack twin collect --dir /tmp/twin --out-dir /tmp/seen
      fabric-stack twin fault --dir /tmp/twin swap su1-node01:mlx5_0 su1-node02:mlx5_0
      fabric-stack twin fault --dir /tmp/twin --list
      fabric-stack twin down --dir /tmp/twin
      fabric-stack twin up --fabric roce --switch sn5600 --dir /tmp/roce
      fabric-stack twin traffic --dir /tmp/roce --out-dir /tmp/results   # iperf3, for accept
    """


@twin_cmd.command("up")
@spec_options
@_DIR
@click.option(
    "--guids",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="CSV name,guid: GUIDs to use (the rest are derived from the names).",
)
@handle_errors
def up_cmd(directory: Path, guids: Path | None, **kwargs: Any) -> None:
    """Build the twin of the plan in DIR and wait until it is up (SUBNET UP / LLDP converged).

    \b
    Examples:
      fabric-stack twin up --dir /tmp/twin
      fabric-stack twin up --gpus 1024 --dir /tmp/twin1k
      fabric-stack twin up --fabric roce --switch sn5600 --dir /tmp/roce
    """
    from fabric_stack.twin import ops

    ops_require_root()
    spec = load_spec(kwargs)
    given = None
    if guids is not None:
        from fabric_stack.artifacts._base import RenderContext
        from fabric_stack.artifacts.infiniband import known_guid_names
        from fabric_stack.sizing.size import size_fabric
        from fabric_stack.topology.build import build_topology

        ctx = RenderContext.from_topology(build_topology(size_fabric(spec)))
        given = parse_guid_csv(
            read_text(guids, MAX_CONFIG_BYTES), str(guids), known_guid_names(ctx)
        )
    ops.up(spec, directory, click.echo, given)


def ops_require_root() -> None:
    """One line and exit 2 when not root (before anything else is read)."""
    from fabric_stack.twin.runtime import require_root

    require_root()


@twin_cmd.command("check")
@_DIR
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@handle_errors
def check_cmd(directory: Path, fmt: str) -> None:
    """What the running twin says about itself, against the plan. Exit 0 if all agrees, else 1.

    InfiniBand: SM state and priority (sminfo), the routing engine OpenSM used (its
    log) and whether it fell back, every HCA pair's route through the LFTs (dump_fts)
    with hop counts. Ethernet: every port's LLDP neighbour (lldpctl) against the plan.

    \b
    Examples:
      fabric-stack twin check --dir /tmp/twin
      fabric-stack twin check --dir /tmp/twin --format json | jq .routing
    """
    from fabric_stack.twin import ops

    ops_require_root()
    report = ops.check(directory)
    if fmt == "json":
        echo_json(report)
    else:
        console().print(_check_table(report))
    sys.exit(0 if report["ok"] else 1)


def _check_table(report: dict[str, Any]) -> Table:
    t = Table(title=f"twin check ({report['fabric']})", show_lines=False)
    t.add_column("check")
    t.add_column("result")
    t.add_column("detail")

    def row(name: str, ok: bool, detail: str) -> None:
        t.add_row(name, "[green]PASS[/]" if ok else "[red]FAIL[/]", detail)

    if report["fabric"] == "infiniband":
        for sm in report["sm"]:
            row(
                f"sm {sm['name']}",
                sm["ok"],
                f"{sm.get('state')} priority {sm.get('priority')} on {sm['attach']} "
                f"(planned {sm['expected_state']}, priority {sm['planned_priority']})",
            )
        r = report["routing"]
        fell = " — FELL BACK" if r["fell_back"] else ""
        row("routing", r["ok"], f"planned {r['planned']}, OpenSM used {r['engine']}{fell}")
        q = report["reachability"]
        hops = ", ".join(f"{k} hops: {v}" for k, v in q["hops"].items())
        row("reachability", q["all"], f"{q['ok']}/{q['pairs']} HCA pairs ({q['method']}); {hops}")
        lk = report["links"]
        row(
            "links",
            lk["planned"] == lk["agree"] == lk["seen"],
            f"{lk['agree']}/{lk['planned']} planned cables seen, {lk['seen']} in all",
        )
        for odd in lk["differ"][:10]:
            t.add_row("", "", f"differs: {odd}")
        if "rate" in report:
            t.add_row(
                "rate", "note", f"{report['rate']['twin']} for planned {report['rate']['planned']}"
            )
    else:
        q = report["lldp"]
        row(
            "lldp",
            q["ports"] == q["agree"] and not q["disagree"],
            f"{q['agree']}/{q['ports']} ports agree",
        )
        for w in q["disagree"][:10]:
            t.add_row(
                "",
                "",
                f"{w['device']} {w['port']}: expected {w['expected'] or 'nothing (not planned)'}"
                f", seen {w['seen'] or 'nothing'}",
            )
        if "host_links" in report:
            _host_link_rows(t, report["host_links"])
    for f in report["faults"]:
        t.add_row("fault", "injected", f"{f['fault']} → expects {f['expects']}")
    return t


def _host_link_rows(t: Table, h: dict[str, Any]) -> None:
    """Host vs switch settings per host link (MTU), and what the twin cannot apply."""
    ok = not h["mismatches"]
    t.add_row(
        "host links",
        "[green]PASS[/]" if ok else "[red]FAIL[/]",
        f"{h['agree']}/{h['links']} host links: host and leaf port MTU as planned",
    )
    for m in h["mismatches"][:10]:
        t.add_row("", "", f"{m['host']} ↔ {m['leaf']}: {m['why']}")
    t.add_row("rdma-cm tos", "note", h["rdma_cm_tos"])


@twin_cmd.command("collect")
@_DIR
@out_dir_option("Where to write what the tools print (ibnetdiscover.txt or lldp/).", required=True)
@handle_errors
def collect_cmd(directory: Path, out_dir: Path) -> None:
    """Write what the real tools print, as `fabric-stack drift` reads it on a real site.

    InfiniBand: OUT/ibnetdiscover.txt, OUT/iblinkinfo.txt, OUT/ibnetdiscover-p.txt
    (`ibnetdiscover -p`; drift reads each) and OUT/node-name-map. Ethernet:
    OUT/lldp/<hostname>.json (`lldpctl -f json0`) per device. Plus OUT/spec.yaml
    and, where the twin cannot run the planned rate, OUT/drift-ignore.yaml.

    \b
    Example:
      fabric-stack twin collect --dir /tmp/twin --out-dir /tmp/seen
    """
    from fabric_stack.twin import ops

    ops_require_root()
    files = ops.collect(directory, out_dir)
    for f in files:
        click.echo(f"wrote {f}")
    click.echo(f"next: {ops.drift_command(directory, out_dir)}")


@twin_cmd.command("traffic")
@_DIR
@out_dir_option("Where to write the results (OUT/iperf3/*.json, OUT/spec.yaml).", required=True)
@click.option(
    "--rate",
    type=FiniteFloat(min=0.001, max=100),
    default=0.5,
    show_default=True,
    metavar="GBPS",
    help="Pace of every run (iperf3 -b), Gb/s: what each link is asked to carry.",
)
@click.option(
    "--seconds",
    type=click.IntRange(min=1, max=30),
    default=2,
    show_default=True,
    help="Length of every run (iperf3 -t).",
)
@handle_errors
def traffic_cmd(directory: Path, out_dir: Path, rate: float, seconds: int) -> None:
    """Real iperf3 traffic over the rail addresses of a RoCE/Ethernet twin, for `accept`.

    Per rail, every server sends to the next and to the previous server of the rail
    (client and server in the servers' namespaces, bound to their rail addresses), the
    rails side by side, each run paced at --rate for --seconds. Writes
    OUT/iperf3/<host>_<device>_to_<peer>.json (iperf3 -J) and OUT/spec.yaml; `accept`
    reads them and holds each run to its pace and the sweep's median (the twin's veths
    have no line rate).

    \b
    Examples:
      fabric-stack twin traffic --dir /tmp/roce --out-dir /tmp/results
      fabric-stack accept --config /tmp/results/spec.yaml /tmp/results/iperf3
    """
    from fabric_stack.twin import ops_traffic

    ops_require_root()
    files = ops_traffic.traffic(directory, out_dir, click.echo, rate, seconds)
    click.echo(f"wrote {len(files) - 1} iperf3 results under {out_dir / 'iperf3'}")
    click.echo(f"next: fabric-stack accept --config {out_dir / 'spec.yaml'} {out_dir / 'iperf3'}")


@twin_cmd.command("fault")
@_DIR
@click.option("--list", "list_", is_flag=True, help="Show the injected faults.")
@click.option("--clear", is_flag=True, help="Undo every injected fault.")
@click.argument("kind", required=False)
@click.argument("args", nargs=-1)
@handle_errors
def fault_cmd(
    directory: Path, list_: bool, clear: bool, kind: str | None, args: tuple[str, ...]
) -> None:
    """Inject a fault into the running twin (or --list / --clear them).

    \b
    Kinds:
      unplug DEVICE:PORT            pull a cable            (drift: missing_link)
      swap DEVICE:PORT DEVICE:PORT  exchange two cable ends (drift: wrong_peer)
      move DEVICE:PORT DEVICE:PORT  re-plug to a free port  (drift: wrong_peer)
      speed DEVICE:PORT GBPS        slower link, IB only    (drift: speed_mismatch)
      down DEVICE                   power a device off      (drift: missing_device)
      rogue SWITCH:PORT NAME        plug in an unplanned device (drift: unexpected_device)

    \b
    Examples:
      fabric-stack twin fault --dir /tmp/twin swap su1-node01:mlx5_0 su1-node02:mlx5_0
      fabric-stack twin fault --dir /tmp/twin move su1-node01:mlx5_0 su1-r1-leaf:17
      fabric-stack twin fault --dir /tmp/twin speed spine-01:1 200
      fabric-stack twin fault --dir /tmp/twin --list
      fabric-stack twin fault --dir /tmp/twin --clear
    """
    from fabric_stack.twin import ops

    ops_require_root()
    if list_ or (kind is None and not clear):
        faults = ops.fault_log(directory)
        if not faults:
            click.echo("no faults injected")
        for i, f in enumerate(faults, 1):
            click.echo(f"{i}. {f.text()}  (expects {f.expects})")
        return
    if clear:
        ops.clear_faults(directory, click.echo)
        return
    assert kind is not None
    ops.fault(directory, kind, args, click.echo)


@twin_cmd.command("down")
@_DIR
@handle_errors
def down_cmd(directory: Path) -> None:
    """Stop every process and remove every namespace, veth and file the twin made.

    Idempotent; works after a crash or a killed `up` (everything is in the state file).

    \b
    Example:
      fabric-stack twin down --dir /tmp/twin
    """
    from fabric_stack.twin import ops

    ops_require_root()
    ops.down(directory, click.echo)
