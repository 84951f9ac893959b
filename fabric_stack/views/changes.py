"""Renderings of a ChangeSummary: rich for people, Markdown for a PR comment, JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.adapters.pulumi.changes import ChangeSummary
from fabric_stack.analysis.growth_model import AddressChange, ConfigChange
from fabric_stack.sizing.managers import asked_vs_built

_OPS = ("add", "move", "update", "remove")
_SW_OPS = ("create", "replace", "update", "delete")
_SW_WORD = {"create": "add", "replace": "replace", "update": "change", "delete": "remove"}


def _headline(s: ChangeSummary) -> str:
    verb = "Plan" if s.operation == "preview" else "Applied"
    sw = {op: sum(s.switches_by_model.get(op, {}).values()) for op in _SW_OPS}
    cab: dict[str, int] = {op: 0 for op in _OPS}
    for ops in (s.cable_roles or s.cable_counts).values():
        for op, n in ops.items():
            cab[op] = cab.get(op, 0) + n
    parts = [
        f"{sw['create']} switches to add" if sw["create"] else "",
        f"{sw['delete']} to remove" if sw["delete"] else "",
        f"{sw['replace']} to replace" if sw["replace"] else "",
        f"{cab['add']} cables to add" if cab["add"] else "",
        f"{cab['move']} to re-patch" if cab["move"] else "",
        f"{cab['remove']} to remove" if cab["remove"] else "",
    ]
    text = ", ".join(p for p in parts if p) or "no switch or cable changes"
    short = asked_vs_built(s.gpus_requested, s.gpus_built, s.servers_removed)
    return f"{verb} for stack {s.stack}: {text}." + (f" {short}." if short else "")


def _groups_text(groups: dict[str, dict[str, int]]) -> str:
    """``bgp +8 −8, ports +64`` from a config change's groups."""
    parts = []
    for g, n in groups.items():
        signs = [f"+{n['added']}" if n["added"] else "", f"−{n['removed']}" if n["removed"] else ""]
        parts.append(f"{g} {' '.join(x for x in signs if x)}")
    return ", ".join(parts)


def _growth_tables(s: ChangeSummary, max_rows: int) -> list[RenderableType]:
    """The "Config changes" and "Address changes" sections (nothing when not compared)."""
    if not s.compared:
        return (
            [Text(f"Config and address changes: not compared: {s.not_compared}")]
            if (s.not_compared)
            else []
        )
    out: list[RenderableType] = []
    t = Table(title=f"Config changes ({len(s.config_changes)} devices)", title_justify="left")
    for col in ("device", "", "added", "removed", "by group"):
        t.add_column(col, justify="right" if col in ("added", "removed") else "left")
    for c in s.config_changes[:max_rows]:
        t.add_row(
            c.device,
            "new" if c.new else "",
            str(c.added),
            str(c.removed),
            _groups_text(c.groups),
            style="green" if c.new else "",
        )
    if len(s.config_changes) > max_rows:
        t.add_row(f"… {len(s.config_changes) - max_rows} more (see --format json)", "", "", "", "")
    out.append(t)
    if not s.address_changes:
        out.append(
            Text("Address changes: none (every existing allocation is unchanged).", style="green")
        )
        return out
    t = Table(title=f"Address changes ({len(s.address_changes)})", title_justify="left")
    why = any(a.reason for a in s.address_changes)
    for col in ("object", "before", "after", *(("reason",) if why else ())):
        t.add_column(col)
    for a in s.address_changes[:max_rows]:
        t.add_row(a.object, a.before, a.after, *((a.reason,) if why else ()), style="red")
    if len(s.address_changes) > max_rows:
        more = f"… {len(s.address_changes) - max_rows} more (see --format json)"
        t.add_row(more, "", "", *(("",) if why else ()))
    out.append(t)
    out += [Text(f"Caveat: {c}.", style="yellow") for c in caveats_of(s.address_changes)]
    return out


def caveats_of(address_changes: list[AddressChange]) -> list[str]:
    """Each distinct caveat of the address changes, once, in first-seen order."""
    return list(dict.fromkeys(a.caveat for a in address_changes if a.caveat))


def growth_markdown(
    config_changes: list[ConfigChange], address_changes: list[AddressChange], max_rows: int = 50
) -> list[str]:
    """Markdown lines of the "Config changes" and "Address changes" sections."""
    out = [f"#### Config changes ({len(config_changes)} devices)", ""]
    if config_changes:
        out += ["| device | | added | removed | by group |", "|---|---|---:|---:|---|"]
        for c in config_changes[:max_rows]:
            out.append(
                f"| {c.device} | {'new' if c.new else ''} | {c.added} | {c.removed} "
                f"| {_groups_text(c.groups)} |"
            )
        if len(config_changes) > max_rows:
            out.append(f"| … {len(config_changes) - max_rows} more | | | | |")
    out += ["", f"#### Address changes ({len(address_changes)})", ""]
    if not address_changes:
        return [*out, "None: every existing allocation is unchanged.", ""]
    if any(a.reason for a in address_changes):
        out += ["| object | before | after | reason |", "|---|---|---|---|"]
        out += [
            f"| {a.object} | {a.before} | {a.after} | {a.reason} |"
            for a in address_changes[:max_rows]
        ]
        if len(address_changes) > max_rows:
            out.append(f"| … {len(address_changes) - max_rows} more | | | |")
        for caveat in caveats_of(address_changes):
            out += ["", f"> **Caveat:** {caveat}."]
        return [*out, ""]
    out += ["| object | before | after |", "|---|---|---|"]
    out += [f"| {a.object} | {a.before} | {a.after} |" for a in address_changes[:max_rows]]
    if len(address_changes) > max_rows:
        out.append(f"| … {len(address_changes) - max_rows} more | | |")
    return [*out, ""]


def _type_rows(s: ChangeSummary) -> tuple[str, str, dict[str, dict[str, int]]]:
    """(title, column, rows) of the cable-type table: the part each cable is ordered as,
    counted as `bom`'s order list counts it (a splitter once) when the recorded spec reads
    back; else the records' own type, one row per link."""
    if s.cable_parts:
        return "Cables by part (as `bom` orders them)", "part", s.cable_parts
    return "Cables by type (as recorded)", "type", s.cable_types


def render_changes(s: ChangeSummary, max_rows: int = 40) -> RenderableType:
    """Rich renderable grouped by role: switches by model, cables by role/type, ports touched."""
    parts: list[RenderableType] = [Text(_headline(s), style="bold")]
    if s.switches:
        t = Table(title="Switches", title_justify="left")
        t.add_column("op")
        t.add_column("model")
        t.add_column("count", justify="right")
        t.add_column("switches")
        for op in _SW_OPS:
            for model, n in sorted(s.switches_by_model.get(op, {}).items()):
                names = [x.name for x in s.switches if x.op == op and x.model == model]
                shown = ", ".join(names[:12]) + (
                    f", … {len(names) - 12} more" if len(names) > 12 else ""
                )
                t.add_row(
                    _SW_WORD[op],
                    model,
                    str(n),
                    shown,
                    style={"create": "green", "delete": "red", "replace": "magenta"}.get(op, ""),
                )
        parts.append(t)
    if s.cable_counts:
        t = Table(title="Cables by role", title_justify="left")
        t.add_column("role")
        for op in _OPS:
            t.add_column(op, justify="right")
        for role, ops in (s.cable_roles or s.cable_counts).items():
            t.add_row(role, *(str(ops.get(op, 0) or "") for op in _OPS))
        parts.append(t)
        title, head, rows = _type_rows(s)
        t = Table(title=title, title_justify="left")
        t.add_column(head)
        for op in _OPS:
            t.add_column(op, justify="right")
        for typ, ops in rows.items():
            t.add_row(typ, *(str(ops.get(op, 0) or "") for op in _OPS))
        parts.append(t)
    moves = [c for c in s.cables if c.op in ("move", "remove")]
    if moves:
        t = Table(title="Re-patches and removals (existing cables)", title_justify="left")
        t.add_column("cable")
        t.add_column("from")
        t.add_column("to")
        for c in moves[:max_rows]:
            src = (
                f"{c.old_b_device} {c.old_b_port}" if c.op == "move" else f"{c.b_device} {c.b_port}"
            )
            t.add_row(c.name, src, f"{c.b_device} {c.b_port}" if c.op == "move" else "(remove)")
        if len(moves) > max_rows:
            t.add_row(f"… {len(moves) - max_rows} more (see --format json)", "", "")
        parts.append(t)
    if s.ports_touched:
        t = Table(title="Ports touched on existing switches", title_justify="left")
        t.add_column("switch")
        t.add_column("ports", justify="right")
        t.add_column("which")
        for sw, ports in s.ports_touched.items():
            shown = ", ".join(ports[:10]) + (" …" if len(ports) > 10 else "")
            t.add_row(sw, str(len(ports)), shown)
        parts.append(t)
    parts.extend(_growth_tables(s, max_rows))
    if s.policy_violations:
        t = Table(title="Policy violations", title_justify="left")
        t.add_column("level")
        t.add_column("policy")
        t.add_column("message")
        for v in s.policy_violations:
            t.add_row(
                v.get("level", ""),
                v.get("policy", ""),
                v.get("message", ""),
                style="red" if v.get("level") == "mandatory" else "yellow",
            )
        parts.append(t)
    steps = ", ".join(f"{n} {op}" for op, n in s.resource_ops.items())
    parts.append(Text(f"Resources: {steps}", style="dim"))
    return Group(*parts)


def changes_markdown(s: ChangeSummary, max_rows: int = 50) -> str:
    """Markdown for a pull-request comment."""
    out = [f"### {_headline(s)}", ""]
    if s.switches:
        out += ["| Switches | model | count | names |", "|---|---|---:|---|"]
        for op in _SW_OPS:
            for model, n in sorted(s.switches_by_model.get(op, {}).items()):
                names = [x.name for x in s.switches if x.op == op and x.model == model]
                out.append(
                    f"| {_SW_WORD[op]} | {model} | {n} | {', '.join(names[:20])}"
                    f"{' …' if len(names) > 20 else ''} |"
                )
        out.append("")
    if s.cable_counts:
        out += ["| Cables (role) | " + " | ".join(_OPS) + " |", "|---|" + "---:|" * len(_OPS)]
        for role, ops in (s.cable_roles or s.cable_counts).items():
            out.append(f"| {role} | " + " | ".join(str(ops.get(op, 0)) for op in _OPS) + " |")
        out.append("")
        _, head, rows = _type_rows(s)
        out += [f"| Cables ({head}) | " + " | ".join(_OPS) + " |", "|---|" + "---:|" * len(_OPS)]
        for typ, ops in rows.items():
            out.append(f"| {typ} | " + " | ".join(str(ops.get(op, 0)) for op in _OPS) + " |")
        out.append("")
    moves = [c for c in s.cables if c.op in ("move", "remove")]
    if moves:
        out += [
            "<details><summary>Re-patches and removals</summary>",
            "",
            "| cable | from | to |",
            "|---|---|---|",
        ]
        for c in moves[:max_rows]:
            if c.op == "move":
                out.append(
                    f"| {c.name} | {c.old_b_device} {c.old_b_port} | {c.b_device} {c.b_port} |"
                )
            else:
                out.append(f"| {c.name} | {c.b_device} {c.b_port} | (remove) |")
        if len(moves) > max_rows:
            out.append(f"| … {len(moves) - max_rows} more | | |")
        out += ["", "</details>", ""]
    if s.ports_touched:
        n = sum(len(p) for p in s.ports_touched.values())
        out.append(f"Ports touched on {len(s.ports_touched)} existing switches: {n}.")
        out.append("")
    if s.compared:
        out += growth_markdown(s.config_changes, s.address_changes, max_rows)
    elif s.not_compared:
        out += [f"Config and address changes: not compared: {s.not_compared}.", ""]
    if s.policy_violations:
        out += ["| Policy | level | message |", "|---|---|---|"]
        out += [
            f"| {v.get('policy')} | {v.get('level')} | {v.get('message', '').replace('|', '/')} |"
            for v in s.policy_violations
        ]
        out.append("")
    out.append("Resources: " + ", ".join(f"{n} {op}" for op, n in s.resource_ops.items()))
    return "\n".join(out) + "\n"


def changes_json(s: ChangeSummary) -> dict[str, Any]:
    """JSON document of the summary (stable keys: switches, cables, cable_counts, …)."""
    data = s.model_dump(mode="json")
    data["headline"] = _headline(s)
    data["destructive"] = s.destructive
    return data
