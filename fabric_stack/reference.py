"""Reference documentation generated from the models (``docs/spec-reference.md``).

``python -m fabric_stack.reference > docs/spec-reference.md`` regenerates it;
``tests/test_reference.py`` fails when the committed file is out of date, so
the field descriptions in the models are the only place they are written.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from .catalog import CATALOG
from .networks import AccessNetwork, ComputeNetwork, Networks
from .nodes import PROFILES, NodeProfile, PcieSwitch
from .spec import FabricSpec, InfinibandSettings, RoceQos


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _default(model: type[BaseModel], name: str) -> str:
    field = model.model_fields[name]
    if field.is_required():
        return "required"
    value: Any = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below" if not isinstance(value, NodeProfile) else f"`{value.name}`"
    if value in (0, None) and name in ("rails", "su_nodes", "rail_vlans", "mtu"):
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
        "Generated from the models by `python -m fabric_stack.reference`; do not edit by hand.",
        "",
        "A spec file (`--config cluster.yaml`) uses these keys at the top level; a Pulumi",
        "stack uses the same keys in camelCase under the `fabric:` namespace",
        "(`fabric:gpusPerNode: 8`); nested structured config may use either case.",
        "Stack-only keys: `fabric:inventory` (inventory URL, a secret when it has a password)",
        "and `fabric:granularity` (`bundle` or `cable`).",
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
    ):
        out += [f"## {title}", "", *_table(model), ""]
    out += [
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
        out.append(f"| `{p.name}` | {p.gpus} | {p.rdma_nics} × {p.nic_model} | {layout} |")
    out += [
        "",
        "## Switch catalog",
        "",
        "| key | model | protocol | cages | port modes | RU | power | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in CATALOG.values():
        modes = ", ".join(f"{x.speed_gbps}G × {m.cages * x.ports_per_cage}" for x in m.modes)
        power = f"{m.power_w} W ({m.power_basis})" if m.power_w else "n/a"
        out.append(
            f"| `{m.key}` | {m.name} | {m.protocol} | {m.cages} × {m.cage_type} | {modes} | "
            f"{m.rack_units} | {power} | {m.source} |"
        )
    out += ["", "`generic-<radix>x<speed>` (e.g. `generic-64x400`) describes any other switch.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(spec_reference(), end="")
