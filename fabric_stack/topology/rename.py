"""The rename step: a topology with the site's device names, each device keeping its planned one.

:func:`rename_topology` is the last step of :func:`~fabric_stack.topology.build.build_topology`
(see :mod:`fabric_stack.naming.site` for the templates and the names file). It runs once,
in the pure pipeline, so no adapter ever derives a name itself: links, NICs, carriers and
racks are rewritten here, and a link's id stays "its a-end" (``<site name>:<port>``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.naming.site import LABEL_TEXT, NamingTemplates, SiteName, SiteNames, check_label
from fabric_stack.topology.model import Device, FabricTopology, Link, NetworkPlan, Nic

_ACCESS = re.compile(r"^su(\d+)-([a-z]+)-([a-z])(\d+)$")
_SERVER_RACK = re.compile(r"^su(\d+)-rack\d+$")


def _pod_of(topo: FabricTopology, su: int) -> int:
    plan = topo.plan
    return (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 and su else 0


def _fields(topo: FabricTopology, d: Device, index: int) -> dict[str, object]:
    """The template fields of device ``d`` (``index``: its number within role and plane)."""
    if d.role == "server":
        return {"su": d.su, "index": index, "pod": _pod_of(topo, d.su)}
    if d.role == "leaf":
        return {"su": d.su, "rail": d.rail, "index": index, "pod": d.pod, "plane": d.plane}
    if d.role == "spine":
        return {"index": index, "pod": d.pod, "plane": d.plane}
    if d.role == "core":
        per = max(1, topo.plan.cores_per_group)
        return {"index": index, "group": (index - 1) // per + 1, "plane": d.plane}
    m = _ACCESS.match(d.name)
    side = m.group(3) if m else "a"
    return {"su": d.su, "index": index, "network": d.role, "side": side}


def _template_names(topo: FabricTopology, naming: NamingTemplates) -> dict[str, tuple[str, str]]:
    """planned name → (templated name, template key) for every device a template covers."""
    out: dict[str, tuple[str, str]] = {}
    counters: dict[tuple[str, int], int] = {}
    for d in topo.devices:
        key = (d.role, d.plane)
        counters[key] = counters.get(key, 0) + 1
        tpl, tkey = naming.for_role(d.role)
        if tpl:
            out[d.name] = (tpl.format(**_fields(topo, d, counters[key])), tkey)
    return out


def _rack_names(topo: FabricTopology, naming: NamingTemplates) -> dict[str, str]:
    """Server rack → templated rack name (rack numbers count across the cluster)."""
    if not naming.rack:
        return {}
    out: dict[str, str] = {}
    for d in topo.devices:
        m = _SERVER_RACK.match(d.rack) if d.role == "server" else None
        if m and d.rack not in out:
            out[d.rack] = naming.rack.format(su=int(m.group(1)), index=len(out) + 1)
    if len(set(out.values())) < len(out):
        raise SpecError(
            "naming.rack",
            f"{naming.rack!r} gives two racks the same name",
            "add {index}, which numbers the server racks across the cluster",
        )
    return out


def _row_error(names: SiteNames, row: SiteName, problem: str) -> Exception:
    if names.file and row.line:
        return InputFileError(names.file, problem, row.line)
    return SpecError(names.where(row), problem)


def _plan_names(
    topo: FabricTopology, naming: NamingTemplates, names: SiteNames
) -> tuple[dict[str, str], dict[str, SiteName]]:
    """(planned → site name for every renamed device, planned → names-file row)."""
    known = {d.name for d in topo.devices}
    templated = _template_names(topo, naming)
    rows: dict[str, SiteName] = {}
    for row in names.rows:
        if row.planned not in known:
            raise _row_error(
                names,
                row,
                f"planned name {row.planned!r} is not in the plan (the plan's names look like "
                f"{', '.join(sorted(known)[:3])}; give the default plan name in 'planned')",
            )
        rows[row.planned] = row
    mapping = {p: n for p, (n, _) in templated.items()}
    mapping.update({p: r.actual for p, r in rows.items()})
    for p, n in mapping.items():
        if n != p and n in known:
            # A swap of plan names (su1-r1-leaf ↔ su1-r2-leaf) would make every planned-name
            # reference (drift's "planned:", the policies' leaf-name rule) ambiguous.
            problem = f"{p} cannot take {n!r}: that is the plan's name of another device"
            if p in rows:
                raise _row_error(names, rows[p], problem)
            key = templated[p][1]
            raise SpecError(f"naming.{key}", problem, "give names that are not plan names")
    owner: dict[str, str] = {}
    for d in topo.devices:
        name = mapping.get(d.name, d.name)
        first = owner.get(name)
        if first is not None:
            raise _collision(names, naming, rows, templated, name, first, d.name)
        owner[name] = d.name
    for p, (n, key) in templated.items():
        bad = check_label(n)
        if bad and p not in rows:
            raise SpecError(f"naming.{key}", f"gives {bad} for {p}", LABEL_TEXT)
    return {p: n for p, n in mapping.items() if n != p}, rows


def _collision(
    names: SiteNames,
    naming: NamingTemplates,
    rows: dict[str, SiteName],
    templated: dict[str, tuple[str, str]],
    name: str,
    first: str,
    second: str,
) -> Exception:
    for p in (second, first):
        if p in rows:
            other = first if p == second else second
            return _row_error(
                names,
                rows[p],
                f"actual name {name!r} is also the name of {other} (every name must be unique)",
            )
    key = templated.get(second, templated.get(first, ("", "server")))[1]
    tpl = naming.for_role(key)[0] or getattr(naming, key, "")
    return SpecError(
        f"naming.{key}",
        f"{tpl!r} gives {name!r} to both {first} and {second}",
        "every name must be unique: add a field that tells them apart, e.g. {index}",
    )


def rename_topology(topo: FabricTopology) -> FabricTopology:
    """``topo`` with the spec's templates and names-file rows applied (itself when none).

    Every device keeps its planned name in :attr:`Device.planned`; racks and rack units
    from the names file replace the plan's. Raises SpecError (a template) or
    InputFileError (a names-file row, by line) for an unknown planned name, a name
    given to two devices, or a name no switch OS / Kubernetes accepts.
    """
    spec = topo.plan.spec
    naming, names = spec.naming, spec.names
    if not naming.any() and not names.rows:
        return topo
    mapping, rows = _plan_names(topo, naming, names)
    racks = _rack_names(topo, naming)

    def n(name: str) -> str:
        return mapping.get(name, name)

    devices = []
    for d in topo.devices:
        row = rows.get(d.name)
        devices.append(
            replace(
                d,
                name=n(d.name),
                planned=d.name,
                rack=(row.rack if row and row.rack else racks.get(d.rack, d.rack)),
                position=(row.u if row and row.u else d.position),
            )
        )
    nics = tuple(replace(x, node=n(x.node)) if x.node in mapping else x for x in topo.nics)
    links = tuple(_rename_link(link, mapping) for link in topo.links)
    networks = tuple(
        NetworkPlan(
            net.name,
            net.title,
            net.attach,
            net.vlans,
            net.subnets,
            tuple(n(c) for c in net.carriers),
            net.mtu,
        )
        for net in topo.networks
    )
    return FabricTopology(topo.plan, tuple(devices), nics, links, networks)


def _rename_link(link: Link, mapping: dict[str, str]) -> Link:
    a, b = mapping.get(link.a_device), mapping.get(link.b_device)
    if a is None and b is None:
        return link
    a = a or link.a_device
    return replace(link, id=f"{a}:{link.a_port}", a_device=a, b_device=b or link.b_device)


def planned_names(topo: FabricTopology) -> dict[str, str]:
    """Site name → planned name of every renamed device (empty when nothing is renamed)."""
    return {d.name: d.planned for d in topo.devices if d.planned and d.planned != d.name}


__all__ = ["Nic", "planned_names", "rename_topology"]
