"""`fabric-stack adopt`: place a fabric that already exists on the plan and write its names file."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    out_file_option,
    spec_options,
)
from fabric_stack.cli.sources import chosen_sources, source_options
from fabric_stack.drift.adopt import (
    ACCESS_ROLES,
    CLASSES,
    AdoptResult,
    Observation,
    adopt,
    observation_from_snapshot,
)
from fabric_stack.drift.names import others_path, port_map_path, write_others, write_port_map
from fabric_stack.drift.shape_file import shape_path, write_shape
from fabric_stack.errors import FabricStackError
from fabric_stack.files.names_file import write_names
from fabric_stack.files.outputs import write_file
from fabric_stack.pipeline import paused_gc
from fabric_stack.sizing.size import size_fabric
from fabric_stack.topology.build import build_topology


class AdoptError(FabricStackError):
    """No observed device could be placed on the plan (the line says why)."""


def merge(observations: list[Observation]) -> Observation:
    """One observation of several sources (devices merged by name)."""
    out = Observation(
        "+".join(o.source for o in observations), ", ".join(o.origin for o in observations)
    )
    for o in observations:
        for name, dev in o.devices.items():
            have = out.devices.setdefault(name, dev)
            if have is not dev:
                have.kind = have.kind or dev.kind
                have.guids += [g for g in dev.guids if g not in have.guids]
                have.macs += [m for m in dev.macs if m not in have.macs]
        out.cables.extend(o.cables)
        out.rates.update(o.rates)
    return out


@click.command("adopt")
@spec_options
@format_option
@source_options("adopt")
@out_file_option("Write the names file to FILE (planned,actual,rack,u,serial,guid,mac).")
@handle_errors
def adopt_cmd(fmt: str, out: Path | None, **kwargs: Any) -> None:
    """Infer which real device sits at which planned position, from the wiring alone.

    A leaf's SU, a spine's index and a server's position come from the cables
    the fabric reports and the plan's port map; a leaf's rail from the NICs its
    hosts use on it (majority, the dissent reported); a storage / in-band / OOB
    switch from the server ports it serves. Each device goes where most of its
    cables say, so a few miswires do not move it (`drift` then reports them).
    Writes the names file for `--names` (and, when the site numbers its
    switch-to-switch ports its own way, the port map learned from the cables
    beside it, NAMES.ports.csv; and the shape the wiring shows, NAMES.shape.json:
    rails cabled, spines, cables per leaf–spine pair, leaves per rail, hosts per
    leaf, link rate, each with its evidence; drift reads both) and reports, per device
    class, what was placed and with what confidence, what was not and why, and
    what contradicts the plan. A fabric of another shape still gets each
    switch's role (leaf / spine / core). Exit status: 0 all observed devices
    placed, 1 some not placed or contradicting, 2 bad input or no role found.

    \b
    Examples:
      fabric-stack adopt --gpus 1024 --ibnetdiscover fabric.txt --out names.csv
      fabric-stack adopt --gpus 1024 --iblinkinfo iblinkinfo.txt --out names.csv
      fabric-stack adopt --config cluster.yaml --lldp lldp/ --format markdown
      NETBOX_TOKEN=… fabric-stack adopt --gpus 1024 --netbox https://nb.example --out names.csv
      fabric-stack drift --gpus 1024 --names names.csv --ibnetdiscover fabric.txt
    """
    readers = chosen_sources("adopt", kwargs).readers()
    spec = load_spec(kwargs)
    with paused_gc():  # no reference cycles among the ~million objects (see drift_cmd)
        obs = merge([observation_from_snapshot(r.load()) for r in readers])
        topo = build_topology(size_fabric(spec))
        result = adopt(topo, obs)
    if not result.placed:
        if not result.roles:
            raise AdoptError(unplaceable(result, obs, topo.plan.rails))
        # Not this plan's shape, but the wiring still says what each switch is.
        result.notes.insert(0, unplaceable(result, obs, topo.plan.rails))
    if out is not None:
        write_file(out, write_names(result.rows))
        if result.port_map:
            write_file(port_map_path(out), write_port_map(result.port_map))
        if result.shape is not None:
            write_file(shape_path(out), write_shape(result.shape))
        if result.others:
            rows = [(o.device, o.leaf, o.port, o.why) for o in result.others]
            write_file(others_path(out), write_others(rows))
    if fmt == "json":
        echo_json({"origin": obs.origin, **result.to_json()})
    elif fmt == "markdown":
        click.echo(render_markdown(result), nl=False)
    else:
        console().print(render_table(result))
        for line in detail_lines(result):
            click.echo(line)
    clean = not result.contradictions and not any(u.role in CLASSES for u in result.unplaced)
    sys.exit(0 if clean else 1)


def unplaceable(result: AdoptResult, obs: Observation, rails: int) -> str:
    """Why nothing could be placed: one line."""
    servers = [d for d in obs.devices.values() if d.kind == "server"]
    ports: dict[str, set[str]] = {}
    for a, pa, b, pb in obs.cables:
        ports.setdefault(a, set()).add(pa)
        ports.setdefault(b, set()).add(pb)
    most = max((len(ports.get(s.name, ())) for s in servers), default=0)
    roles = Counter(r.role for r in result.roles.values())
    found = (
        " (roles from the wiring: " + ", ".join(f"{n} {r}" for r, n in sorted(roles.items())) + ")"
        if roles
        else ""
    )
    return (
        f"{obs.origin}: none of the {len(obs.devices)} observed devices can be placed on the "
        f"plan: {len(servers)} server(s) with at most {most} fabric port(s) each where the plan's "
        f"servers have {rails} rails, and no switch cabled like the plan's leaves and spines "
        f"(not a rail-optimized fabric of this size: check --gpus, --switch, --su-nodes){found}"
    )


def shown_classes(result: AdoptResult) -> list[str]:
    """The classes a report lists: the compute fabric's, and an access network's when some
    of its switches were seen (ibnetdiscover never sees them: no empty rows for them)."""
    seen = {u.role for u in result.unplaced} | set(result.counts)
    seen |= {r.role for r in result.roles.values()}
    return [c for c in CLASSES if c not in ACCESS_ROLES or c in seen]


def render_table(result: AdoptResult) -> Table:
    """The per-class report as a rich table, then unplaced devices and contradictions."""
    t = Table(title="adopt: observed devices placed on the plan")
    for col in ("class", "planned", "placed", "not placed", "contradicting"):
        t.add_column(col, justify="right" if col != "class" else "left")
    for c in shown_classes(result):
        t.add_row(c, *map(str, _row(result, c)))
    other = [u for u in result.unplaced if u.role not in CLASSES]
    t.add_row("other", "-", "-", str(len(other)), "-")
    return t


def detail_lines(result: AdoptResult, limit: int = 200) -> list[str]:
    """Unplaced devices, contradictions and notes, one line each (the first ``limit``)."""
    lines = [f"not placed: {u.device} ({u.role}): {u.why}" for u in result.unplaced]
    lines += [
        f"placed with {c} confidence: {d} as {result.placed[d]}: {b}"
        for d, (c, b) in sorted(result.confidence.items())
        if c != "high"
    ]
    lines += [
        f"contradicts the plan: {d} ({k}): {w} — left to drift" for k, d, w in result.contradictions
    ]
    lines += [
        f"other host: {o.device} on {o.leaf} port {o.port} ({o.why}; not placed, known to drift)"
        for o in result.others
    ]
    if len(lines) > limit:
        lines = [*lines[:limit], f"… {len(lines) - limit} more (see --format json)"]
    return lines + [f"note: {n}" for n in result.notes]


def _row(result: AdoptResult, c: str) -> tuple[int, int, int, int]:
    return (
        result.planned.get(c, 0),
        result.counts.get(c, 0),
        sum(1 for u in result.unplaced if u.role == c),
        sum(1 for k, _, _ in result.contradictions if k == c),
    )


def render_markdown(result: AdoptResult) -> str:
    """The report as Markdown (for a PR or an issue)."""
    out = ["## adopt", "", "| class | planned | placed | not placed | contradicting |"]
    out.append("|---|---:|---:|---:|---:|")
    for c in shown_classes(result):
        out.append(f"| {c} | " + " | ".join(map(str, _row(result, c))) + " |")
    if result.unplaced:
        out += ["", "### Not placed", ""]
        out += [f"- `{u.device}` ({u.role}): {u.why}" for u in result.unplaced]
    if result.others:
        out += ["", "### Other hosts (login / controller / storage: known, not placed)", ""]
        out += [f"- `{o.device}` on `{o.leaf}` port {o.port}: {o.why}" for o in result.others]
    if result.contradictions:
        out += ["", "### Contradicting the plan (left to `drift`)", ""]
        out += [f"- `{d}` ({k}): {w}" for k, d, w in result.contradictions]
    if result.notes:
        out += ["", *(f"> {n}" for n in result.notes)]
    return "\n".join(out) + "\n"
