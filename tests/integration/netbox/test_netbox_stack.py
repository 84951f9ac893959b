"""NetBox as the inventory, against a real NetBox (scripts/netbox.sh) and the real Pulumi CLI.

Every count comes from NetBox's REST API, never from the store under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from tests.pulumi_project import REPO_ROOT, kill_session, make_project, preview_steps, pulumi

pytestmark = [pytest.mark.netbox, pytest.mark.pulumi, pytest.mark.slow]

CLI = str(REPO_ROOT / ".venv" / "bin" / "fabric-stack")

# `make test` / CI run 16 → 32 GPUs at 4:1 leaf oversubscription: 2 spines and 12 uplinks a
# leaf instead of 4 and 32 (122 cables grown to 146, not 282 to 306): every behaviour below
# (an up, a NetBox edit seen by drift and refresh, growth adding only new objects, adopt,
# destroy, a killed up) is per object, not per uplink. FABRIC_NETBOX_GPUS=128,512
# FABRIC_NETBOX_OVERSUBSCRIPTION=1:1 runs the sizes (28 min for the grow and
# killed-up tests on an idle 2-core machine, too much of CI's 90 minutes): 128 GPUs (32
# devices, 896 interfaces, 448 cables) grown to 512 (96 devices, 2,560 interfaces, 1,280 cables).
SMALL, BIG = (int(n) for n in os.environ.get("FABRIC_NETBOX_GPUS", "16,32").split(","))
OVERSUB = os.environ.get("FABRIC_NETBOX_OVERSUBSCRIPTION", "4:1")
# One NetBox write step may take minutes on a loaded 2-core machine (see bench/README.md).
LONG = 3600
FREE_PORT = (
    "1/10/1"  # a leaf port the 128-GPU plan leaves free (downlinks 1/1-1/8, uplinks 1/17-1/32)
)


def intent_for(gpus: int) -> Any:
    return derive_intent(
        build_topology(size_fabric(validate_spec(gpus=gpus, oversubscription=OVERSUB)))
    )


def _stack(tmp: Path, env: dict[str, str], url: str, token: str, name: str, gpus: int) -> Path:
    proj = make_project(tmp)
    pulumi(proj, env, "stack", "init", name)
    pulumi(proj, env, "config", "set", "fabric:gpus", str(gpus))
    pulumi(proj, env, "config", "set", "fabric:oversubscription", OVERSUB)
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


def _plan_ports(intent: Any) -> set[tuple[str, str]]:
    """(device, port) of every interface the plan names: both cable ends and every NIC."""
    ports = {(c.a_device, c.a_port) for c in intent.cables}
    ports |= {(c.b_device, c.b_port) for c in intent.cables}
    return ports | {(n.node, n.nic) for n in intent.nics}


def _expected(intent: Any) -> dict[str, int]:
    devices = {c.a_device for c in intent.cables} | {c.b_device for c in intent.cables}
    devices |= {s.name for s in intent.switches} | {n.node for n in intent.nics}
    ports = _plan_ports(intent)
    return {"devices": len(devices), "interfaces": len(ports), "cables": len(intent.cables)}


def _site_counts(api: NetBoxClient, site: int) -> dict[str, int]:
    return {
        "devices": api.count("dcim/devices", {"site_id": site}),
        "interfaces": api.count("dcim/interfaces", {"site_id": site}),
        "cables": api.count("dcim/cables", {"site_id": site}),
    }


def _plan_cables(api: NetBoxClient, site: int) -> dict[str, tuple[str, str, str, str]]:
    """Cable record name → (a device, a port, b device, b port) as NetBox holds them."""
    out = {}
    for c in api.select("dcim/cables", {"site_id": site}):
        a, b = c["a_terminations"][0]["object"], c["b_terminations"][0]["object"]
        out[_name(c)] = (a["device"]["name"], a["name"], b["device"]["name"], b["name"])
    return out


def _name(cable: dict[str, Any]) -> str:
    """The plan record a NetBox cable belongs to (its label is the plant's, #29)."""
    return str(cable["custom_fields"]["fabric_name"])


def _drift(url: str, token: str, gpus: int) -> subprocess.CompletedProcess[str]:
    """``fabric-stack drift --netbox`` of site ``nb`` against the plan for ``gpus``."""
    return subprocess.run(
        [
            CLI,
            "drift",
            "--gpus",
            str(gpus),
            "--oversubscription",
            OVERSUB,
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
        timeout=1200,
        check=False,
    )


def test_up_edit_refresh_grow_destroy(
    tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    url, token = netbox
    api = NetBoxClient(url, token)
    before = _counts(api)
    proj = _stack(tmp_path, pulumi_env, url, token, "nb", SMALL)
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview", timeout=LONG)
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
    nb_cable = api.select("dcim/cables", {"site_id": site, "cf_fabric_name": cable.name})[0]
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
    drift = _drift(url, token, SMALL)
    assert drift.returncode == 1, drift.stderr
    findings = json.loads(drift.stdout)["findings"]
    assert any(FREE_PORT in json.dumps(f) for f in findings), findings
    # … and in refresh: the next up sees the difference and puts the plan back.
    pulumi(proj, pulumi_env, "refresh", "--yes", "--skip-preview", timeout=LONG)
    ops = Counter(s["op"] for s in preview_steps(proj, pulumi_env))
    assert ops["update"] == 1, ops
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview", timeout=LONG)
    assert _plan_cables(api, site)[cable.name] == want[cable.name]
    api.delete("dcim/interfaces", [spare["id"]])

    # SMALL → BIG: only new objects; every cable that was there keeps its id.
    ids = {_name(c): c["id"] for c in api.select("dcim/cables", {"site_id": site})}
    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", str(BIG))
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview", timeout=LONG)
    big_topo = build_topology(size_fabric(validate_spec(gpus=BIG, oversubscription=OVERSUB)))
    big = derive_intent(big_topo)
    assert _site_counts(api, site) == _expected(big)
    now = {_name(c): c["id"] for c in api.select("dcim/cables", {"site_id": site})}
    same = {
        c.name for c in small.cables if want[c.name] == (c.a_device, c.a_port, c.b_device, c.b_port)
    }
    same &= {
        c.name
        for c in big.cables
        if want.get(c.name) == (c.a_device, c.a_port, c.b_device, c.b_port)
    }
    assert same and all(now[n] == ids[n] for n in same)  # unchanged cables are not rewritten
    # … and the grown site drifts clean against the 512-GPU plan, read live.
    clean = _drift(url, token, BIG)
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr[-2000:]
    # `adopt --netbox` reads the same live cables and, NetBox holding the plan's own names,
    # places every compute device (servers, fabric managers, switches) on itself.
    argv = [CLI, "adopt", "--gpus", str(BIG), "--oversubscription", OVERSUB]
    argv += ["--netbox", url, "--netbox-site", "nb"]
    adopted = subprocess.run(
        [*argv, "--format", "json"],
        env={**os.environ, "NETBOX_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=LONG,
        check=False,
    )
    assert adopted.returncode == 0, adopted.stderr  # every compute device placed
    report = json.loads(adopted.stdout)
    mapping = {m["actual"]: m["planned"] for m in report["mapping"]}
    compute = {d.name for d in big_topo.devices if d.role in ("server", "manager")}
    compute |= {s.name for s in big.switches if s.role in ("leaf", "spine", "core")}
    assert compute <= set(mapping) and all(mapping[n] == n for n in compute), report
    assert not any(c["contradictions"] for c in report["classes"].values())

    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview", timeout=LONG)
    assert _counts(api) == before


def test_killed_up_then_rerun_leaves_no_duplicates(
    tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    from tests.integration.pulumi.test_stack_integration import _recover

    url, token = netbox
    api = NetBoxClient(url, token)
    before = _counts(api)
    proj = _stack(tmp_path, pulumi_env, url, token, "it", SMALL)
    intent = intent_for(SMALL)
    mid = len(intent.cables) // 3  # killed a third of the way: well before the last bundle
    proc = subprocess.Popen(
        [str(REPO_ROOT / ".venv/bin/pulumi"), "up", "--yes", "--skip-preview", "--non-interactive"],
        cwd=proj,
        env=pulumi_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + LONG / 2
    while time.time() < deadline and proc.poll() is None:
        site = _site(api, "it")
        if site is not None and api.count("dcim/cables", {"site_id": site}) >= mid:
            break
        time.sleep(0.5)
    assert proc.poll() is None, "up finished before it could be killed; grow the change"
    # The whole session: the CLI's plugin hosts run in process groups of their own, and
    # killing only the CLI's group left them writing to NetBox (and running) afterwards.
    kill_session(proc.pid)
    proc.wait()
    site = _site(api, "it")
    assert site is not None
    assert api.count("dcim/cables", {"site_id": site}) < len(intent.cables)  # really half-way

    _recover(proj, pulumi_env)
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview", timeout=LONG)
    assert _site_counts(api, site) == _expected(intent)
    cables = api.select("dcim/cables", {"site_id": site})
    labels = Counter(_name(c) for c in cables)
    assert max(labels.values()) == 1
    # No half rows: every cable has its two interfaces, every interface of the site is one the
    # plan names, and each plan cable joins exactly the ports the plan says.
    assert all(len(c["a_terminations"]) == 1 == len(c["b_terminations"]) for c in cables)
    want = {c.name: (c.a_device, c.a_port, c.b_device, c.b_port) for c in intent.cables}
    assert _plan_cables(api, site) == want
    ports = {
        (i["device"]["name"], i["name"]) for i in api.select("dcim/interfaces", {"site_id": site})
    }
    assert ports == _plan_ports(intent)
    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview", timeout=LONG)
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

    # The CLI: a wrong token and an unreachable NetBox are each one line on stderr, exit 2.
    for args, tok, said in (
        (["inventory", "--inventory", f"netbox+{url}"], "nbt_wrong.token", "token was refused"),
        (
            ["drift", "--gpus", "16", "--netbox", url, "--netbox-site", "nb"],
            "nbt_wrong.token",
            "token was refused",
        ),
        (["inventory", "--inventory", "netbox+http://127.0.0.1:9"], token, "unreachable"),
    ):
        r = subprocess.run(
            [CLI, *args],
            env={**os.environ, "NETBOX_TOKEN": tok},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and said in lines[0], (args, r.stderr)
        assert tok not in r.stderr and r.stdout == ""
    assert _counts(api) == before
