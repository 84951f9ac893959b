"""`fabric-stack check` through click's runner: exit codes, formats, inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from fabric_stack.cli import main

ENV = {"COLUMNS": "100", "NO_COLOR": "1"}

MESSAGE_2TO1 = (
    "su1-r3-leaf: 42×400G down, 21×400G up (2:1); 1:1 required — "
    "re-size at 1:1: 32 down / 32 up per 64-port leaf (1 more spine)"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", *args], env=ENV)


def as_json(r: Result) -> Any:
    return json.loads(r.stdout)


def test_clean_seed_exits_0_with_a_pass_verdict() -> None:
    r = run()
    assert r.exit_code == 0, r.output
    assert "PASS: no violations (8 rules run)" in r.stdout
    assert "ib-subnet-manager-redundancy" in r.stdout


def test_oversubscribed_exits_1_with_the_exact_message() -> None:
    r = run("--oversubscription", "2:1", "--format", "json")
    assert r.exit_code == 1, r.output
    data = as_json(r)
    assert set(data) == {"summary", "violations"}
    s = data["summary"]
    assert {"status", "exit_code", "violations", "mandatory", "advisory", "rules"} <= set(s)
    assert (s["status"], s["exit_code"], s["mandatory"], s["advisory"]) == ("fail", 1, 8, 0)
    assert set(data["violations"][0]) == {
        "rule",
        "level",
        "kind",
        "resource",
        "measured",
        "allowed",
        "message",
        "fix",
    }
    msgs = {v["resource"]: v["message"] for v in data["violations"]}
    assert msgs["su1-r3-leaf"] == MESSAGE_2TO1


def test_table_is_grouped_by_rule_with_columns() -> None:
    r = run("--oversubscription", "2:1", "--max-rows", "2")
    assert r.exit_code == 1
    out = r.stdout
    assert "oversubscription-1-to-1 — Non-blocking compute fabric (mandatory, 8)" in out
    for col in ("resource", "measured", "allowed", "fix"):
        assert col in out
    assert "… 6 more" in out
    assert "FAIL: 8 mandatory violations, 0 advisory (8 rules run)" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_markdown_is_a_pr_comment() -> None:
    r = run("--oversubscription", "2:1", "--format", "markdown")
    assert r.exit_code == 1
    assert r.stdout.startswith("## ❌ fabric-stack check: gpu-cluster\n")
    assert (
        "| `su1-r3-leaf` | 42×400G down, 21×400G up (2:1) | 1:1 (≥ 42×400G up) | 〃 |" in r.stdout
    )
    assert MESSAGE_2TO1 in r.stdout


def test_advisory_only_exits_0(tmp_path: Path) -> None:
    cfg = tmp_path / "cluster.yaml"
    cfg.write_text("infiniband:\n  subnet_managers: 1\n")
    # ib-subnet-manager-redundancy is mandatory by default (issue 17): one SM fails ...
    assert run("--config", str(cfg)).exit_code == 1
    # ... and a policy config that makes it advisory turns that into a warning, exit 0
    pol = tmp_path / "policy.yaml"
    pol.write_text("ib-subnet-manager-redundancy: advisory\n")
    r = run("--config", str(cfg), "--policy-config", str(pol), "--format", "json")
    assert r.exit_code == 0, r.output
    assert as_json(r)["summary"]["status"] == "warn"


def test_config_file_with_storage_on_compute_fails_separation(tmp_path: Path) -> None:
    cfg = tmp_path / "cluster.yaml"
    cfg.write_text(
        "networks:\n  storage:\n    vlan: 200\n    subnet: 10.200.0.0/16\n"
        "    switch: sn5600\n    attach: compute\n"
    )
    r = run("--config", str(cfg), "--format", "json")
    assert r.exit_code == 1
    assert [v["rule"] for v in as_json(r)["violations"]] == ["network-separation"]


def test_policy_config_relaxes_the_ratio(tmp_path: Path) -> None:
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps({"oversubscription-1-to-1": {"max_ratio": "2:1"}}))
    assert run("--oversubscription", "2:1", "--policy-config", str(pol)).exit_code == 0


def test_stack_config_is_read_from_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: fabric\nruntime: python\n")
    (tmp_path / "Pulumi.prod.yaml").write_text('config:\n  fabric:oversubscription: "2:1"\n')
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  fabric:gpus: 256\n")
    monkeypatch.chdir(tmp_path)
    prod = run("--config", "Pulumi.prod.yaml", "--format", "markdown")
    dev = run("--config", "Pulumi.dev.yaml", "--format", "json")
    missing = run("--config", "Pulumi.nope.yaml")
    assert prod.exit_code == 1 and MESSAGE_2TO1 in prod.stdout
    # 256 GPUs fill one SU: one server position goes to the UFMs (the RA rule): 248 cabled
    assert dev.exit_code == 0 and as_json(dev)["summary"]["gpus"] == 248
    assert missing.exit_code == 2
    assert missing.stderr == "error: Pulumi.nope.yaml: cannot read: no such file\n"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--oversubscription", "1:2"], "error: oversubscription: '1:2' has more uplink"),
        (
            ["--config", "/nonexistent/cluster.yaml"],
            "error: /nonexistent/cluster.yaml: cannot read",
        ),
        (["--gpus", "100"], "error: gpus: 100 is not a multiple of gpus_per_node 8"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], expected: str) -> None:
    r = run(*args)
    assert r.exit_code == 2
    assert r.stderr.startswith(expected), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_bad_policy_config_exits_2(tmp_path: Path) -> None:
    pol = tmp_path / "policy.yaml"
    pol.write_text("oversubcription-1-to-1: mandatory\n")
    r = run("--policy-config", str(pol))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"error: {pol}: oversubcription-1-to-1: unknown rule (rules: all, ")


def test_list_rules_and_config_schema() -> None:
    r = run("--list-rules", "--format", "json")
    assert r.exit_code == 0
    rules = json.loads(r.stdout)
    assert [x["id"] for x in rules][:3] == [
        "oversubscription-1-to-1",
        "gpudirect-pcie-locality",
        "network-separation",
    ]
    assert rules[0]["settings"]["max_ratio"]["default"] == "1:1"
    s = run("--config-schema")
    assert s.exit_code == 0
    jsonschema.Draft202012Validator.check_schema(json.loads(s.stdout))
    assert "oversubscription-1-to-1" in json.loads(s.stdout)["properties"]


def test_help_teaches() -> None:
    r = CliRunner().invoke(main, ["check", "--help"], env=ENV)
    assert r.exit_code == 0
    assert "fabric-stack check --stack prod --format markdown" in r.stdout
    assert "1 a mandatory rule is" in r.stdout


def test_help_lists_every_rule_from_the_registry() -> None:
    from fabric_stack.policy import RULES
    from fabric_stack.views.registry_tables import rules_table

    wide = {"terminal_width": 200, "max_content_width": 200}  # no line wrapped
    r = CliRunner().invoke(main, ["check", "--help"], env=ENV, **wide)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    start = lines.index("  Rules:") + 1
    block = lines[start : lines.index("", start)]
    pairs = zip(block[::2], block[1::2], strict=True)
    listed = [(a.split()[0], b.split("applies to: ", 1)[1]) for a, b in pairs]
    assert listed == [(rid, rule.applies.describe()) for rid, rule in RULES.items()]
    table = rules_table().splitlines()
    assert [row.split(" | ")[0].removeprefix("| ") for row in table[2:]] == [
        f"`{rid}`" for rid in RULES
    ]
