"""`accept` finds a shaped leaf port of a RoCE twin from real iperf3 measurements alone.

The twin of the seed's servers on RoCE (8 × H100 with 8 rails, SN5600, 4 servers: FRR on
every switch, the rendered host addresses), `twin traffic` (real iperf3 in the server
namespaces over the rail addresses, paced), then `accept` on what iperf3 printed. Without
shaping nothing is flagged; with one leaf port shaped by ``tc … tbf`` (the leaf's egress
toward one server, as a mis-set shaper or policer on a switch port would be) exactly the runs
into that server on that rail fail and every suspect names that port's cable. The plan and
the measurements are all `accept` gets: the shaped port is not told to it. Needs root and
iperf3 (scripts/twin-deps.sh); about a minute.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.acceptance import AcceptContext
from fabric_stack.acceptance.checks import cable_text, rail_cable
from fabric_stack.cli import main
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.ops import topology_of
from fabric_stack.underlay.plan import plan_underlay
from tests.integration.twin.test_twin import CLI, ok, state_of, twin
from tests.integration.twin.test_twin import (
    twin_dir as twin_dir,  # the fixture (torn down whatever happens)
)

pytestmark = [
    pytest.mark.twin,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
]

SPEC = ("--fabric", "roce", "--switch", "sn5600", "--gpus", "32")
SHAPED = ("su1-node03", 6)
"""The server and rail whose leaf port is shaped."""
SHAPE_RATE = "100mbit"
"""A fifth of the runs' 0.5 Gb/s pace."""
SHAPE = os.environ.get("FABRIC_TWIN_TRAFFIC_SHAPE", "1") == "1"
"""0 leaves the port unshaped (to see the test fail: nothing to find)."""


def accept(results: Path) -> dict[str, Any]:
    """`fabric-stack accept` on what `twin traffic` wrote: the plan and the measurements."""
    args = ["accept", "--config", str(results / "spec.yaml"), "--format", "json"]
    r = CliRunner().invoke(main, [*args, str(results / "iperf3")])
    assert r.exit_code in (0, 1), r.output
    doc: dict[str, Any] = json.loads(r.output)
    assert (r.exit_code == 0) == (doc["summary"]["failed"] == 0)
    return doc


def iperf3_left(state: TwinState) -> list[int]:
    """PIDs of iperf3 (or its `timeout`) still running in the twin's namespaces."""
    left = []
    for ns in state.namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in pids.stdout.split():
            with contextlib.suppress(OSError):  # it may exit meanwhile
                if Path(f"/proc/{pid}/comm").read_text().strip() in ("iperf3", "timeout"):
                    left.append(int(pid))
    return left


def namespace_pids(state: TwinState) -> set[int]:
    """Every process in the twin's namespaces (its daemons, and whatever a command started)."""
    pids: set[int] = set()
    for ns in state.namespaces:
        res = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        pids |= {int(p) for p in res.stdout.split()}
    return pids


def commands_of(pids: set[int]) -> dict[int, str]:
    """Each process's command line (to name what was left behind)."""
    out = {}
    for pid in sorted(pids):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            raw = b"(gone)"
        out[pid] = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return out


def namespaces_listed(state: TwinState) -> set[str]:
    res = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in res.stdout.splitlines() if line.strip()} & set(
        state.namespaces
    )


def _working(pid: int) -> bool:
    """The command runs (its SIGTERM handler is installed, cli/signals.py) and has a child
    process (a tool it started: iperf3, lldpctl)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return False
    caught = next(int(ln.split()[1], 16) for ln in status.splitlines() if ln.startswith("SigCgt:"))
    return bool(caught >> (signal.SIGTERM - 1) & 1) and bool(children)


def signalled(argv: list[str], sig: int) -> tuple[int, str, float]:
    """Run the CLI, send ``sig`` once it is at work (:func:`_working`); (exit, stderr,
    seconds from the signal to the exit)."""
    proc = subprocess.Popen(
        [CLI, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not _working(proc.pid):
            assert time.monotonic() < deadline, "the command never started a tool"
            time.sleep(0.005)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        return proc.returncode, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def assert_interrupted(code: int, err: str, sig: int, out: Path) -> None:
    """Exit 128+sig, one ``interrupted: nothing written`` line, nothing under ``out``."""
    assert code == 128 + sig, (code, err)
    assert err.strip().splitlines() == ["interrupted: nothing written"], err
    left = sorted(str(p) for p in out.rglob("*")) if out.exists() else []
    assert left == [], left  # neither results nor .tmp staging files


def assert_signals_end_cleanly(twin_dir: Path, state: TwinState, tmp_path: Path) -> None:
    """SIGINT and SIGTERM in the middle of `twin traffic` and `twin collect` (issue #35).

    Each ends with one line and 130/143, writes nothing (no staging file, no temp dir),
    and leaves no process it started in the twin's namespaces; the twin itself (its
    namespaces and daemons) stays up as it was, for `twin down`.
    """
    before = namespace_pids(state)
    temps = set(Path(tempfile.gettempdir()).glob("fabric-stack-*"))
    # Each is signalled once it has started a tool (an iperf3 run, an lldpctl).
    finished = 0
    for sig in (signal.SIGINT, signal.SIGTERM):
        out = tmp_path / f"traffic-{sig.name}"
        code, err, took = signalled(
            ["twin", "traffic", "--dir", str(twin_dir), "--out-dir", str(out)], sig
        )
        assert_interrupted(code, err, sig, out)
        assert took < 10, f"{took:.1f} s from the signal to the exit"
        out = tmp_path / f"collect-{sig.name}"
        code, err, _ = signalled(
            ["twin", "collect", "--dir", str(twin_dir), "--out-dir", str(out)], sig
        )
        if code == 0:  # the signal came as its last tool had ended: then all is written
            assert (out / "spec.yaml").exists() and not list(out.rglob("*.tmp")), err
            finished += 1
        else:
            assert_interrupted(code, err, sig, out)
    assert finished < 2, "collect finished before either signal: nothing was interrupted"
    time.sleep(0.5)  # a process killed at the exit is reaped by init meanwhile
    left = namespace_pids(state) - before
    assert not left, f"a command left a process in the twin: {commands_of(left)}"
    assert before <= namespace_pids(state), "a signal stopped one of the twin's daemons"
    assert namespaces_listed(state) == set(state.namespaces)
    assert set(Path(tempfile.gettempdir()).glob("fabric-stack-*")) <= temps


def test_a_shaped_leaf_port_is_found_from_the_measurements(twin_dir: Path, tmp_path: Path) -> None:
    if shutil.which("iperf3") is None:
        pytest.fail("iperf3 is missing: run `make twin-deps` (scripts/twin-deps.sh)")
    said = ok(twin("up", *SPEC, "--dir", str(twin_dir)))
    assert "BGP sessions up" in said
    state = TwinState.model_validate(state_of(twin_dir))
    topo = topology_of(state)

    said = ok(twin("traffic", "--dir", str(twin_dir), "--out-dir", str(tmp_path / "clean")))
    assert "iperf3: 64 runs over 8 rail(s), 8 round(s) of 2 s, each paced at 0.5 Gb/s" in said
    assert not iperf3_left(state), "traffic left iperf3 running"
    clean = accept(tmp_path / "clean")
    assert clean["summary"] == {"passed": 64, "failed": 0, "not_judged": 0}, [
        (t["file"], t["measured_gbps"], t["pass_at"]) for t in clean["tests"] if not t["passed"]
    ]
    assert not any(t["suspects"] for t in clean["tests"])
    t = clean["tests"][0]
    assert t["expected"] <= 0.5 and "paced at (iperf3 -b 0.5G)" in t["basis"][0]

    assert_signals_end_cleanly(twin_dir, state, tmp_path)

    server, rail = SHAPED
    port = next(h for h in plan_underlay(topo).hosts if h.server == server and h.rail == rail)
    if SHAPE:
        tc = ["tc", "qdisc", "add", "dev", port.leaf_port, "root", "tbf", "rate", SHAPE_RATE]
        subprocess.run(
            ["ip", "netns", "exec", f"fst-{state.tag}-{port.leaf}", *tc,
             "burst", "32kb", "latency", "50ms"],
            check=True,
        )  # fmt: skip
    ok(twin("traffic", "--dir", str(twin_dir), "--out-dir", str(tmp_path / "shaped")))
    shaped = accept(tmp_path / "shaped")
    failed = [t for t in shaped["tests"] if t["passed"] is False]
    link = rail_cable(AcceptContext(topo), server, port.nic)
    assert link is not None and (link.b_device, link.b_port) == (port.leaf, port.leaf_port)
    cable = cable_text(link)
    # The runs into su1-node03 on rail 6 (from its two neighbours), and only those, fail ...
    assert sorted((t["servers"][0], t["servers"][1]) for t in failed) == [
        ("su1-node02", server),
        ("su1-node04", server),
    ], [(t["file"], t["measured_gbps"]) for t in failed]
    assert all(f"_{port.nic}_to_{server}.json" in t["file"] for t in failed)
    # ... and each names exactly that port's cable, the leaf → server direction.
    suspects = [s for t in failed for s in t["suspects"]]
    assert suspects and all(s["where"] == cable and s["cables"] == [cable] for s in suspects)
    assert {s["what"] for s in suspects} == {
        f"{server}'s rail-{rail} port, leaf → server: {port.leaf}:{port.leaf_port}'s egress or "
        "the cable"
    }
    assert shaped["summary"] == {"passed": 62, "failed": 2, "not_judged": 0}
