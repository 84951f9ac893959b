"""Renaming devices in an existing stack, with the real Pulumi CLI: renames, not delete+create.

A stack is `up` with the plan's default names; then the site's names arrive
(``fabric:naming`` templates plus a ``fabric:names`` file). The preview must show
every renamed resource as a rename (aliases to the planned name) and delete nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric_stack.adapters.inventory import open_store
from tests.pulumi_project import make_project, preview_steps, pulumi, resource_name

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

GPUS = 16
"""The smallest fabric with every device kind the rename touches: 2 servers (one renamed by
the template, one by the names file, which wins), 8 leaves, 4 spines and every cable role.
The rename is per resource (``components.fabric.renamed``), so more servers prove nothing
more; at cable granularity 128 GPUs were ~600 resources per engine pass, 16 are ~330."""


@pytest.mark.parametrize("granularity", ["bundle", "cable"])
def test_renaming_every_device_previews_renames_and_no_delete(
    tmp_path: Path, pulumi_env: dict[str, str], granularity: str
) -> None:
    proj = make_project(tmp_path)
    db = tmp_path / "inventory.db"
    pulumi(proj, pulumi_env, "stack", "init", "it")
    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", str(GPUS))
    pulumi(proj, pulumi_env, "config", "set", "fabric:granularity", granularity)
    pulumi(proj, pulumi_env, "config", "set", "fabric:inventory", f"sqlite:///{db}")
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")

    naming = {"server": "dgx{index:04d}", "leaf": "ib-leaf-su{su}-r{rail}"}
    pulumi(proj, pulumi_env, "config", "set", "--path", "fabric:naming.server", naming["server"])
    pulumi(proj, pulumi_env, "config", "set", "--path", "fabric:naming.leaf", naming["leaf"])
    (proj / "names.csv").write_text("planned,actual\nspine-01,ib-spine-a\nsu1-node02,gpu-b02\n")
    pulumi(proj, pulumi_env, "config", "set", "fabric:names", "names.csv")

    steps = preview_steps(proj, pulumi_env)
    ops: dict[str, int] = {}
    for s in steps:
        ops[s["op"]] = ops.get(s["op"], 0) + 1
    assert not set(ops) & {"delete", "replace", "create-replacement", "delete-replaced"}, ops
    assert "create" not in ops, ops
    names = {resource_name(s["urn"]) for s in steps}
    # 2 servers, 8 leaves and one spine renamed: their records, bundles and NIC groups.
    expect = (
        ("dgx0001/nics", "gpu-b02/nics", "ib-leaf-su1-r3/downlinks")
        if granularity == "bundle"
        else ("dgx0001:mlx5_0", "gpu-b02:mlx5_7", "ib-leaf-su1-r3:1/17/1")
    )
    for new in ("ib-leaf-su1-r3", "ib-spine-a", *expect):
        assert new in names, new
    assert not {"su1-node01", "su1-r3-leaf", "spine-01"} & names
    # The switch records now carry the site names (the inventory gets them on `up`).
    shown = json.dumps([s for s in steps if resource_name(s["urn"]) == "ib-spine-a"])
    assert "ib-spine-a" in shown
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    after = preview_steps(proj, pulumi_env)
    assert {s["op"] for s in after} == {"same"}
    # The update moved each renamed row: the inventory holds the site's names only.
    store = open_store(f"sqlite:///{db}")
    switches = {r["name"] for r in store.list_records("Switch", "it")}
    assert {"ib-spine-a", "ib-leaf-su1-r3"} <= switches
    assert not {"spine-01", "su1-r3-leaf"} & switches
    cables = {r["name"] for r in store.list_records("Cable", "it")}
    assert "ib-leaf-su1-r3:1/17/1" in cables
    assert not any(c.startswith(("su1-r3-leaf:", "su1-node01:")) for c in cables)
    if granularity == "bundle":
        # A renamed stack destroys. Once is enough: the Switch records go through the
        # provider delete that Cable and RdmaNic share (at cable granularity the destroy
        # was 43 of 240 s, and asserts nothing but its exit status).
        pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview")
