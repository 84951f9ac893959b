"""Smoke tests of the real Pulumi engine that `make setup` links into .venv/bin.

A throw-away Pulumi Python project in tmp_path with one dynamic resource (its provider in a
module of its own, not in __main__) that keeps a record in a JSON file, driven through the
whole CLI life cycle; and a Python CrossGuard policy pack run by `pulumi preview --policy-pack`.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from fabric_stack.adapters.pulumi.env import PULUMI_VERSION, venv_bin

pytestmark = pytest.mark.pulumi

REPO_ROOT = Path(__file__).resolve().parents[3]
PULUMI = venv_bin(REPO_ROOT) / "pulumi"

PROVIDER_MODULE = '''
"""A dynamic provider that keeps one record per resource in a JSON file."""

import json
from pathlib import Path

from pulumi import Input, Output, ResourceOptions
from pulumi.dynamic import (
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    ResourceProvider,
    UpdateResult,
)


def _load(store):
    path = Path(store)
    return json.loads(path.read_text()) if path.exists() else {}


def _save(store, records):
    Path(store).write_text(json.dumps(records, indent=2, sort_keys=True))


class RecordProvider(ResourceProvider):
    serialize_as_secret_always = False

    def create(self, props):
        records = _load(props["store"])
        records[props["key"]] = {"value": props["value"]}
        _save(props["store"], records)
        return CreateResult(id_=props["key"], outs=dict(props))

    def read(self, id_, props):
        records = _load(props["store"])
        if id_ not in records:
            return ReadResult(id_="", outs={})
        return ReadResult(id_=id_, outs={**props, "value": records[id_]["value"]})

    def diff(self, _id, olds, news):
        replaces = [k for k in ("store", "key") if olds.get(k) != news.get(k)]
        changed = replaces or olds.get("value") != news.get("value")
        return DiffResult(changes=bool(changed), replaces=replaces)

    def update(self, id_, _olds, news):
        records = _load(news["store"])
        records[id_] = {"value": news["value"]}
        _save(news["store"], records)
        return UpdateResult(outs=dict(news))

    def delete(self, id_, props):
        records = _load(props["store"])
        records.pop(id_, None)
        _save(props["store"], records)


class Record(Resource, module="smoke", name="Record"):
    value: Output[str]

    def __init__(self, name: str, store: Input[str], value: Input[str], opts=None):
        super().__init__(
            RecordProvider(),
            name,
            {"store": store, "key": name, "value": value},
            opts or ResourceOptions(),
        )
'''

PROGRAM = """
import pulumi

from smoke_provider import Record

config = pulumi.Config()
record = Record("switch-1", store=config.require("store"), value=config.get("value") or "spine-01")
pulumi.export("value", record.value)
"""

POLICIES = """
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

def _no_forbidden(args, report_violation):
    if args.resource_type.endswith("smoke:Record") and args.props.get("value") == "forbidden":
        report_violation("record value 'forbidden' is not allowed")

no_forbidden = ResourceValidationPolicy(
    name="no-forbidden-value",
    description="Records must not hold the value 'forbidden'.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_no_forbidden,
)
"""

POLICY_MAIN = """
from pulumi_policy import PolicyPack

from policies import no_forbidden

PolicyPack(name="smoke-policies", policies=[no_forbidden])
"""


def _pulumi(
    *args: str, cwd: Path, env: dict[str, str], ok: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(PULUMI), *args, "--non-interactive", "--color", "never"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if ok and proc.returncode != 0:
        pytest.fail(
            f"pulumi {' '.join(args)} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}",
            pytrace=False,
        )
    return proc


def _write_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: engine-smoke
            runtime:
              name: python
              options:
                virtualenv: {REPO_ROOT / ".venv"}
            """
        )
    )
    (project / "smoke_provider.py").write_text(PROVIDER_MODULE)
    (project / "__main__.py").write_text(PROGRAM)
    return project


def _records(store: Path) -> dict[str, dict[str, str]]:
    if not store.exists():
        return {}
    data: dict[str, dict[str, str]] = json.loads(store.read_text())
    return data


def test_pulumi_version_is_the_pin(pulumi_env: dict[str, str]) -> None:
    proc = subprocess.run(
        [str(PULUMI), "version"],
        env=pulumi_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == f"v{PULUMI_VERSION}"


def test_dynamic_resource_life_cycle(tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    project = _write_project(tmp_path)
    store = tmp_path / "records.json"

    _pulumi("stack", "init", "dev", cwd=project, env=pulumi_env)
    _pulumi("config", "set", "store", str(store), cwd=project, env=pulumi_env)

    preview = _pulumi("preview", cwd=project, env=pulumi_env)
    assert "pulumi-python:dynamic/smoke:Record" in preview.stdout
    assert "+ 2 to create" in preview.stdout  # the stack and the record
    assert not store.exists(), "preview must not create anything"

    _pulumi("up", "--yes", cwd=project, env=pulumi_env)
    assert _records(store) == {"switch-1": {"value": "spine-01"}}
    output = _pulumi("stack", "output", "value", cwd=project, env=pulumi_env)
    assert output.stdout.strip() == "spine-01"

    # Change the record behind Pulumi's back: refresh reads it back into the state.
    store.write_text(json.dumps({"switch-1": {"value": "spine-02"}}))
    refresh = _pulumi("refresh", "--yes", cwd=project, env=pulumi_env)
    assert "~ 1 updated" in refresh.stdout, refresh.stdout
    state = json.loads(_pulumi("stack", "export", cwd=project, env=pulumi_env).stdout)
    (record,) = [
        r
        for r in state["deployment"]["resources"]
        if r["type"] == "pulumi-python:dynamic/smoke:Record"
    ]
    assert record["outputs"]["value"] == "spine-02"

    _pulumi("destroy", "--yes", cwd=project, env=pulumi_env)
    assert _records(store) == {}


def test_python_policy_pack_runs_in_preview(tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    project = _write_project(tmp_path)
    store = tmp_path / "records.json"
    pack = tmp_path / "policy-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text(
        textwrap.dedent(
            f"""\
            runtime:
              name: python
              options:
                virtualenv: {REPO_ROOT / ".venv"}
            """
        )
    )
    (pack / "policies.py").write_text(POLICIES)
    (pack / "__main__.py").write_text(POLICY_MAIN)

    _pulumi("stack", "init", "dev", cwd=project, env=pulumi_env)
    _pulumi("config", "set", "store", str(store), cwd=project, env=pulumi_env)

    passing = _pulumi("preview", "--policy-pack", str(pack), cwd=project, env=pulumi_env)
    assert "smoke-policies" in passing.stdout, passing.stdout

    _pulumi("config", "set", "value", "forbidden", cwd=project, env=pulumi_env)
    failing = _pulumi("preview", "--policy-pack", str(pack), cwd=project, env=pulumi_env, ok=False)
    assert failing.returncode != 0
    assert "no-forbidden-value" in failing.stdout, failing.stdout
    assert "record value 'forbidden' is not allowed" in failing.stdout, failing.stdout
    assert not store.exists()


def test_program_runs_on_a_stack_without_config(tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    # Regression: our language host used to hand the runtime "null" config when the
    # stack had none, and every program died in set_all_config.
    project = tmp_path / "noconfig"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(
        "name: noconfig\nruntime:\n  name: python\n  options:\n"
        f"    virtualenv: {REPO_ROOT / '.venv'}\n"
    )
    (project / "__main__.py").write_text("import pulumi\n\npulumi.export('ok', 1)\n")
    _pulumi("stack", "init", "bare", cwd=project, env=pulumi_env)
    proc = _pulumi("up", "--yes", cwd=project, env=pulumi_env)
    assert "+ 1 created" in proc.stdout, proc.stdout
