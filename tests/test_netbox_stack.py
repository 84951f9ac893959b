"""NetBox as the inventory, against a real NetBox (scripts/netbox.sh) and the real Pulumi CLI.

Every count comes from NetBox's REST API, never from the store under test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.inventory.netbox_client import NetBoxClient

from .pulumi_project import REPO_ROOT, make_project, preview_steps, pulumi

pytestmark = [pytest.mark.netbox, pytest.mark.pulumi, pytest.mark.slow]

CLI = str(REPO_ROOT / ".venv" / "bin" / "fabric-stack")

# Sizes: NetBox spends ~0.3 s per interface and ~1.4 s per cable on this (shared, loaded)
# 2-core machine, so the suite grows 16 → 32 GPUs (280 → 304 cables) rather than the
# issue's 128 → 512 (448 → ~1,800 cables); bench/bench_netbox.py measures the large case.
SMALL, BIG = 16, 32
FREE_PORT = "1/10/1"  # a leaf port the 16-GPU plan leaves free (downlinks 1/1/x, uplinks 1/17/1…)


def intent_for(gpus: int) -> Any:
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=gpus))))


def _stack(tmp: Path, env: dict[str, str], url: str, token: str, name: str, gpus: int) -> Path:
    proj = make_project(tmp)
    pulumi(proj, env, "stack", "init", name)
    pulumi(proj, env, "config", "set", "fabric:gpus", str(gpus))
    pulumi(proj, env, "config", "set", "fabric:inventory", f"netbox+{url}")
    pulumi(proj, env, "config", "set", "--secret", "fabric:netboxToken", token)
    return proj


def _site(api: NetBoxClient, stack: str) -> int | None:
    got = api.select("dcim/sites", {"slug": stack})
    return int(got[0]["id"]) if got else None


def _counts(api: NetBoxClient) -> dict[str, int]:
    """Everything in NetBox that a stack writes, counted through the API."""
    return {
        e: api.count(e)
        for e in ("dcim/devices", "dcim/interfaces", "dcim/cables", "ipam/prefixes", "ipam/vlans")
    }


def _expected(intent: Any) -> dict[str, int]:
    devices = {c.a_device for c in intent.cables} | {c.b_device for c in intent.cables}
    devices |= {s.name for s in intent.switches} | {n.node for n in intent.nics}
    ports = {(c.a_device, c.a_port) for c in intent.cables}
    ports |= {(c.b_device, c.b_port) for c in intent.cables}
    ports |= {(n.node, n.nic) for n in intent.nics}
    return {"devices": len(devices), "interfaces": len(ports), "cables": len(intent.cables)}


def _site_counts(api: NetBoxClient, site: int) -> dict[str, int]:
    return {
        "devices": api.count("dcim/devices", {"site_id": site}),
        "interfaces": api.count("dcim/interfaces", {"site_id": site}),
        "cables": api.count("dcim/cables", {"site_id": site}),
    }


def _plan_cables(api: NetBoxClient, site: int) -> dict[str, tuple[str, str, str, str]]:
    """Cable label → (a device, a port, b device, b port) as NetBox holds them."""
    out = {}
    for c in api.select("dcim/cables", {"site_id": site}):
        a, b = c["a_terminations"][0]["object"], c["b_terminations"][0]["object"]
        out[c["label"]] = (a["device"]["name"], a["name"], b["device"]["name"], b["name"])
    return out


def test_up_edit_refresh_grow_destroy(
    tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    url, token = netbox
    api = NetBoxClient(url, token)
    before = _counts(api)
    proj = _stack(tmp_path, pulumi_env, url, token, "nb", SMALL)
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    site = _site(api, "nb")
    assert site is not None
    small = intent_for(SMALL)
    assert _site_counts(api, site) == _expected(small)
    want = {c.name: (c.a_device, c.a_port, c.b_device, c.b_port) for c in small.cables}
    assert _plan_cables(api, site) == want
    assert api.count("ipam/prefixes", {"cf_fabric_stack": "nb"}) == len(small.rails) + len(
        small.vlans
    )
    exported = pulumi(proj, pulumi_env, "stack", "export").stdout
    assert token not in exported and token.split(".")[-1] not in exported

    # An edit made in NetBox (a leaf downlink moved to a free port of the leaf; a port the
    # plan does not name at all would only be noted as unverified by drift) …
    cable = next(c for c in small.cables if c.role == "node_leaf")
    leaf = api.select("dcim/devices", {"site_id": site, "name": cable.b_device})[0]
    spare = api.create(
        "dcim/interfaces", [{"device": leaf["id"], "name": FREE_PORT, "type": "other"}]
    )[0]
    nb_cable = api.select("dcim/cables", {"site_id": site, "label": cable.name})[0]
    api.update(
        "dcim/cables",
        [
            {
                "id": nb_cable["id"],
                "b_terminations": [{"object_type": "dcim.interface", "object_id": spare["id"]}],
            }
        ],
    )
    # … shows in drift (read live) …
    drift = subprocess.run(
        [
            CLI,
            "drift",
            "--gpus",
            str(SMALL),
            "--netbox",
            url,
            "--netbox-site",
            "nb",
            "--format",
            "json",
        ],
        env={**os.environ, "NETBOX_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert drift.returncode == 1, drift.stderr
    findings = json.loads(drift.stdout)["findings"]
    assert any(FREE_PORT in json.dumps(f) for f in findings), findings
    # … and in refresh: the next up sees the difference and puts the plan back.
    pulumi(proj, pulumi_env, "refresh", "--yes", "--skip-preview")
    ops = Counter(s["op"] for s in preview_steps(proj, pulumi_env))
    assert ops["update"] == 1, ops
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    assert _plan_cables(api, site)[cable.name] == want[cable.name]
    api.delete("dcim/interfaces", [spare["id"]])

    # SMALL → BIG: only new objects; every cable that was there keeps its id.
    ids = {c["id"] for c in api.select("dcim/cables", {"site_id": site, "brief": 1})}
    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", str(BIG))
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    big = intent_for(BIG)
    assert _site_counts(api, site) == _expected(big)
    now = {c["id"] for c in api.select("dcim/cables", {"site_id": site, "brief": 1})}
    kept = {c.name for c in small.cables} & {c.name for c in big.cables}
    assert len(ids & now) >= len(kept)

    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview")
    assert _counts(api) == before


def test_killed_up_then_rerun_leaves_no_duplicates(
    tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    from .test_stack_integration import _recover

    url, token = netbox
    api = NetBoxClient(url, token)
    before = _counts(api)
    proj = _stack(tmp_path, pulumi_env, url, token, "it", BIG)
    proc = subprocess.Popen(
        [str(REPO_ROOT / ".venv/bin/pulumi"), "up", "--yes", "--skip-preview", "--non-interactive"],
        cwd=proj,
        env=pulumi_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        site = _site(api, "it")
        if site is not None and api.count("dcim/cables", {"site_id": site}) >= 100:
            break
        time.sleep(0.5)
    assert proc.poll() is None, "up finished before it could be killed; grow the change"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    site = _site(api, "it")
    assert site is not None
    intent = intent_for(BIG)
    assert api.count("dcim/cables", {"site_id": site}) < len(intent.cables)  # really half-way

    _recover(proj, pulumi_env)
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    assert _site_counts(api, site) == _expected(intent)
    labels = Counter(c["label"] for c in api.select("dcim/cables", {"site_id": site}))
    assert max(labels.values()) == 1
    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview")
    assert _counts(api) == before


def test_wrong_token_and_unreachable_are_one_line(
    tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    url, token = netbox
    api = NetBoxClient(url, token)
    before = _counts(api)
    proj = _stack(tmp_path, pulumi_env, url, "nbt_wrong.token", "bad", SMALL)
    r = pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview", check=False)
    assert r.returncode != 0
    assert "the API token was refused (403" in r.stdout + r.stderr
    assert "nbt_wrong.token" not in r.stdout + r.stderr
    assert _counts(api) == before and _site(api, "bad") is None

    listing = subprocess.run(
        [CLI, "inventory", "--inventory", "netbox+http://127.0.0.1:9"],
        env={**os.environ, "NETBOX_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listing.returncode == 2
    lines = listing.stderr.strip().splitlines()
    assert len(lines) == 1 and "unreachable" in lines[0], listing.stderr
