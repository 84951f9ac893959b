"""iperf3 -J results read back and judged: the real outputs (tests/fixtures/accept/iperf3),
refusals in one line, placement by the plan's rail addresses, the figure a run is held to
(its pace, the sweep's median), and one direction of one port found from a sweep.

The sweeps are `twin traffic`'s own pairs (:func:`fabric_stack.twin.ops_traffic.sweep_pairs`)
on the twin's plan (the seed's servers on RoCE, 4 of them), written from the real paced run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.acceptance import AcceptContext, UnrecognisedResultError, judge_results
from fabric_stack.acceptance.checks import cable_text, rail_cable
from fabric_stack.acceptance.iperf3 import read_iperf3
from fabric_stack.acceptance.judge import read_results
from fabric_stack.cli import main
from fabric_stack.errors import InputFileError
from fabric_stack.twin.ops_traffic import sweep_pairs
from fabric_stack.underlay.plan import plan_underlay
from tests.accept_fixtures import IPERF3, iperf3_json, iperf3_sweep, roce_seed


def read(name: str) -> list:  # type: ignore[type-arg]
    p = IPERF3 / name
    return read_iperf3(p.read_text(encoding="utf-8"), str(p))


def test_the_real_outputs_are_read_by_eye() -> None:
    # su1-node01_mlx5_0_to_su1-node02.json: "bits_per_second": 998234799.11294019 in
    # end.sum_received, target_bitrate 1000000000, local 10.64.0.2, remote 10.64.0.3
    (r,) = read("su1-node01_mlx5_0_to_su1-node02.json")
    assert (r.local_host, r.remote_host, r.received_gbps, r.target_gbps) == (
        "10.64.0.2",
        "10.64.0.3",
        0.998,
        1.0,
    )
    assert (r.host, r.device, r.peer, r.reverse, r.retransmits) == (
        "su1-node01",
        "mlx5_0",
        "su1-node02",
        False,
        0,
    )
    assert r.version == "iperf 3.12" and r.protocol == "TCP" and r.streams == 1
    (u,) = read("su1-node02_mlx5_1_to_su1-node03.json")  # unpaced: what the veths carried
    assert (u.target_gbps, u.received_gbps) == (None, 13.147)
    (rev,) = read("su1-node04_mlx5_0_to_su1-node01.json")  # -R: the server sends
    assert rev.reverse is True and rev.received_gbps == 1.0
    (err,) = read("refused.json")
    assert err.error == "unable to connect to server: Connection refused"
    assert err.received_gbps is None and err.local_host is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"start": {"connected": [', "r.json:1: not valid JSON (Expecting value, column 26)"),
        ('{"plan": "x", "tests": []}', "r.json:1: JSON but not iperf3 -J output (no 'start'"),
        ('[{"start": {}}]', "r.json: neither nccl-tests output"),
        (
            '{"start": {"test_start": {"protocol": "TCP"}}, "end": {}}',
            "r.json:1: iperf3 result without end.sum_received (the run was cut)",
        ),
        (
            '{"start": {}, "end": {"sum_received": {"bits_per_second": "fast"}}}',
            "r.json:1: end.sum_received.bits_per_second is not a number: 'fast'",
        ),
        (
            '{"start": {}, "end": {"sum_received": {"bits_per_second": -1}}}',
            "r.json:1: end.sum_received.bits_per_second is out of range: -1",
        ),
    ],
    ids=["cut", "other-json", "json-array", "no-sum", "not-a-number", "negative"],
)
def test_refusals_are_one_line_naming_the_line(text: str, problem: str) -> None:
    with pytest.raises(InputFileError) as exc:
        read_results(text, "r.json")
    assert str(exc.value).startswith(problem)
    assert "\n" not in str(exc.value)
    if problem.startswith("r.json: neither"):
        assert isinstance(exc.value, UnrecognisedResultError)


def test_several_runs_in_one_file_name_their_lines() -> None:
    one = iperf3_json("10.64.0.2", "10.64.0.3", 0.49)
    runs = read_iperf3(one + "\n" + one, "log.json")
    assert [(r.run, r.line) for r in runs] == [(1, 1), (2, one.count("\n") + 2)]


def judge(files: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    return judge_results(files, AcceptContext(roce_seed(), drift="fabric-stack drift"))


def test_a_healthy_sweep_passes_against_its_pace_not_the_line_rate() -> None:
    rep = judge(iperf3_sweep(roce_seed()))
    assert len(rep.tests) == 64 and len(rep.matrix) == 64 and rep.exit_code == 0
    t = rep.tests[0]
    assert (t.tool, t.kind, t.expected, t.pass_at, t.measured) == (
        "iperf3",
        "iperf3",
        0.498,
        0.448,
        0.498,
    )
    assert t.basis[0] == (
        "the lower of the rate it was paced at (iperf3 -b 0.5G) and the median of the 64 "
        "iperf3 runs (0.498 Gb/s)"
    )
    assert "not by the plan's 400G line rate" in t.basis[1]
    assert t.placement == "su1-node01 rail 1 (mlx5_0) → su1-node02"
    assert t.notes[0] == "10.64.0.2 is su1-node01's mlx5_0 in the plan"
    assert {c.flow for c in rep.matrix} == {"to peer"}


def test_one_direction_of_one_leaf_port_is_that_ports_cable() -> None:
    # The leaf's egress toward su1-node03 on rail 6 shaped: the two runs into it are slow,
    # its own runs out pass. Every end passes elsewhere, so only the direction tells.
    topo = roce_seed()
    rep = judge(iperf3_sweep(topo, slow_into={("su1-node03", "mlx5_5")}))
    failed = [t for t in rep.tests if t.passed is False]
    assert sorted(t.servers[0] for t in failed) == ["su1-node02", "su1-node04"]
    assert {t.servers[1] for t in failed} == {"su1-node03"}
    link = rail_cable(AcceptContext(topo), "su1-node03", "mlx5_5")
    assert link is not None
    cable = cable_text(link)
    assert cable == f"su1-node03:mlx5_5 <-> su1-r6-leaf:{link.b_port}"
    for t in failed:
        (s,) = t.suspects
        assert s.where == cable and s.cables == [cable]
        assert s.what == (
            f"su1-node03's rail-6 port, leaf → server: su1-r6-leaf:{link.b_port}'s egress or "
            "the cable"
        )
        assert "every run into su1-node03 on rail 6 is slow (from su1-node02, su1-node04)" in s.why
        assert f"port {link.b_port}'s egress shaping" in s.check
    assert all(
        t.passed for t in rep.tests if t.servers[1] != "su1-node03" or "mlx5_5" not in t.file
    )


def test_the_transmit_side_is_told_from_the_receive_side() -> None:
    topo = roce_seed()
    rep = judge(iperf3_sweep(topo, slow_out_of={("su1-node02", "mlx5_1")}))
    failed = [t for t in rep.tests if t.passed is False]
    assert sorted(t.servers[1] for t in failed) == ["su1-node01", "su1-node03"]
    (what,) = {s.what for t in failed for s in t.suspects}
    assert what == "su1-node02's rail-2 port, server → leaf: its transmit side or the cable"


def test_a_cable_slow_both_ways_is_its_nic_or_cable() -> None:
    slow = {("su1-node04", "mlx5_7")}
    rep = judge(iperf3_sweep(roce_seed(), slow_into=slow, slow_out_of=slow))
    (what,) = {s.what for t in rep.tests if t.passed is False for s in t.suspects}
    assert what == "su1-node04's rail-8 NIC mlx5_7 or its cable"


def test_unpaced_runs_are_held_to_the_median_and_two_are_not_judged() -> None:
    files = iperf3_sweep(roce_seed(), {("su1-node01", "mlx5_0")}, healthy=9.7, slow=3.1, pace=None)
    rep = judge(files)
    t = rep.tests[0]
    assert t.expected == 9.7 and t.basis[0] == (
        "the median of the 64 iperf3 runs (9.7 Gb/s): the rails compared with each other"
    )
    assert len(rep.failed) == 2
    two = judge(files[:2])
    assert [t.passed for t in two.tests] == [None, None]
    assert two.tests[0].basis == [
        "unpaced, and 2 iperf3 run(s): fewer than 3 to compare (not judged)"
    ]


def test_a_run_that_did_not_connect_fails_with_no_result() -> None:
    text = (IPERF3 / "refused.json").read_text(encoding="utf-8")
    rep = judge([*iperf3_sweep(roce_seed())[:4], ("su1-node01_mlx5_0_to_su1-node03.json", text)])
    t = rep.tests[-1]
    assert (t.passed, t.fail_reason, t.measured) == (False, "no result", None)
    assert "iperf3: unable to connect to server: Connection refused" in t.notes
    assert t.placement == "su1-node01 rail 1 (mlx5_0) → su1-node03"  # from the file name


def test_the_cli_reads_a_directory_and_skips_json_that_is_not_iperf3(tmp_path: Path) -> None:
    d = tmp_path / "iperf3"
    d.mkdir()
    for name, text in iperf3_sweep(roce_seed(), {("su1-node03", "mlx5_5")}):
        (d / name).write_text(text, encoding="utf-8")
    (d / "acceptance.json").write_text('{"plan": "x", "tests": []}', encoding="utf-8")
    args = ["accept", "--fabric", "roce", "--switch", "sn5600", "--gpus", "32"]
    r = CliRunner().invoke(main, [*args, "--format", "json", str(d)])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert doc["summary"] == {"passed": 62, "failed": 2, "not_judged": 0}
    assert doc["skipped"] == [f"{d / 'acceptance.json'}: not nccl-tests, perftest or iperf3 output"]
    t = next(t for t in doc["tests"] if not t["passed"])
    assert t["measured_gbps"] == 0.096 and t["expected"] == 0.498
    table = CliRunner().invoke(main, [*args, str(d)], env={"COLUMNS": "200"}).output
    assert "Per-rail iperf3, Gb/s: each host's slowest run (✗ below the floor)" in table
    assert "0.10 ✗" in table and "62 more iperf3 runs passed" in table


def test_the_sweep_is_each_server_to_its_next_and_previous_on_every_rail() -> None:
    rounds = sweep_pairs(list(plan_underlay(roce_seed()).hosts))
    assert len(rounds) == 8 and all(len(r) == 8 for r in rounds)  # 8 rails side by side
    rail1 = [(a.server[-2:], b.server[-2:]) for r in rounds for a, b in r if a.rail == 1]
    assert rail1 == [
        ("01", "02"), ("02", "03"), ("03", "04"), ("04", "01"),
        ("01", "04"), ("02", "01"), ("03", "02"), ("04", "03"),
    ]  # fmt: skip
    two = sweep_pairs(list(plan_underlay(roce_seed(16)).hosts))
    assert len(two) == 2  # two servers: one pair each way, not twice


def test_the_twins_own_shaped_sweep_names_the_shaped_port() -> None:
    # Real iperf3 output of `twin traffic` with su1-r6-leaf:swp2s0 shaped to 100 Mbit/s
    # (tests/fixtures/accept/iperf3/SOURCES.md): the same finding as the root-only test.
    d = IPERF3.parent / "twin-shaped"
    args = ["accept", "--config", str(d / "spec.yaml"), "--format", "json", str(d / "iperf3")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert doc["summary"] == {"passed": 62, "failed": 2, "not_judged": 0}
    failed = [t for t in doc["tests"] if not t["passed"]]
    assert [t["servers"] for t in failed] == [
        ["su1-node02", "su1-node03"],
        ["su1-node04", "su1-node03"],
    ]
    assert [t["measured_gbps"] for t in failed] == [0.099, 0.099]
    (where,) = {s["where"] for t in failed for s in t["suspects"]}
    assert where == "su1-node03:mlx5_5 <-> su1-r6-leaf:swp2s0"
