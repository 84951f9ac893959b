"""Team mode: every stack's state and the inventory on one PostgreSQL server, real CLI.

State in the Pulumi ``postgres://`` DIY backend (its own database), the inventory in
another database of the same server, ``fabric:inventory`` a secret. Then the faults:
two ``up``s of one stack, ``preview`` during an ``up``, SIGKILL mid-``up`` then
``fabric-stack recover`` + ``apply``, the server restarted mid-``up``, and 8 stacks
updated by 4 workers. Every test ends the process groups it starts.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.pulumi.env import offline_env
from tests.pg_databases import new_database, state_backend_url
from tests.pulumi_project import REPO_ROOT, kill_session, make_project, preview_steps, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.postgres, pytest.mark.slow]

PULUMI = str(REPO_ROOT / ".venv" / "bin" / "pulumi")
FABRIC_STACK = str(REPO_ROOT / ".venv" / "bin" / "fabric-stack")
UP = [PULUMI, "up", "--yes", "--skip-preview", "--non-interactive", "--stack", "it"]


@dataclass
class Team:
    """A project whose stacks live on PostgreSQL: state DB, inventory DB, environment."""

    proj: Path
    env: dict[str, str]
    state_db: str
    inventory: str

    def store(self) -> Any:
        return open_store(self.inventory)


def _team(tmp_path: Path, pulumi_env: dict[str, str], server: str) -> Team:
    state_db = new_database(server, "state")
    inventory = new_database(server, "inventory")
    # offline_env as fabric-stack builds it for a postgres:// backend (and .state/env.sh)
    env = offline_env(
        REPO_ROOT, base=dict(pulumi_env, PULUMI_BACKEND_URL=state_backend_url(state_db))
    )
    proj = make_project(tmp_path)
    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")  # fabric-stack finds the engine here
    return Team(proj, env, state_db, inventory)


@pytest.fixture
def team(tmp_path: Path, pulumi_env: dict[str, str], pg_url: str) -> Team:
    return _team(tmp_path, pulumi_env, pg_url)


def _init(t: Team, stack: str, gpus: int, inventory: str | None = None) -> None:
    # --no-select: parallel workers must not race on the workspace file that records it
    pulumi(t.proj, t.env, "stack", "init", stack, "--no-select")
    pulumi(t.proj, t.env, "config", "set", "--stack", stack, "fabric:gpus", str(gpus))
    pulumi(
        t.proj, t.env, "config", "set", "--stack", stack, "--secret", "fabric:inventory",
        inventory or t.inventory,
    )  # fmt: skip


def _fs(t: Team, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`fabric-stack ARGS` in the project, as a team member would run it."""
    r = subprocess.run(
        [FABRIC_STACK, *args],
        cwd=t.proj,
        env=t.env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if check and r.returncode != 0:
        raise AssertionError(
            f"fabric-stack {' '.join(args)} ({r.returncode}):\n{r.stdout}{r.stderr}"
        )
    return r


def _intent(gpus: int):  # type: ignore[no-untyped-def]
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=gpus))))


def _rows_expected(gpus: int) -> int:
    i = _intent(gpus)
    return len(i.switches) + len(i.cables) + len(i.nics) + len(i.rails) + len(i.vlans) + 1


def _assert_inventory_is_plan(t: Team, stack: str, gpus: int) -> None:
    store = t.store()
    plan = _intent(gpus)
    cables = {r["name"]: (r["b_device"], r["b_port"]) for r in store.list_records("Cable", stack)}
    assert cables == {c.name: (c.b_device, c.b_port) for c in plan.cables}
    assert {r["name"] for r in store.list_records("Switch", stack)} == {
        s.name for s in plan.switches
    }
    assert sum(store.counts(stack).values()) == _rows_expected(gpus)  # nothing orphaned


def _assert_state_is_plan(t: Team, stack: str = "it") -> None:
    assert {s["op"] for s in preview_steps(t.proj, t.env, "--stack", stack)} == {"same"}


def _creates(steps: list[dict[str, Any]]) -> int:
    return sum(s["op"] == "create" for s in steps)


def _rows(t: Team, stack: str = "it") -> int:
    try:
        with psycopg.connect(t.inventory, connect_timeout=2) as c:
            row = c.execute("SELECT count(*) FROM fabric_inventory WHERE stack = %s", (stack,))
            return int(row.fetchone()[0])  # type: ignore[index]
    except psycopg.Error:
        return -1


def _lock_rows(t: Team) -> int:
    try:
        with psycopg.connect(t.state_db, connect_timeout=2) as c:
            row = c.execute("SELECT count(*) FROM pulumi_state WHERE key LIKE '%/.pulumi/locks/%'")
            return int(row.fetchone()[0])  # type: ignore[index]
    except psycopg.Error:
        return 0


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts in sessions of their own; each session is killed at the end
    (the CLI, its language host and provider hosts), whatever happened."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        kill_session(p.pid)
        p.wait(timeout=60)


def _start_up(t: Team, procs: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    """`pulumi up` in its own session, output to ``up-N.log`` (a pipe nobody reads
    would stall it once full); :func:`_log` reads it back."""
    with open(t.proj / f"up-{len(procs)}.log", "w") as log:
        p = subprocess.Popen(
            UP, cwd=t.proj, env=t.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    procs.append(p)
    return p


def _log(t: Team, n: int = 0) -> str:
    return (t.proj / f"up-{n}.log").read_text()


def _wait_for(cond: Any, proc: subprocess.Popen[str], what: str, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while not cond() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None and cond(), f"{what} never happened while the up ran"


def test_team_stack_lives_on_postgres_and_every_command_works(team: Team) -> None:
    _init(team, "it", 128)
    applied = _fs(team, "apply", "--stack", "it", "--yes", "--format", "json").stdout
    assert json.loads(applied)["switches"]  # the applied summary
    _assert_inventory_is_plan(team, "it", 128)
    ls = pulumi(team.proj, team.env, "stack", "ls", "--json")
    assert [(s["name"], s["resourceCount"]) for s in json.loads(ls.stdout)] == [("it", 71)]
    with psycopg.connect(team.state_db) as c:  # the state is rows, not files
        keys = [k for (k,) in c.execute("SELECT key FROM pulumi_state ORDER BY key")]
    assert any(k.endswith(".pulumi/stacks/fabric-stack/it.json") for k in keys)
    assert not list(team.proj.parent.rglob(".pulumi"))
    pulumi(team.proj, team.env, "config", "set", "--stack", "it", "fabric:gpus", "256")
    plan = _fs(team, "plan", "--stack", "it", "--format", "json").stdout
    assert json.loads(plan)["operation"] == "preview" and json.loads(plan)["switches"]
    inv = _fs(team, "inventory", "--inventory", team.inventory, "--stack", "it", "--format", "json")
    assert len(json.loads(inv.stdout)["records"]) == len(_intent(128).switches)
    drift = _fs(team, "drift", "--stack", "it", "--gpus", "128", "--inventory", team.inventory)
    assert drift.returncode == 0, drift.stdout  # the inventory is the 128-GPU plan
    steps = _fs(team, "recover", "--stack", "it").stdout
    assert "state is in PostgreSQL" in steps and "refreshed every record" in steps
    outputs = [applied, plan, inv.stdout, drift.stdout, steps]
    assert not any(":fs-local-pg-pw@" in o for o in outputs)  # the password never printed


def test_two_ups_of_one_stack_one_wins_the_other_is_refused(
    team: Team, procs: list[subprocess.Popen[str]]
) -> None:
    _init(team, "it", 256)
    first = _start_up(team, procs)
    # The second starts once the first holds its lock row (the backend writes the lock,
    # then lists the stack's locks: two writers within the same instant can both lose).
    _wait_for(lambda: _lock_rows(team) > 0, first, "the first up taking its lock")
    second = subprocess.run(UP, cwd=team.proj, env=team.env, capture_output=True, text=True)
    assert first.wait(timeout=600) == 0, _log(team)[-2000:]
    assert second.returncode != 0
    err = second.stdout + second.stderr
    assert "the stack is currently locked by 1 lock(s)" in err, err
    assert "fabric:fs-local-pg-pw@" not in err  # the lock's URL is shown with ****:****
    _assert_inventory_is_plan(team, "it", 256)
    _assert_state_is_plan(team)
    assert _lock_rows(team) == 0


def test_preview_during_an_up_sees_a_whole_state(
    team: Team, procs: list[subprocess.Popen[str]]
) -> None:
    _init(team, "it", 128)
    pulumi(team.proj, team.env, *UP[1:])
    pulumi(team.proj, team.env, "config", "set", "--stack", "it", "fabric:gpus", "512")
    creates = _creates(preview_steps(team.proj, team.env, "--stack", "it"))
    up = _start_up(team, procs)
    _wait_for(lambda: _rows(team) > 700, up, "the up writing records")
    seen = [creates]
    # A CI gate previewing (a few times) while the up rewrites the checkpoint.
    while up.poll() is None and len(seen) < 4:
        r = pulumi(team.proj, team.env, "preview", "--json", "--stack", "it", check=False)
        assert r.returncode == 0, r.stderr[-2000:]
        seen.append(_creates(json.loads(r.stdout)["steps"]))
    assert up.wait() == 0, _log(team)[-2000:]
    seen.append(_creates(preview_steps(team.proj, team.env, "--stack", "it")))
    # Each preview read one whole checkpoint, each one no older than the last: what is
    # left to create only shrinks.
    assert len(seen) >= 3 and seen == sorted(seen, reverse=True) and seen[-1] == 0, seen
    _assert_inventory_is_plan(team, "it", 512)
    _assert_state_is_plan(team)


GROWN = 512
"""What the killed ``up`` grows the 128-GPU stack to."""


def test_killed_up_recovers_on_postgres(team: Team, procs: list[subprocess.Popen[str]]) -> None:
    _init(team, "it", 128)
    _fs(team, "apply", "--stack", "it", "--yes")
    before = _rows(team)
    # 128 -> 512 GPUs: 1,212 new records, killed after 300 (1,024 GPUs made the apply that
    # finishes it write 3,000 more and proved nothing more: the kill is what is tested).
    pulumi(team.proj, team.env, "config", "set", "--stack", "it", "fabric:gpus", str(GROWN))
    up = _start_up(team, procs)
    _wait_for(lambda: _rows(team) >= before + 300, up, "300 new records")
    # recover refuses while the update is alive: it would break a running update's lock
    early = _fs(team, "recover", "--stack", "it", check=False)
    assert early.returncode == 2 and "is locked by an update that is still running" in early.stderr
    assert up.poll() is None, "up finished before it could be killed; grow the change"
    # The CLI and its plugins: they run in process groups of their own, in its session.
    assert len(kill_session(up.pid)) >= 3
    up.wait()
    mid = _rows(team)
    assert before < mid < _rows_expected(GROWN)  # it really stopped half-way
    stale = subprocess.run(UP, cwd=team.proj, env=team.env, capture_output=True, text=True)
    assert stale.returncode != 0 and "currently locked" in stale.stdout + stale.stderr
    steps = _fs(team, "recover", "--stack", "it").stdout.splitlines()
    assert steps[:3] == [
        "✓ state is in PostgreSQL: each write is one statement, nothing torn to repair",
        "✓ cleared the stale update lock",
        "✓ refreshed every record from the inventory and cleared pending creates",
    ]
    _fs(team, "apply", "--stack", "it", "--yes")
    _assert_inventory_is_plan(team, "it", GROWN)
    _assert_state_is_plan(team)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server of this test's own (it gets restarted): (URL, its scripts/postgres.sh dir)."""
    sh = str(REPO_ROOT / "scripts" / "postgres.sh")
    d = tmp_path / "pg"
    r = subprocess.run(["bash", sh, "start", str(d)], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    try:
        yield r.stdout.strip().splitlines()[-1], d
    finally:
        subprocess.run(["bash", sh, "stop", str(d)], capture_output=True, timeout=120)


@pytest.mark.parametrize("down", [5, 40])
def test_server_restart_mid_up(
    tmp_path: Path,
    pulumi_env: dict[str, str],
    own_server: tuple[str, Path],
    procs: list[subprocess.Popen[str]],
    down: int,
) -> None:
    """The server crashes (``pg_ctl -m immediate``) mid-``up`` and is back ``down`` s later.

    Pulumi retries a checkpoint write 10 times, 1 s apart growing 1.2× (~26 s in all;
    ``backend/diy/state.go``), so a short outage can be ridden through, unless a
    provider was writing the inventory at that moment: that resource fails (one line,
    nothing of it committed) and so does the ``up``. A longer outage always fails the
    ``up``; its lock row could not be deleted while the server was down. Either way
    ``recover`` then ``apply`` complete it, nothing lost or duplicated.
    """
    url, pg_dir = own_server
    t = _team(tmp_path, pulumi_env, url)
    _init(t, "it", 128)
    pulumi(t.proj, t.env, *UP[1:])
    before = _rows(t)
    pulumi(t.proj, t.env, "config", "set", "--stack", "it", "fabric:gpus", "512")
    up = _start_up(t, procs)
    _wait_for(lambda: _rows(t) >= before + 300, up, "300 new records")
    sh = str(REPO_ROOT / "scripts" / "postgres.sh")
    restart = subprocess.run(
        ["bash", sh, "restart", str(pg_dir), "immediate", str(down)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert restart.returncode == 0, restart.stderr
    rc = up.wait(timeout=600)
    out = _log(t)
    assert "fabric:fs-local-pg-pw@" not in out  # no password in what the CLI printed
    if rc != 0:
        assert (
            "An IO error occurred while writing the new snapshot file" in out
            or "connection lost" in out
        ), out[-3000:]
        assert before < _rows(t) < _rows_expected(512)  # it stopped half-way
        _fs(t, "recover", "--stack", "it")
        _fs(t, "apply", "--stack", "it", "--yes")
    elif down > 26:
        raise AssertionError(f"the up outlived a {down} s outage:\n{out[-3000:]}")
    _assert_inventory_is_plan(t, "it", 512)
    _assert_state_is_plan(t)


SITES = [(f"site-{i:02d}", (16, 32, 64)[i % 3]) for i in range(8)]
"""Two stacks per worker, of three sizes (a row in the wrong stack shows). The 20-stack,
32-128-GPU figure is bench/bench_team.py's; 8 stacks prove the same concurrency here."""


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}"))


def test_eight_stacks_by_four_workers_all_succeed(tmp_path: Path, team: Team) -> None:
    """One stack per site, 4 at a time, the way docs/pulumi-stack.md "Team setup" configures a team:
    URLs without passwords, which come from a ~/.pgpass-style file (both lib/pq, in
    the Pulumi CLI, and libpq, in the providers, read PGPASSFILE)."""
    pgpass = tmp_path / "pgpass"
    pgpass.write_text("127.0.0.1:*:*:fabric:fs-local-pg-pw\n")
    pgpass.chmod(0o600)
    state = _without_password(team.state_db)
    env = dict(team.env, PGPASSFILE=str(pgpass), PULUMI_BACKEND_URL=state_backend_url(state))
    t = Team(team.proj, env, team.state_db, team.inventory)
    # The backend creates its table on first open with CREATE TABLE IF NOT EXISTS, which
    # PostgreSQL does not make safe against a concurrent first open (duplicate key on
    # pg_type): open the new state database once before the workers do.
    pulumi(t.proj, t.env, "stack", "ls")
    inventory = _without_password(t.inventory)

    def one(site: tuple[str, int]) -> tuple[str, int, str]:
        name, gpus = site
        _init(t, name, gpus, inventory)
        r = subprocess.run([*UP[:-1], name], cwd=t.proj, env=t.env, capture_output=True, text=True)
        return name, r.returncode, (r.stdout + r.stderr)[-1500:]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, SITES))
    assert [(n, rc) for n, rc, _ in results] == [(n, 0) for n, _ in SITES], results
    for name, gpus in SITES:
        _assert_inventory_is_plan(t, name, gpus)
    ls = json.loads(pulumi(t.proj, t.env, "stack", "ls", "--json").stdout)
    assert sorted(s["name"] for s in ls) == [n for n, _ in SITES]
    assert _lock_rows(t) == 0
