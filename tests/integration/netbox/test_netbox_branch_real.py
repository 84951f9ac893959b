"""The review loop in a NetBox branch (issue #48), on a real NetBox with netbox-branching
(scripts/netbox.sh installs and enables it) and the real Pulumi CLI.

spec → `stack init --from` → `apply` into branch ``review-1`` (main's counts unchanged, the
branch holds exactly the plan's objects) → merge through NetBox's API → drift against main
is clean → `destroy` in another branch removes the objects from that branch only. A tiny
fabric (8 GPUs, 38 cables): every step is per object. Counts come from NetBox's REST API, main's
through a client without a branch, a branch's through the ``X-NetBox-Branch`` header.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from tests.conftest import netbox_server
from tests.pulumi_project import REPO_ROOT, make_project, pulumi

pytestmark = [pytest.mark.netbox, pytest.mark.pulumi, pytest.mark.slow]

CLI = str(REPO_ROOT / ".venv" / "bin" / "fabric-stack")
# 8 GPUs in 4-GPU servers at 8:1: 4 leaves, 1 spine, 38 cables. A merge replays every change
# of the branch in one background job (~12 min for the 114 cables of 16 GPUs at 4:1 at load 20).
GPUS, PER_NODE, OVERSUB = 8, 4, "8:1"
BRANCHES = "plugins/branching/branches/"
MERGE_WAIT_S = 1200


def _fs(proj: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def _counts(api: NetBoxClient) -> dict[str, int]:
    return {e: api.count(e) for e in ("dcim/devices", "dcim/cables", "ipam/prefixes", "ipam/vlans")}


def _site_counts(api: NetBoxClient, slug: str) -> dict[str, int]:
    sites = api.select("dcim/sites", {"slug": slug})
    if not sites:
        return {"devices": 0, "interfaces": 0, "cables": 0}
    site = int(sites[0]["id"])
    return {
        "devices": api.count("dcim/devices", {"site_id": site}),
        "interfaces": api.count("dcim/interfaces", {"site_id": site}),
        "cables": api.count("dcim/cables", {"site_id": site}),
    }


def _expected() -> dict[str, int]:
    intent = derive_intent(
        build_topology(
            size_fabric(validate_spec(gpus=GPUS, gpus_per_node=PER_NODE, oversubscription=OVERSUB))
        )
    )
    devices = {c.a_device for c in intent.cables} | {c.b_device for c in intent.cables}
    devices |= {s.name for s in intent.switches} | {n.node for n in intent.nics}
    ports = {(c.a_device, c.a_port) for c in intent.cables}
    ports |= {(c.b_device, c.b_port) for c in intent.cables}
    ports |= {(n.node, n.nic) for n in intent.nics}
    return {"devices": len(devices), "interfaces": len(ports), "cables": len(intent.cables)}


def _branch(api: NetBoxClient, name: str) -> dict[str, Any] | None:
    got = api.request("GET", f"{BRANCHES}?name={name}")
    hits = [b for b in got["results"] if b["name"] == name]
    return hits[0] if hits else None


def _merge(api: NetBoxClient, name: str) -> None:
    """Merge branch ``name`` as a reviewer would, through the plugin's API; wait for it."""
    branch = _branch(api, name)
    assert branch is not None
    api.request("POST", f"{BRANCHES}{branch['id']}/merge/", {"commit": True})
    deadline = time.monotonic() + MERGE_WAIT_S
    while time.monotonic() < deadline:
        status = api.request("GET", f"{BRANCHES}{branch['id']}/")["status"]["value"]
        if status == "merged":
            return
        assert status in ("ready", "merging"), status
        time.sleep(1)
    raise AssertionError(f"branch {name} not merged within {MERGE_WAIT_S} s")


@pytest.fixture(scope="module")
def netbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A NetBox of this module's own: merging a branch changes main, and the plan's prefixes
    are unique NetBox-wide, so the session's NetBox (the other NetBox tests) stays clean."""
    yield from netbox_server(tmp_path_factory, branching=True)


@pytest.fixture
def project(tmp_path: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]) -> Path:
    url, token = netbox
    proj = make_project(tmp_path)
    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")
    (proj / "spec.yaml").write_text(
        f"gpus: {GPUS}\ngpus_per_node: {PER_NODE}\noversubscription: '{OVERSUB}'\n"
        f"inventory: netbox+{url}\n"
        f"netbox_token: {token}\nnetbox_branch: review-1\nconfig_records: false\n"
    )
    return proj


def test_up_into_a_branch_merge_drift_destroy(
    project: Path, pulumi_env: dict[str, str], netbox: tuple[str, str]
) -> None:
    url, token = netbox
    env = {**pulumi_env, "NETBOX_TOKEN": ""}
    main = NetBoxClient(url, token)
    before = _counts(main)

    # Bad input first: nothing is written, no branch is made.
    (project / "bad.yaml").write_text(
        (project / "spec.yaml").read_text().replace("review-1", "r" * 101)
    )
    made = _fs(project, env, "stack", "init", "bad", "--from", "bad.yaml")
    assert made.returncode == 0, made.stderr
    refused = _fs(project, env, "apply", "--stack", "bad", "--yes", "--no-policy")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1 and "at most 100" in refused.stderr, refused.stderr
    assert _branch(main, "r" * 101) is None and _counts(main) == before

    # spec → stack: the secret stays a secret.
    made = _fs(project, env, "stack", "init", "br", "--from", "spec.yaml")
    assert made.returncode == 0, made.stderr
    stack_file = (project / "Pulumi.br.yaml").read_text()
    assert token not in stack_file and "fabric:netboxToken:\n    secure:" in stack_file

    # up into review-1: main untouched, the branch holds exactly the plan's objects.
    done = _fs(project, env, "apply", "--stack", "br", "--yes", "--no-policy", "--format", "json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert _counts(main) == before
    assert _site_counts(main, "br")["devices"] == 0
    review = NetBoxClient(url, token, branch="review-1")
    assert _site_counts(review, "br") == _expected()

    # The reviewer reads the branch's change list, then merges it.
    branch = _branch(main, "review-1")
    assert branch is not None
    changes = main.request("GET", f"plugins/branching/changes/?branch_id={branch['id']}&limit=1")
    assert changes["count"] >= _expected()["cables"]
    drift_branch = _fs(
        project,
        {**env, "NETBOX_TOKEN": token},
        *("drift", "--stack", "br", "--netbox", url, "--netbox-site", "br"),
        *("--netbox-branch", "review-1", "--format", "json"),
    )
    assert drift_branch.returncode == 0, drift_branch.stdout[-2000:] + drift_branch.stderr
    _merge(main, "review-1")
    assert _site_counts(main, "br") == _expected()

    drift = _fs(
        project,
        {**env, "NETBOX_TOKEN": token},
        *("drift", "--stack", "br", "--netbox", url, "--netbox-site", "br", "--format", "json"),
    )
    assert drift.returncode == 0, drift.stdout[-2000:] + drift.stderr[-2000:]
    assert json.loads(drift.stdout)["findings"] == []

    # destroy in review-2: the objects leave that branch; main keeps them until a merge.
    # Pulumi configures a destroy's providers from the state, so an `apply` first records
    # the new branch (it changes no resource; it makes review-2).
    pulumi(project, env, "config", "set", "fabric:netboxBranch", "review-2", "--stack", "br")
    again = _fs(project, env, "apply", "--stack", "br", "--yes", "--no-policy", "--format", "json")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert _site_counts(NetBoxClient(url, token, branch="review-2"), "br") == _expected()
    pulumi(project, env, "destroy", "--yes", "--skip-preview", "--stack", "br", timeout=1800)
    assert _site_counts(NetBoxClient(url, token, branch="review-2"), "br")["devices"] == 0
    assert _site_counts(main, "br") == _expected()


def test_a_missing_branch_is_one_line_when_read(netbox: tuple[str, str]) -> None:
    url, token = netbox
    r = subprocess.run(
        [CLI, "drift", "--gpus", "16", "--netbox", url, "--netbox-branch", "nope"],
        env={**os.environ, "NETBOX_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert (
        r.stderr
        == f"error: NetBox {url}: branch 'nope': no such branch (it is made by `up` with it)\n"
    )
    assert _branch(NetBoxClient(url, token), "nope") is None
