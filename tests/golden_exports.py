"""Golden exports of the seed cluster (default spec): cabling, BOM, diagram, checks.

Also the exact messages of the bad-input scenarios (a PCIe map naming an unknown
GPU, more NICs than rails, a duplicated rail VLAN), so a changed wording shows
up as a golden diff.
"""

from __future__ import annotations

import json

from fabric_stack.errors import SpecError
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import build_topology
from fabric_stack.topology.verify import verify_topology
from fabric_stack.views.bom import bill_of_materials, bom_json, bom_markdown
from fabric_stack.views.diagram import diagram_svg
from fabric_stack.views.exports import links_csv, links_json, topo_file, ufm_p2p


def _pcie(last_gpus: list[int]) -> list[dict[str, object]]:
    return [
        {"name": "pcie0", "numa": 0, "gpus": [0, 1], "nics": [0, 1]},
        {"name": "pcie1", "numa": 0, "gpus": [2, 3], "nics": [2, 3]},
        {"name": "pcie2", "numa": 1, "gpus": [4, 5], "nics": [4, 5]},
        {"name": "pcie3", "numa": 1, "gpus": last_gpus, "nics": [6, 7]},
    ]


NEGATIVE: dict[str, dict[str, object]] = {
    "pcie-map-unknown-gpu": {
        "gpus": 16,
        "node_profile": {
            "name": "custom-8",
            "gpus": 8,
            "rdma_nics": 8,
            "pcie_switches": _pcie([6, 9]),
        },
    },
    "more-nics-than-rails": {
        "gpus": 16,
        "rails": 4,
        "node_profile": {
            "name": "custom-8",
            "gpus": 8,
            "rdma_nics": 8,
            "pcie_switches": _pcie([6, 7]),
        },
    },
    "duplicate-rail-vlan": {
        "fabric": "roce",
        "switch": "sn5600",
        "networks": {"compute": {"rail_vlans": [101, 101, 103, 104, 105, 106, 107, 108]}},
    },
}
"""Bad specs and their one-line errors (the CLI prefixes the file name and ``error:``)."""


def _negative_messages() -> str:
    out = []
    for name, data in NEGATIVE.items():
        try:
            validate_spec(data)
        except SpecError as exc:
            out.append(f"{name}: {exc.message}")
        else:  # pragma: no cover - a golden diff shows it
            out.append(f"{name}: (accepted)")
    return "\n".join(out) + "\n"


def generate() -> dict[str, str]:
    """The seed cluster's exports, BOM, diagram and checks; the bad-input messages."""
    topo = build_topology(size_fabric(validate_spec()))
    bom = bill_of_materials(topo)
    report = verify_topology(topo)
    return {
        "seed/cabling.csv": links_csv(topo),
        "seed/cabling.json": links_json(topo),
        "seed/fabric.topo": topo_file(topo),
        "seed/ufm-p2p.csv": ufm_p2p(topo),
        "seed/bom.json": json.dumps(bom_json(bom), indent=2, ensure_ascii=False) + "\n",
        "seed/bom.md": bom_markdown(bom),
        "seed/diagram.svg": diagram_svg(topo),
        "seed/verify.json": json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False)
        + "\n",
        "negative/messages.txt": _negative_messages(),
    }
