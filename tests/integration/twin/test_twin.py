"""The digital twin with its real daemons: ibsim + OpenSM + infiniband-diags, namespaces + lldpd.

Each test builds a twin with the real CLI (a subprocess, as an operator runs
it), checks it, collects what the real tools print, runs the real drift on that,
injects every fault kind one at a time (each must give exactly its drift
finding), and tears the twin down: afterwards no namespace, process, runtime
directory or file of the twin may be left (checked with ``ip netns``, /proc and
the directory). Needs root; skipped with that reason otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main

pytestmark = [
    pytest.mark.twin,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
]

CLI = str(Path(sys.executable).parent / "fabric-stack")
TOOLS = (
    "ibsim",
    "opensm",
    "ibnetdiscover",
    "iblinkinfo",
    "sminfo",
    "dump_fts",
    "lldpd",
    "lldpctl",
    "ip",
)


@pytest.fixture(autouse=True, scope="module")
def _tools() -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run `make twin-deps` (scripts/twin-deps.sh)")


def twin(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``fabric-stack twin ARGS`` (the real CLI); output captured."""
    return subprocess.run(
        [CLI, "twin", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"},
    )


def ok(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 0, f"exit {res.returncode}: {res.stdout}\n{res.stderr}"
    return res.stdout


@pytest.fixture
def twin_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory for one twin; whatever happens, the twin is torn down after the test."""
    d = tmp_path / "twin"
    yield d
    twin("down", "--dir", str(d), timeout=120)


def state_of(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "twin.json").read_text())
    return data


def drift(
    out: Path, source: tuple[str, str] = ("--ibnetdiscover", "ibnetdiscover.txt")
) -> dict[str, Any]:
    """The real drift command on what `twin collect` wrote; its JSON report. ``source``
    is the IB reader's option and the collected file it reads."""
    args = ["drift", "--config", str(out / "spec.yaml"), "--format", "json"]
    if (out / "ibnetdiscover.txt").exists():
        args += [source[0], str(out / source[1])]
        args += ["--node-name-map", str(out / "node-name-map")]
    else:
        args += ["--lldp", str(out / "lldp")]
    if (out / "drift-ignore.yaml").exists():
        args += ["--ignore", str(out / "drift-ignore.yaml")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code in (0, 1), res.output
    report: dict[str, Any] = json.loads(res.output)
    assert (res.exit_code == 0) == (report["summary"]["total"] == 0)
    return report


def collect_and_drift(d: Path, out: Path) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    ok(twin("collect", "--dir", str(d), "--out", str(out)))
    return drift(out)


def host_veths() -> set[str]:
    """veth interfaces in the host's own namespace (the twin never puts one there)."""
    res = subprocess.run(
        ["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True, check=True
    )
    return {line.split(":")[1].strip() for line in res.stdout.splitlines() if ":" in line}


def assert_gone(d: Path, state: dict[str, Any]) -> None:
    """Nothing of the twin is left: namespaces (and their veths), processes, runtime dir, files."""
    assert not {v.split("@")[0] for v in host_veths()} & PLAN_PORT_NAMES
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    listed = {line.split()[0] for line in names.stdout.splitlines() if line.strip()}
    assert not listed & set(state["namespaces"])
    assert not any(n.startswith(f"fst-{state['tag']}-") for n in listed)
    for p in state["processes"]:
        stat = Path(f"/proc/{p['pid']}/stat")
        if stat.exists():  # the PID may be reused by something else: then it started later
            fields = stat.read_text().rsplit(")", 1)[1].split()
            # A zombie has exited and holds nothing; its new parent (init) reaps it.
            if fields[0] != "Z":
                assert int(fields[19]) != p["start_ticks"], f"{p['name']} ({p['pid']}) runs"
    assert not Path(state["runtime_dir"]).exists()
    assert not d.exists(), sorted(str(x) for x in d.rglob("*"))[:10]


OTHER_IB_SOURCES = (("--iblinkinfo", "iblinkinfo.txt"), ("--ibnetdiscover", "ibnetdiscover-p.txt"))
"""What `twin collect` also writes on IB: real ``iblinkinfo`` and ``ibnetdiscover -p``."""


def findings_named(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each finding's kind, summary (the cables/devices it names) and the cable ends it
    compares, without the evidence line (``where``) and the id, which differ by file."""

    def ends(side: list[dict[str, Any]]) -> str:
        return json.dumps([{k: v for k, v in e.items() if k != "where"} for e in side])

    return sorted(
        (f["kind"], f["summary"], ends(f["expected"]) + ends(f["actual"]))
        for f in report["findings"]
    )


def assert_sources_agree(out: Path, report: dict[str, Any]) -> None:
    """Drift of the same fabric read from iblinkinfo and from ``ibnetdiscover -p`` finds
    what the ibnetdiscover drift found (kinds, the cables and devices they name)."""
    for source in OTHER_IB_SOURCES:
        other = drift(out, source)
        assert findings_named(other) == findings_named(report), source[1]
        assert other["summary"] == report["summary"], source[1]


def run_faults(d: Path, out: Path, faults: list[list[str]], *, all_sources: bool = False) -> None:
    """Each fault alone gives exactly the one finding its kind means; --clear restores the
    plan. ``all_sources``: the iblinkinfo and ``-p`` drifts must find the same."""
    for f in faults:
        said = ok(twin("fault", "--dir", str(d), *f))
        expects = said.split("drift should report ")[1].split(")")[0]
        report = drift_after(d, out)
        kinds = [x["kind"] for x in report["findings"]]
        assert kinds == [expects], f"{' '.join(f)}: {kinds}"
        if all_sources:
            assert_sources_agree(out, report)
        if f is faults[0]:  # the fault log is part of the state
            listed = ok(twin("fault", "--dir", str(d), "--list"))
            assert listed.startswith(f"1. {f[0]} ") and f"(expects {expects})" in listed
        ok(twin("fault", "--dir", str(d), "--clear"))
    assert drift_after(d, out)["summary"]["total"] == 0


def drift_after(d: Path, out: Path) -> dict[str, Any]:
    return collect_and_drift(d, out)


PLAN_PORT_NAMES = {"mlx5_0", "swp1s0", "swp10s1", "eth0", "stor1", "mgmt1", "bmc1"}
"""Interface names the twins here create (inside their namespaces, never in the host's)."""

IB_FAULTS = [
    ["unplug", "su1-node01:mlx5_0"],
    ["swap", "su1-node01:mlx5_0", "su1-node02:mlx5_0"],
    ["move", "su1-node03:mlx5_0", "su1-r1-leaf:17"],
    ["speed", "spine-01:1", "200"],
    ["down", "su1-node04"],
    ["rogue", "su1-r2-leaf:20", "intruder-1"],
]


def test_ib_128_gpus(twin_dir: Path, tmp_path: Path) -> None:
    said = ok(twin("up", "--dir", str(twin_dir)))
    assert "SUBNET UP" in said and "twin up in" in said
    state = state_of(twin_dir)
    res = twin("check", "--dir", str(twin_dir), "--format", "json")
    report = json.loads(ok(res))
    assert report["routing"] == {**report["routing"], "planned": "ftree", "engine": "ftree"}
    assert report["routing"]["fell_back"] is False
    assert [s["state"] for s in report["sm"]] == ["MASTER", "STANDBY"]
    assert [s["priority"] for s in report["sm"]] == [15, 14]
    q = report["reachability"]
    assert q["pairs"] == 130 * 129 == q["ok"]  # 128 GPU HCAs + the two UFM HCAs
    assert set(q["hops"]) == {"1", "3"}  # same leaf, or through a spine
    assert report["links"]["agree"] == report["links"]["planned"] == 386  # + 2 UFM cables
    assert [s["attach"] for s in report["sm"]] == ["ufm-1", "ufm-2"]  # on their own HCAs
    out = tmp_path / "seen"
    assert collect_and_drift(twin_dir, out)["summary"]["total"] == 0
    assert "4xHDR" in (out / "ibnetdiscover.txt").read_text()  # the real tool's output
    assert "53.125 Gbps Active/" in (out / "iblinkinfo.txt").read_text()  # ibsim's HDR lanes
    assert " 4x HDR - SW " in (out / "ibnetdiscover-p.txt").read_text()  # the ports report
    base = drift(out)
    for source in OTHER_IB_SOURCES:  # the same fabric through the other two readers
        seen = drift(out, source)
        assert seen["summary"]["total"] == 0, source[1]
        assert [(s["links"], s["devices"]) for s in seen["sources"]] == [(386, 30)], source[1]
        scoped = {**seen["coverage"], "scope": base["coverage"]["scope"]}  # names the reader
        assert scoped == base["coverage"], source[1]
    notes = " ".join(drift(out, OTHER_IB_SOURCES[1])["sources"][0]["notes"])
    assert "read as `ibnetdiscover -p`" in notes  # identity is the port GUID there
    run_faults(twin_dir, out, IB_FAULTS, all_sources=True)
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)
    assert "nothing to do" in ok(twin("down", "--dir", str(twin_dir)))  # idempotent


def test_ib_dgx_h100_names(twin_dir: Path, tmp_path: Path) -> None:
    """A twin of DGX H100s: the HCAs are the user guide's mlx5_0, mlx5_3 … mlx5_11."""
    ok(twin("up", "--dir", str(twin_dir), "--node-profile", "dgx-h100", "--gpus", "64"))
    state = state_of(twin_dir)
    report = json.loads(ok(twin("check", "--dir", str(twin_dir), "--format", "json")))
    # 64 GPU HCAs + the two UFM HCAs the plan cables (issue 17's fabric managers).
    assert report["reachability"]["pairs"] == 66 * 65 == report["reachability"]["ok"]
    out = tmp_path / "seen"
    assert collect_and_drift(twin_dir, out)["summary"]["total"] == 0
    dump = (out / "ibnetdiscover.txt").read_text()
    assert '"su1-node01 mlx5_11"' in dump and '"su1-node01 mlx5_7"' not in dump
    run_faults(
        twin_dir, out, [["swap", "su1-node01:mlx5_3", "su1-node02:mlx5_3"], ["down", "su1-node04"]]
    )
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)


def test_given_guids_are_used_and_a_second_up_is_refused(twin_dir: Path, tmp_path: Path) -> None:
    guids = tmp_path / "guids.csv"
    guids.write_text(
        "name,guid\nspine-01,0x0002c90300a1b2c0\nsu1-node01 mlx5_0,0x0002c90300a1b300\n"
        "ufm-1 mlx5_0,0x0002c90300a1b3f0\n"
    )
    ok(twin("up", "--gpus", "16", "--guids", str(guids), "--dir", str(twin_dir)))
    assert state_of(twin_dir)["guids"]["spine-01"] == "0x0002c90300a1b2c0"
    roots = (twin_dir / "ib" / "etc" / "root-guids.conf").read_text()
    assert "0x0002c90300a1b2c0" in roots  # the rendered ftree roots carry the given GUID
    report = json.loads(ok(twin("check", "--dir", str(twin_dir), "--format", "json")))
    # the master SM answers on ufm-1's HCA port: sminfo reports the port GUID, which ibsim
    # numbers node GUID + 1 (the rendered config binds the given node GUID, adapted the same)
    assert report["sm"][0]["guid"] == "0x0002c90300a1b3f1"
    conf = (twin_dir / "ib" / "etc" / "opensm-ufm-1.conf").read_text()
    assert "\nguid 0x0002c90300a1b3f0\n" in conf  # rendered bound to that port
    res = twin("up", "--gpus", "16", "--dir", str(twin_dir))
    assert res.returncode == 2
    assert res.stderr.startswith("error: ") and "a twin is already there" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert state_of(twin_dir)["complete"] is True  # the running twin is untouched


def test_ib_routing_fallback_is_a_failing_check(twin_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "ar.yaml"
    cfg.write_text("gpus: 16\ninfiniband:\n  routing_engine: ar_ftree\n")
    ok(twin("up", "--config", str(cfg), "--dir", str(twin_dir)))
    res = twin("check", "--dir", str(twin_dir), "--format", "json")
    assert res.returncode == 1
    routing = json.loads(res.stdout)["routing"]
    # Upstream OpenSM has no ar_ftree (an NVIDIA engine): it falls back and says so.
    assert routing["planned"] == "ar_ftree" and routing["fell_back"] is True
    assert routing["engine"] != "ar_ftree"


def test_ib_1024_gpus(twin_dir: Path, tmp_path: Path) -> None:
    ok(twin("up", "--gpus", "1024", "--dir", str(twin_dir)))
    state = state_of(twin_dir)
    report = json.loads(ok(twin("check", "--dir", str(twin_dir), "--format", "json")))
    # 127 servers (one position went to the UFMs) + 2 UFM HCAs, 8 HCAs per server
    hcas = 127 * 8 + 2
    assert report["reachability"]["ok"] == report["reachability"]["pairs"] == hcas * (hcas - 1)
    assert report["routing"]["engine"] == "ftree"
    out = tmp_path / "seen"
    assert collect_and_drift(twin_dir, out)["summary"]["total"] == 0
    run_faults(twin_dir, out, [["swap", "su4-node32:mlx5_7", "su1-node01:mlx5_7"]])
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)


ROCE_FAULTS = [
    ["unplug", "su1-node01:mlx5_0"],
    ["swap", "su1-node01:mlx5_0", "su1-node02:mlx5_0"],
    ["move", "su1-node03:mlx5_0", "su1-r1-leaf:17"],
    ["down", "su1-node04"],
    ["rogue", "su1-r2-leaf:20", "intruder-1"],
]


def test_roce_32_gpus(twin_dir: Path, tmp_path: Path) -> None:
    """4 servers (the faults name su1-node01 … su1-node04) and the whole SU's switches: the
    16 switches and 512 leaf-spine cables of the 128-GPU twin, 12 fewer servers (each fault
    is collected from every namespace: 20 instead of 32)."""
    said = ok(twin("up", "--fabric", "roce", "--switch", "sn5600", "--gpus", "32",
                   "--dir", str(twin_dir)))  # fmt: skip
    assert "LLDP converged" in said
    state = state_of(twin_dir)
    report = json.loads(ok(twin("check", "--dir", str(twin_dir), "--format", "json")))
    assert report["lldp"]["ports"] == report["lldp"]["agree"] == 2 * 560  # 512 leaf-spine
    out = tmp_path / "seen"
    assert collect_and_drift(twin_dir, out)["summary"]["total"] == 0
    assert len(list((out / "lldp").glob("*.json"))) == 20  # 4 servers + 16 switches
    run_faults(twin_dir, out, ROCE_FAULTS)
    res = twin("fault", "--dir", str(twin_dir), "speed", "spine-01:1", "200")
    assert res.returncode == 2 and res.stderr.startswith("error: speed: a veth has one fixed")
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)


def _twin_namespaces(tag: str) -> int:
    res = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return sum(1 for line in res.stdout.splitlines() if line.startswith(f"fst-{tag}-"))


@pytest.mark.parametrize("when", ["namespaces", "daemons"])
def test_killed_up_then_down_cleans_everything(twin_dir: Path, when: str) -> None:
    """Kill `up` while it creates namespaces and veths, or once lldpd runs everywhere."""
    proc = subprocess.Popen(
        [CLI, "twin", "up", "--fabric", "roce", "--switch", "sn5600", "--dir", str(twin_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (twin_dir / "twin.json").exists():
                st = state_of(twin_dir)
                if when == "namespaces" and _twin_namespaces(st["tag"]) >= 5:
                    break
                if when == "daemons" and len(st["processes"]) >= 4:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, "up finished before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    state = state_of(twin_dir)
    assert state["complete"] is False
    res = twin("check", "--dir", str(twin_dir))
    assert res.returncode == 2 and "did not finish" in res.stderr
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)
