"""`fabric-stack accept`: exit codes, the JSON shape, Markdown, directories, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from fabric_stack.cli import main
from tests.accept_fixtures import HEALTHY, SLOW, perftest
from tests.unit.test_accept_readers import NT, PT, REAL, pytestmark  # noqa: F401


def run(*args: str) -> Result:
    """The command, its table rendered 200 columns wide (rich reads COLUMNS)."""
    return CliRunner().invoke(
        main, ["accept", *args], catch_exceptions=False, env={"COLUMNS": "200"}
    )


def write_sweep(d: Path, slow: str | None = None) -> Path:
    """Rail 1 of the seed's 16 servers, each to the next; ``slow``'s runs at 60 %."""
    d.mkdir()
    hosts = [f"su1-node{i:02d}" for i in range(1, 17)]
    for i, h in enumerate(hosts):
        peer = hosts[(i + 1) % 16]
        gbps = SLOW if slow in (h, peer) else HEALTHY
        (d / f"{h}_mlx5_0.txt").write_text(perftest(h, "mlx5_0", peer, gbps), encoding="utf-8")
    (d / "README.md").write_text("how the sweep was run\n", encoding="utf-8")
    return d


def test_a_healthy_sweep_exits_0_and_skips_what_is_not_a_result(tmp_path: Path) -> None:
    r = run(str(write_sweep(tmp_path / "sweep")))
    assert r.exit_code == 0, r.output
    assert "16 passed, 0 failed, 0 not judged" in r.output
    assert "README.md: not nccl-tests, perftest or iperf3 output" in r.output


def test_json_shape_and_exit_1(tmp_path: Path) -> None:
    r = run("--format", "json", str(write_sweep(tmp_path / "sweep", slow="su1-node07")))
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert set(doc) == {"plan", "tests", "matrix", "skipped", "summary"}
    t = next(t for t in doc["tests"] if not t["passed"])
    assert list(t)[:8] == [
        "file",
        "kind",
        "hosts",
        "bytes",
        "measured_gbps",
        "expected",
        "passed",
        "suspects",
    ]
    assert t["kind"] == "ib_write_bw" and t["expected"] == 376.0
    assert set(t["suspects"][0]) == {"what", "where", "why", "check", "cables"}
    assert t["suspects"][0]["what"] == "su1-node07's rail-1 NIC mlx5_0 or its cable"
    assert "fabric-stack drift --ibnetdiscover" in t["suspects"][0]["check"]
    assert doc["summary"] == {"passed": 14, "failed": 2, "not_judged": 0}


def test_nccl_json_uses_busbw_and_the_spec_options_reach_the_drift_command(tmp_path: Path) -> None:
    names = tmp_path / "names.csv"
    names.write_text("planned,actual\nsu1-node01,bm-h100-01\nsu1-node02,bm-h100-02\n", "utf-8")
    log = NT / "nccl-tests-issue309-hgx-h100-ib-ndr-2node-allreduce.txt"
    r = run("--gpus", "16", "--names", str(names), "--format", "json", str(log))
    assert r.exit_code == 0, r.output
    (t,) = json.loads(r.output)["tests"]
    assert t["measured_busbw_gbs"] == 469.21 and "measured_gbps" not in t
    assert t["servers"] == ["bm-h100-01", "bm-h100-02"]


def test_markdown_is_an_acceptance_record(tmp_path: Path) -> None:
    r = run("--format", "markdown", str(write_sweep(tmp_path / "sweep", slow="su1-node03")))
    assert r.exit_code == 1
    assert r.output.startswith("## Acceptance record\n\nPlan: gpu-cluster: 16 servers × 8 GPUs")
    assert "| su1-node03_mlx5_0.txt#1 | ib_write_bw | su1-node03, su1-node04 | 64K |" in r.output
    assert "### Per-rail perftest, Gb/s: each host's slowest run (✗ below the floor)" in r.output
    assert "| su1-node03 | 235 ✗ |" in r.output
    assert "- **suspect: su1-node03's rail-1 NIC mlx5_0 or its cable**" in r.output


def test_table_output_shows_the_matrix(tmp_path: Path) -> None:
    r = run(str(write_sweep(tmp_path / "sweep", slow="su1-node03")))
    assert r.exit_code == 1
    assert "Per-rail perftest, Gb/s" in r.output and "235 ✗" in r.output
    assert "su1-node03's rail-1 NIC mlx5_0 or its cable" in r.output


def test_unreadable_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("not a result\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["accept", str(bad)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: {bad}: neither nccl-tests output (no '# nThread … nGpus …' header) nor "
        "perftest output (no '… BW Test' or '… Latency Test' title) nor iperf3 -J output "
        "(no JSON object)"
    ]
    r = CliRunner().invoke(main, ["accept", str(tmp_path / "missing.log")])
    assert r.exit_code == 2 and "missing.log: cannot read: no such file" in r.output
    binary = tmp_path / "x.log"
    binary.write_bytes(b"\xff\xfe# nThread")
    r = CliRunner().invoke(main, ["accept", str(binary)])
    assert r.exit_code == 2 and "not UTF-8 text" in r.output and "Traceback" not in r.output


def test_a_malformed_row_names_its_line(tmp_path: Path) -> None:
    text = (PT / "cx7-ndr-back-to-back-ib_send_lat_read_write.txt").read_text(encoding="utf-8")
    bad = tmp_path / "csegpu1_mlx5_0.txt"
    bad.write_text(text.replace("392.34 \t\t     0.748336", "x"), encoding="utf-8")
    r = CliRunner().invoke(main, ["accept", str(bad)])
    assert r.exit_code == 2
    assert r.output.startswith(f"error: {bad}:99: perftest result row with 4 fields")


def test_every_real_sample_folder_is_judged_without_an_error() -> None:
    # Against the default plan (16 × 8 H100, IB): no names, so hosts are placed by count
    # (the 1,024-rank crash log cannot be, and is refused as such).
    r = CliRunner().invoke(main, ["accept", "--format", "json", str(PT)])
    assert r.exit_code == 1  # ib_read_bw under the write floor
    doc = json.loads(r.output)
    assert len(doc["tests"]) == 5 and doc["skipped"] == [
        f"{PT / 'SOURCES.md'}: not nccl-tests, perftest or iperf3 output"
    ]
    assert REAL.is_dir()
