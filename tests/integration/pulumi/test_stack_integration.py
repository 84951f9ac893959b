"""The Pulumi stack with the real CLI, a file:// backend and a real inventory.

Capacity change 128 → 512 GPUs: the preview adds exactly the new leaves,
spines and cables, re-patches the uplinks that must move, and replaces or
deletes nothing; ``up`` records them; an inventory edit shows on refresh;
destroy empties the inventory. Plus the faults: a killed ``up``, two
concurrent ``up``s, and database credentials kept secret.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.pulumi.changes import Step, summarize_changes
from fabric_stack.intent.wire import cable_line
from tests.pulumi_project import (
    REPO_ROOT,
    kill_session,
    make_project,
    preview_steps,
    pulumi,
    resource_name,
)

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


def intent_for(gpus: int, **spec: Any):  # type: ignore[no-untyped-def]
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=gpus, **spec))))


def _stack(
    tmp_path: Path,
    env: dict[str, str],
    gpus: int,
    inventory: str | None = None,
    secret: bool = False,
) -> Path:
    proj = make_project(tmp_path)
    pulumi(proj, env, "stack", "init", "it")
    pulumi(proj, env, "config", "set", "fabric:gpus", str(gpus))
    if inventory:
        pulumi(
            proj,
            env,
            "config",
            "set",
            *(["--secret"] if secret else []),
            "fabric:inventory",
            inventory,
        )
    return proj


def _as_steps(raw: list[dict[str, Any]]) -> list[Step]:
    out = []
    for s in raw:
        typ = s.get("type") or (s.get("newState") or s.get("oldState") or {}).get("type", "")
        out.append(
            Step.from_props(
                op=s["op"],
                kind=typ.rsplit(":", 1)[-1],
                name=resource_name(s["urn"]),
                # after a refresh, reality is in the old outputs
                old=(s.get("oldState") or {}).get("outputs")
                or (s.get("oldState") or {}).get("inputs"),
                new=(s.get("newState") or {}).get("inputs"),
            )
        )
    return out


def _up_at_128(tmp_path: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A stack `up` at 128 GPUs with an SQLite inventory: (project, inventory file)."""
    db = tmp_path / "inventory.db"
    proj = _stack(tmp_path, env, 128, f"sqlite:///{db}")
    pulumi(proj, env, "up", "--yes", "--skip-preview")
    return proj, db


def _cables_in(store: Any) -> dict[str, tuple[str, str]]:
    return {r["name"]: (r["b_device"], r["b_port"]) for r in store.list_records("Cable", "it")}


def test_capacity_change_preview_up_refresh_destroy(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj, db = _up_at_128(tmp_path, pulumi_env)
    store = open_store(f"sqlite:///{db}")
    small, big = intent_for(128), intent_for(512)
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in small.cables}
    assert {r["name"] for r in store.list_records("Switch", "it")} == {
        s.name for s in small.switches
    }

    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", "512")
    raw = preview_steps(proj, pulumi_env)
    ops = {s["op"] for s in raw}
    assert not ops & {"delete", "replace", "create-replacement", "delete-replaced"}, ops
    summary = summarize_changes(_as_steps(raw), "it")
    new_switches = {s.name for s in big.switches} - {s.name for s in small.switches}
    assert {s.name for s in summary.switches if s.op == "create"} == new_switches
    assert {"spine-05", "spine-06", "spine-07", "spine-08", "su2-r1-leaf"} <= new_switches
    assert not [s for s in summary.switches if s.op in ("delete", "replace")]
    old_c = {c.name: c for c in small.cables}
    new_c = {c.name: c for c in big.cables}
    assert {c.name for c in summary.cables if c.op == "add"} == set(new_c) - set(old_c)
    moved = {
        n
        for n in set(old_c) & set(new_c)
        if (old_c[n].b_device, old_c[n].b_port) != (new_c[n].b_device, new_c[n].b_port)
    }
    assert {c.name for c in summary.cables if c.op == "move"} == moved
    assert len(moved) == 128  # half of su1's 256 uplinks go to the four new spines
    assert not [c for c in summary.cables if c.op == "remove"]

    # `pulumi preview --diff` opens each record (one JSON text per resource) field by
    # field: a moved cable is one line of its bundle, a switch change one field.
    shown = pulumi(proj, pulumi_env, "preview", "--diff").stdout
    mv = sorted(moved)[0]
    assert f'"{cable_line(old_c[mv].props())}" => "{cable_line(new_c[mv].props())}"' in shown
    leaf = "su1-r1-leaf"
    was = next(s for s in small.switches if s.name == leaf).ports_down
    now = next(s for s in big.switches if s.name == leaf).ports_down
    assert was != now and re.search(rf"~ ports_down\s*: {was} => {now}", shown), shown[:3000]

    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in big.cables}
    assert store.counts("it")["Switch"] == len(big.switches)
    # The records read back from the inventory equal those the program sent: a refresh
    # changes nothing.
    pulumi(proj, pulumi_env, "refresh", "--yes", "--skip-preview", "--expect-no-changes")

    # An edit in the inventory behind the plan's back shows on refresh.
    victim = "su1-node03:mlx5_2"
    store.execute(
        'UPDATE fabric_inventory SET props = replace(props, \'"b_port": "1/2/1"\', '
        "'\"b_port\": \"1/9/2\"') WHERE kind = 'Cable' AND name = ?",
        (victim,),
    )
    r = pulumi(proj, pulumi_env, "refresh", "--yes", "--diff")
    assert "su1-r3-leaf/downlinks" in r.stdout and "1/9/2" in r.stdout, r.stdout[-2000:]
    # ... and the next preview puts it back to the plan.
    fix = summarize_changes(_as_steps(preview_steps(proj, pulumi_env)), "it")
    assert [(c.name, c.op, c.old_b_port, c.b_port) for c in fix.cables] == [
        (victim, "move", "1/9/2", "1/2/1")
    ]

    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview")
    assert store.counts("it") == {}


def test_replaced_switches_keep_their_inventory_rows(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    """A model change replaces a switch under the same name: the inventory row must survive.

    Replacement creates the new resource before deleting the old one unless the
    provider asks otherwise; both map to the same inventory row (stack, kind, name).
    """
    proj, db = _up_at_128(tmp_path, pulumi_env)
    pulumi(proj, pulumi_env, "config", "set", "fabric:switch", "q3400")
    steps = preview_steps(proj, pulumi_env)
    replaced = {resource_name(s["urn"]) for s in steps if s["op"] == "replace"}
    old, new = intent_for(128), intent_for(128, switch="q3400")
    changed = {s.name for s in new.switches if s.model == "q3400"} & {s.name for s in old.switches}
    assert changed and replaced == changed, (replaced, changed)

    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    store = open_store(f"sqlite:///{db}")
    rows = {r["name"]: r["model"] for r in store.list_records("Switch", "it")}
    assert rows == {s.name: s.model for s in new.switches}
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in new.cables}
    # and the state agrees with the inventory
    pulumi(proj, pulumi_env, "refresh", "--yes", "--skip-preview", "--expect-no-changes")


def _count_rows(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db, timeout=30) as c:
            return int(c.execute("select count(*) from fabric_inventory").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_killed_up_is_brought_back_by_refresh_and_up(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj, db = _up_at_128(tmp_path, pulumi_env)
    before = _count_rows(db)
    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", "1024")
    proc = subprocess.Popen(
        [str(REPO_ROOT / ".venv/bin/pulumi"), "up", "--yes", "--skip-preview", "--non-interactive"],
        cwd=proj,
        env=pulumi_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 300
    while _count_rows(db) < before + 400 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "up finished before it could be killed; grow the change"
    # The CLI, its language host and provider hosts (process groups of their own, in its
    # session: killing its group alone left them running).
    kill_session(proc.pid)
    proc.wait()
    mid = _count_rows(db)
    assert before < mid  # it really stopped half-way
    big = intent_for(1024)
    expected = (
        len(big.switches) + len(big.cables) + len(big.nics) + len(big.rails) + len(big.vlans) + 1
    )
    assert mid < expected

    # Recovery: `fabric-stack recover` (torn state files, lock, refresh), then up.
    steps = _recover(proj, pulumi_env)
    assert steps[-1].startswith("refreshed every record")
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    store = open_store(f"sqlite:///{db}")
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in big.cables}
    assert {r["name"] for r in store.list_records("Switch", "it")} == {s.name for s in big.switches}
    assert _count_rows(db) == expected  # nothing orphaned
    # and the state agrees: nothing left to do
    assert {s["op"] for s in preview_steps(proj, pulumi_env)} == {"same"}


def _recover(proj: Path, env: dict[str, str]) -> list[str]:
    from fabric_stack.adapters.pulumi.ops import recover

    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")
    old = {k: os.environ.get(k) for k in ("PULUMI_BACKEND_URL", "PULUMI_HOME")}
    os.environ.update({k: env[k] for k in old})
    try:
        return recover("it", proj)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_torn_checkpoint_is_restored_from_its_backup(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj, db = _up_at_128(tmp_path, pulumi_env)
    pulumi(proj, pulumi_env, "config", "set", "fabric:gpus", "256")
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    state = Path(pulumi_env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    ckpt = state / ".pulumi" / "stacks" / "fabric-stack" / "it.json"
    # Not what a kill leaves (the checkpoint is renamed into place atomically), but what
    # a copy cut short or a hand edit gone wrong does.
    ckpt.write_text(ckpt.read_text()[:1000])
    r = pulumi(proj, pulumi_env, "preview", check=False)
    assert r.returncode != 0 and "failed to load checkpoint" in r.stderr
    steps = _recover(proj, pulumi_env)
    assert any(s.startswith("restored the torn checkpoint from it.json.bak") for s in steps)
    pulumi(proj, pulumi_env, "up", "--yes", "--skip-preview")
    store = open_store(f"sqlite:///{db}")
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in intent_for(256).cables}
    assert {s["op"] for s in preview_steps(proj, pulumi_env)} == {"same"}


def test_torn_metadata_sidecar_is_removed(tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    """What a SIGKILL mid-save really leaves: an empty ``it.json.attrs``, an intact checkpoint.

    fileblob renames the checkpoint into place atomically but truncates and rewrites its
    ``.attrs`` sidecar in place first; a kill in between breaks every later command.
    """
    proj, _db = _up_at_128(tmp_path, pulumi_env)
    state = Path(pulumi_env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    sidecar = state / ".pulumi" / "stacks" / "fabric-stack" / "it.json.attrs"
    assert sidecar.exists()
    sidecar.write_text("")
    r = pulumi(proj, pulumi_env, "preview", check=False)
    assert r.returncode != 0 and "failed to load checkpoint: EOF" in r.stderr, r.stderr
    steps = _recover(proj, pulumi_env)
    assert steps[0] == "removed 1 torn metadata sidecar(s) a kill mid-write left: it.json.attrs"
    assert not any("restored the torn checkpoint" in s for s in steps)  # the checkpoint was fine
    assert {s["op"] for s in preview_steps(proj, pulumi_env)} == {"same"}


def test_concurrent_up_fails_cleanly_on_the_lock(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    db = tmp_path / "inventory.db"
    proj = _stack(tmp_path, pulumi_env, 512, f"sqlite:///{db}")
    # The first up holds its lock until the second has run: its program waits while the
    # hold file exists (only the first gets FST_TEST_HOLD). Without it, an idle CI machine
    # finished the first up before the second reached the lock, and the second passed.
    hold = tmp_path / "hold"
    hold.touch()
    (proj / "__main__.py").write_text(
        "import os, time\nfrom pathlib import Path\n\n"
        "hold = os.environ.get('FST_TEST_HOLD')\nend = time.time() + 300\n"
        "while hold and Path(hold).exists() and time.time() < end:\n    time.sleep(0.05)\n\n"
        "from components.program import run\n\nrun()\n"
    )
    cmd = [
        str(REPO_ROOT / ".venv/bin/pulumi"),
        "up",
        "--yes",
        "--skip-preview",
        "--non-interactive",
    ]
    first = subprocess.Popen(
        cmd,
        cwd=proj,
        env={**pulumi_env, "FST_TEST_HOLD": str(hold)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # Start the second once the first holds the lock, not after a guess at how long
    # that takes on this machine.
    state = Path(pulumi_env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    locks = state / ".pulumi" / "locks" / "organization" / "fabric-stack" / "it"
    deadline = time.time() + 120
    while not any(locks.glob("*.json")) and time.time() < deadline and first.poll() is None:
        time.sleep(0.05)
    assert first.poll() is None and any(locks.glob("*.json")), "the first up never took its lock"
    try:
        second = subprocess.run(
            cmd, cwd=proj, env=pulumi_env, capture_output=True, text=True, check=False
        )
        assert first.poll() is None, "the first up ended while held"
    finally:
        hold.unlink()
    out1, _ = first.communicate(timeout=600)
    assert first.returncode == 0, out1[-2000:]
    assert second.returncode != 0
    # The file:// backend refuses on its lock, or (when the second reads the state
    # while the first is rewriting the checkpoint's .attrs sidecar) on an EOF reading
    # it; both fail before the second writes anything.
    err = (second.stdout + second.stderr).lower()
    assert "locked" in err or "failed to load checkpoint" in err, err
    store = open_store(f"sqlite:///{db}")
    assert _cables_in(store) == {c.name: (c.b_device, c.b_port) for c in intent_for(512).cables}
    # nothing lost: the state agrees with the program and the inventory
    assert {s["op"] for s in preview_steps(proj, pulumi_env)} == {"same"}


@pytest.mark.postgres
def test_postgres_inventory_secret_never_printed(
    tmp_path: Path, pulumi_env: dict[str, str], pg_url: str
) -> None:
    # A role with a password that cannot appear in the output by accident.
    password = "Zq7-vault-8842-kx"
    admin = open_store(pg_url)
    admin.execute("DROP ROLE IF EXISTS fs_secret_owner")
    admin.execute(f"CREATE ROLE fs_secret_owner LOGIN PASSWORD '{password}'")
    admin.execute("GRANT ALL ON SCHEMA public TO fs_secret_owner")
    admin.execute("GRANT ALL ON fabric_inventory TO fs_secret_owner")
    # a writer reads the schema version (it runs no DDL itself: the owner migrates)
    admin.execute("GRANT SELECT ON fabric_inventory_schema TO fs_secret_owner")
    host_db = pg_url.rsplit("@", 1)[1]
    pg_url = f"postgresql://fs_secret_owner:{password}@{host_db}"
    proj = _stack(tmp_path, pulumi_env, 128, pg_url, secret=True)
    outs = []
    for args in (
        ("preview", "--diff"),
        ("up", "--yes", "--diff"),
        ("stack", "output", "--json"),
        ("refresh", "--yes", "--diff"),
    ):
        r = pulumi(proj, pulumi_env, *args)
        outs.append(r.stdout + r.stderr)
    assert all(password not in o for o in outs)
    state = subprocess.run(
        [str(REPO_ROOT / ".venv/bin/pulumi"), "stack", "export"],
        cwd=proj,
        env=pulumi_env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert password not in state
    store = open_store(pg_url)
    assert store.counts("it")["Cable"] == 450  # 448 + the two UFM-to-leaf cables
    pulumi(proj, pulumi_env, "destroy", "--yes", "--skip-preview")
    assert store.counts("it") == {}


def test_plaintext_password_in_config_is_refused(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj = _stack(tmp_path, pulumi_env, 128, "postgresql://fab:hunter2@127.0.0.1:5432/inv")
    r = pulumi(proj, pulumi_env, "preview", check=False)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "store it as a secret" in out and "hunter2" not in out and "Traceback" not in out


def test_bad_config_gets_the_cli_message(tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    proj = _stack(tmp_path, pulumi_env, 100)
    r = pulumi(proj, pulumi_env, "preview", check=False)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "fabric:gpus: 100 is not a multiple of gpus_per_node 8 (try 96 or 104)" in out
    assert "Traceback" not in out
