"""Reference documentation generated from the models (``docs/spec-reference.md``).

``python -m fabric_stack.views.reference > docs/spec-reference.md`` regenerates it;
``tests/unit/test_reference.py`` fails when the committed file is out of date, so
the field descriptions in the models are the only place they are written.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from fabric_stack.hardware.cables import CABLE_FAMILIES, XDR_CABLE_FAMILIES
from fabric_stack.hardware.nodes import NodeProfile, PcieSwitch, ServerPort
from fabric_stack.hardware.server_profiles import PROFILES
from fabric_stack.hardware.switches import CATALOG, radix_at
from fabric_stack.intent.model import RESOURCE_KINDS
from fabric_stack.intent.wire import CABLE_SHARED, NIC_SHARED, cable_line, nic_line
from fabric_stack.naming.site import NamingTemplates, SiteName
from fabric_stack.spec.layout import LAYOUT_SOURCES, LayoutSettings
from fabric_stack.spec.model import TIER_SWITCH_KEYS, FabricSpec
from fabric_stack.spec.networks import AccessNetwork, ComputeNetwork, Networks
from fabric_stack.spec.sections import InfinibandSettings, RoceQos


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _default(model: type[BaseModel], name: str) -> str:
    field = model.model_fields[name]
    if field.is_required():
        return "required"
    value: Any = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below" if not isinstance(value, NodeProfile) else f"`{value.name}`"
    derived = ("rails", "su_nodes", "rail_vlans", "mtu", *TIER_SWITCH_KEYS, "uplink_gbps")
    if value in (0, None) and name in derived:
        return "derived (see description)"
    return f"`{value}`"


def _table(model: type[BaseModel], camel: bool = False) -> list[str]:
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for name, field in model.model_fields.items():
        key = _camel(name) if camel else name
        desc = (field.description or "").replace("|", "/")
        rows.append(f"| `{key}` | {_default(model, name)} | {desc} |")
    return rows


def spec_reference() -> str:
    """The Markdown reference of every spec field, stack config key and built-in table."""
    out = [
        "# fabric-stack spec reference",
        "",
        "Generated from the models by `python -m fabric_stack.views.reference`; "
        "do not edit by hand.",
        "",
        "A spec file (`--config cluster.yaml`) uses these keys at the top level; a Pulumi",
        "stack uses the same keys in camelCase under the `fabric:` namespace",
        "(`fabric:gpusPerNode: 8`); nested structured config may use either case.",
        "Stack-only keys: `fabric:inventory` (inventory URL, a secret when it has a password)",
        "and `fabric:granularity` (`bundle` or `cable`).",
        "`names` (YAML) / `fabric:names` (stack config) / `--names FILE` name a CSV names",
        "file with header `planned,actual` and optional `rack,u,serial,guid,mac`",
        "(a relative path is relative to the spec or stack file).",
        "",
        "## FabricSpec",
        "",
        *_table(FabricSpec),
        "",
    ]
    for title, model in (
        ("roce (RoceQos)", RoceQos),
        ("infiniband (InfinibandSettings)", InfinibandSettings),
        ("networks (Networks)", Networks),
        ("networks.compute (ComputeNetwork)", ComputeNetwork),
        ("networks.storage / inband / oob (AccessNetwork)", AccessNetwork),
        ("node_profile (NodeProfile)", NodeProfile),
        ("node_profile.pcie_switches[] (PcieSwitch)", PcieSwitch),
        (
            "node_profile.compute_ports[] / storage_ifaces[] / inband_ifaces[] (ServerPort)",
            ServerPort,
        ),
        ("naming (NamingTemplates)", NamingTemplates),
        ("names.rows[] (SiteName: one names-file row)", SiteName),
        ("layout (LayoutSettings)", LayoutSettings),
    ):
        out += [f"## {title}", "", *_table(model), ""]
    out += _plant_reference()
    out += _profiles_reference()
    out += [
        "",
        "## Switch catalog",
        "",
        "| key | model | protocol | cages | port modes | RU | power | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in CATALOG.values():
        modes = ", ".join(f"{x.speed_gbps}G × {radix_at(m, x.speed_gbps)}" for x in m.modes)
        power = f"{m.power_w} W ({m.power_basis})" if m.power_w else "n/a"
        out.append(
            f"| `{m.key}` | {m.name} | {m.protocol} | {m.cages} × {m.cage_type} | {modes} | "
            f"{m.rack_units} | {power} | {m.source} |"
        )
    out += ["", "`generic-<radix>x<speed>` (e.g. `generic-64x400`) describes any other switch.", ""]
    out += _records_reference()
    return "\n".join(out)


def _plant_reference() -> list[str]:
    """Where each layout default comes from, and the cable catalog with its sources."""
    out = ["### Where the layout defaults come from", ""]
    out += [f"- `{k}`: {v}." for k, v in LAYOUT_SOURCES.items()]
    out += [
        "",
        "## Cable catalog",
        "",
        "Cheapest medium first per speed and a-end; the plant takes the first family whose "
        "reach covers the run (docs/physical-plant.md). The `-xdr` families replace an 800G "
        "fibre family where an end is a Quantum-X800 (XDR) cage.",
        "",
        "| family | medium | speed | a-end | part | lengths (m) | per cable | optics | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for f in (*CABLE_FAMILIES, *XDR_CABLE_FAMILIES):
        optics = " / ".join(t.part for t in (f.a_optic, f.b_optic) if t) or "none"
        lengths = ", ".join(f"{x:g}" for x in f.lengths)
        # An unsplit 800G twin-port link takes two fibres: the BOM orders links × this.
        per = f"{f.links_per_cable}" + (
            f" ({f.cables_per_link} per link)" if f.cables_per_link > 1 else ""
        )
        out.append(
            f"| `{f.key}` | {f.medium} | {f.speed_gbps}G | {f.a_end} | {f.stem}xxx | {lengths} "
            f"| {per} | {optics} | {f.source} |"
        )
    return [*out, ""]


def _profiles_reference() -> list[str]:
    """The built-in server profiles: NIC, PCIe layout, named ports, source, what is unverified."""
    out = [
        "## Built-in node profiles",
        "",
        "| name | GPUs | NICs | PCIe layout |",
        "|---|---|---|---|",
    ]
    for p in PROFILES.values():
        layout = "; ".join(
            f"{s.name} (NUMA {s.numa}): GPU {','.join(map(str, s.gpus))} "
            f"/ NIC {','.join(map(str, s.nics))}"
            for s in p.pcie_switches
        )
        out.append(
            f"| `{p.name}` | {p.gpus} | {p.rdma_nics} × {p.nic_model} "
            f"(max {p.nic_max_gbps}G) | {layout} |"
        )
    out.append("")
    for p in PROFILES.values():
        out += [f"### `{p.name}`", "", p.description + ".", ""]
        rows = [("compute", i + 1, x) for i, x in enumerate(p.compute_ports)]
        rows += [("storage", i + 1, x) for i, x in enumerate(p.storage_ifaces)]
        rows += [("inband", i + 1, x) for i, x in enumerate(p.inband_ifaces)]
        if rows:
            out += [
                "| port | RDMA | netdev | PCIe switch | cage | UNVERIFIED |",
                "|---|---|---|---|---|---|",
            ]
            for net, i, x in rows:
                label = f"rail {i}" if net == "compute" else f"{net} {i}"
                cage = f"{x.cage} P{x.cage_port}" if x.cage else "own"
                out.append(
                    f"| {label} | `{x.rdma}` | {x.netdev or '(unknown)'} | "
                    f"{x.pcie_switch or '-'} | {cage} | {x.unverified or '-'} |"
                )
            out.append("")
        else:
            out += ["Rail NICs: `mlx5_0` … in rail order, one optic per port.", ""]
        out.append(f"Source: {p.source or '(none)'}.")
        if p.unverified:
            out.append(f"UNVERIFIED: {p.unverified}.")
        out.append("")
    return out


def _codes(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{k}`" for k in names)


def _records_reference() -> list[str]:
    out = [
        "## Pulumi resource records",
        "",
        "Every fabric resource (`pulumi-python:dynamic/fabric:<Kind>`) has two inputs:",
        "`record`, the record below as canonical JSON text (`pulumi preview --diff` shows it",
        "field by field; `fabric_stack.intent.wire.record_of` decodes it), and `inventory`,",
        '`{"url": …, "stack": …}` (the URL is a secret when it carries a password).',
        "",
        "A `CableBundle` record holds `name`, `device`, `side` (`downlinks`/`uplinks`), `role`,",
        f"`count`, `shared` (the fields its cables share: {_codes(CABLE_SHARED)})",
        f"and `cables`, one line each (`{cable_line(_CABLE_EXAMPLE)}`). An",
        f"`RdmaNicGroup` record holds `name`, `node`, `count`, `shared` ({_codes(NIC_SHARED)})",
        f"and `nics`, one line each (`{nic_line(_NIC_EXAMPLE)}`: NIC, rail, plane,",
        "its PCIe switch/NUMA node, each GPU it serves with its PCIe switch/NUMA node, and the",
        "leaf port). A member whose shared fields differ is listed as a full object instead.",
        "",
    ]
    for kind, model in RESOURCE_KINDS.items():
        out += [f"### {kind} ({model.__name__})", "", "| field | meaning |", "|---|---|"]
        for name, field in model.model_fields.items():
            out.append(f"| `{name}` | {(field.description or '').replace('|', '/')} |")
        out.append("")
    return out


_CABLE_EXAMPLE = {
    "a_device": "su1-r1-leaf",
    "a_port": "1/19/1",
    "b_device": "spine-05",
    "b_port": "1/1/1",
}
_NIC_EXAMPLE = {
    "nic": "mlx5_3",
    "rail": 4,
    "plane": 1,
    "pcie_switch": "pcie1",
    "numa": 0,
    "gpus": [3],
    "gpu_pcie_switches": ["pcie1"],
    "gpu_numas": [0],
    "leaf": "su1-r4-leaf",
    "leaf_port": "1/7/1",
}


if __name__ == "__main__":
    print(spec_reference(), end="")
