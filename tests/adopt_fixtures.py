"""Snapshots of a plan as a real site would report it: renamed devices, shuffled, miswired.

Built on the drift fixture writers (:mod:`tests.drift_fixtures`): the plan's compute
wires, every device renamed as a site would name it, k cable swaps between distinct
servers (each a miswire drift must report), the order shuffled, then written as an
``ibnetdiscover`` dump (NodeDescs ``dgx0312 mlx5_3`` or ``dgx0312 HCA-4``, switches
``MF0;<name>:MQM9700/U1``) or as lldpd JSON files of the switches (FQDN chassis names).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from fabric_stack.drift import PlanIndex
from fabric_stack.topology.build import FabricTopology
from fabric_stack.topology.model import FABRIC_ROLES
from tests.drift_fixtures import (
    Wire,
    clean_wires,
    ibnetdiscover_text,
    lldp_entries,
    lldpd_json,
    topology,
)


def site_names(topo: FabricTopology, rng: random.Random, access: bool = False) -> dict[str, str]:
    """planned → a random site name, unique, in the styles real sites use (``access``: the
    storage / in-band / OOB switches too)."""
    used: set[str] = set()
    out: dict[str, str] = {}
    styles = {
        "server": ["dgx{:04d}", "gpu-a{:03d}", "node{:05d}"],
        "leaf": ["ib-leaf-{:03d}", "leaf{:04d}", "r{:02d}-tor"],
        "spine": ["ib-spine-{:02d}", "spn{:03d}"],
        "core": ["core{:03d}"],
        "manager": ["ufm{:02d}", "sm-host-{:02d}"],
    }
    if access:
        styles |= {role: ["sw-{:04d}"] for role in ("storage", "inband", "oob")}
    style = {role: rng.choice(s) for role, s in styles.items()}
    for d in topo.devices:
        if d.role not in style:
            continue
        while True:
            name = style[d.role].format(rng.randrange(1, 10_000))
            if name not in used:
                break
        used.add(name)
        out[d.name] = name
    return out


def miswire(wires: list[Wire], k: int, rng: random.Random) -> tuple[list[Wire], list[str]]:
    """Swap the leaf ends of k pairs of server cables (all servers distinct). Returns the
    wires and the ids of the 2k cables moved."""
    server = [i for i, w in enumerate(wires) if w.role == "node_leaf"]
    rng.shuffle(server)
    out = list(wires)
    busy: set[str] = set()
    moved: list[str] = []
    pairs = 0
    for i in server:
        if pairs == k:
            break
        if out[i].a_dev in busy:
            continue
        j = next(
            (
                j
                for j in server
                if out[j].a_dev not in busy
                and out[j].a_dev != out[i].a_dev
                and out[j].b_dev != out[i].b_dev
            ),
            None,
        )
        if j is None:
            break
        wi, wj = out[i], out[j]
        out[i] = replace(wi, b_dev=wj.b_dev, b_port=wj.b_port)
        out[j] = replace(wj, b_dev=wi.b_dev, b_port=wi.b_port)
        busy |= {wi.a_dev, wj.a_dev}
        moved += [wi.id, wj.id]
        pairs += 1
    return out, moved


def renamed(wires: list[Wire], names: dict[str, str]) -> list[Wire]:
    """The wires with every device spelled by its site name."""
    return [replace(w, a_dev=names[w.a_dev], b_dev=names[w.b_dev]) for w in wires]


def site_snapshot(
    spec: dict[str, Any], seed: int, k: int, access: bool = False
) -> tuple[FabricTopology, dict[str, str], list[Wire], list[str]]:
    """(plan, planned → site name, renamed shuffled wires with k swaps, moved cable ids).

    ``access``: the storage, in-band and OOB cables too, their switches named ``sw-NNNN``
    (a site's generic switch names, nothing in them says the network)."""
    rng = random.Random(seed)
    topo = topology(spec)
    names = site_names(topo, rng, access)
    roles = None if access else FABRIC_ROLES
    wires, moved = miswire(clean_wires(topo, roles), k, rng)
    wires = renamed(wires, names)
    rng.shuffle(wires)
    return topo, names, wires, moved


_HCA = re.compile(r'"([a-z0-9-]+) mlx5_(\d+)"')


def write_ibnetdiscover(
    path: Path, topo: FabricTopology, names: dict[str, str], wires: list[Wire], hca_form: bool
) -> Path:
    """The dump of ``wires``; ``hca_form``: servers say ``HCA-N`` (MLNX_OFED) not ``mlx5_N``."""
    index = PlanIndex.from_topology(topo)
    switches = [names[d.name] for d in topo.switches("leaf", "spine", "core")]
    back = {site: plan for plan, site in names.items()}
    text = ibnetdiscover_text(index, wires, extra_switches=switches, planned=back)
    if hca_form:
        text = _HCA.sub(lambda m: f'"{m.group(1)} HCA-{int(m.group(2)) + 1}"', text)
    path.write_text(text, encoding="utf-8")
    return path


def write_lldp(
    directory: Path, topo: FabricTopology, names: dict[str, str], wires: list[Wire]
) -> Path:
    """lldpd JSON of every switch (neighbours by FQDN chassis name, port ids by name)."""
    directory.mkdir(parents=True, exist_ok=True)
    index = PlanIndex.from_topology(topo)
    for d in topo.switches("leaf", "spine", "core", "storage", "inband", "oob"):
        if d.name not in names:
            continue
        host = names[d.name]
        entries = lldp_entries(index, host, wires, fqdn=lambda n: f"{n}.dc1.example.net")
        (directory / f"{host}.json").write_text(json.dumps(lldpd_json(entries)), encoding="utf-8")
    return directory
