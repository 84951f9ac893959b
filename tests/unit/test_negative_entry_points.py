"""Every negative scenario fails the same way in size, cabling, check, render and the program.

The scenarios are tests/scenarios/negative/*.yaml (flags or a spec file, and the one line
the CLI prints). The four CLI commands must print exactly that line and exit 2 with
nothing written; the Pulumi program (run in-process under Pulumi's mocks, with the same
spec as stack config) must stop with ``pulumi.RunError`` carrying the same line, its
field spelled the way stack config spells it (``fabric:nodeProfile…``).

Two scenarios are about the CLI's own input layer, not the spec: a flag value click
rejects (``bad-fabric``) and a YAML syntax error (``yaml-syntax``). The program never sees
either (Pulumi parses the stack file and has no flags), so they run through the four CLI
commands only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from click.testing import CliRunner

from fabric_stack.cli import main
from fabric_stack.files.config import load_yaml

NEGATIVE = sorted((Path(__file__).resolve().parents[1] / "scenarios" / "negative").glob("*.yaml"))
INPUT_LAYER = {"bad-fabric", "yaml-syntax"}
"""Scenarios rejected before a spec exists (click's flag parsing, the YAML parser)."""

COMMANDS = ("size", "cabling", "check", "render")

_FLAG = {
    "--gpus": ("gpus", int),
    "--nic-gbps": ("nic_gbps", int),
    "--su-nodes": ("su_nodes", int),
    "--switch": ("switch", str),
    "--fabric": ("fabric", str),
    "--oversubscription": ("oversubscription", str),
    "--build-out-gpus": ("build_out_gpus", int),
    "--spine-grouping": ("spine_grouping", str),
    "--uplink-gbps": ("uplink_gbps", int),
    "--spine-switch": ("spine_switch", str),
    "--planes": ("planes", int),
}


def _case(path: Path, tmp_path: Path) -> tuple[list[str], str, dict[str, Any]]:
    """(CLI args, expected CLI line, the spec as plain data)."""
    case = yaml.safe_load(path.read_text())
    args = [str(a) for a in case.get("args", [])]
    expected = case["error"]
    data: dict[str, Any] = {}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        key, conv = _FLAG[flag]
        data[key] = conv(value)
    if "config" in case:
        cfg = tmp_path / "cluster.yaml"
        cfg.write_text(case["config"])
        args += ["--config", str(cfg)]
        expected = expected.replace("{config}", str(cfg))
        if path.stem not in INPUT_LAYER:
            data.update(load_yaml(cfg))
    return args, expected, data


def _last_line(output: str) -> str:
    lines = [x for x in output.strip().splitlines() if x.strip()]
    return lines[-1].removeprefix("Error: ").removeprefix("error: ")


@pytest.mark.parametrize("path", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_every_cli_entry_point_prints_the_same_line(path: Path, tmp_path: Path) -> None:
    args, expected, _ = _case(path, tmp_path)
    for command in COMMANDS:
        out = tmp_path / f"out-{command}"
        extra = ["--out", str(out)] if command == "render" else []
        target = ["all"] if command == "render" else []
        r = CliRunner().invoke(main, [command, *target, *args, *extra])
        assert r.exit_code == 2, (command, r.output)
        assert "Traceback" not in r.output, command
        # A usage error points at the command's own --help; the rest is the same line.
        want = expected.replace("fabric-stack size --help", f"fabric-stack {command} --help")
        assert _last_line(r.output) == want, command
        assert not out.exists() or not any(out.iterdir()), f"{command} wrote files"


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        raise AssertionError(f"the program created {args.typ} {args.name} for a bad spec")

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None


def _stack_line(cli_line: str, config_path: str) -> str:
    """The CLI's line as the program words it: no file prefix, ``fabric:`` + camelCase field."""
    line = cli_line.removeprefix(f"{config_path}: ")
    field, _, problem = line.partition(": ")
    head, dot, rest = field.partition(".")
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), head)
    return f"fabric:{camel}{dot}{rest}: {problem}"


SPEC_SCENARIOS = [p for p in NEGATIVE if p.stem not in INPUT_LAYER]


@pytest.mark.parametrize("path", SPEC_SCENARIOS, ids=[p.stem for p in SPEC_SCENARIOS])
def test_the_pulumi_program_stops_with_the_same_line(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from components.program import run

    _, expected, data = _case(path, tmp_path)
    config = {
        f"fabric:{k}": json.dumps(v) if isinstance(v, dict | list) else str(v)
        for k, v in data.items()
    }
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    pulumi.runtime.set_mocks(_Mocks(), project="fabric-stack", stack="negative", preview=True)
    with pytest.raises(pulumi.RunError) as info:
        run(tmp_path)
    assert str(info.value) == _stack_line(expected, str(tmp_path / "cluster.yaml"))
