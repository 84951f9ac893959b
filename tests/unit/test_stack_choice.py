"""Which stack `plan` / `apply` / `recover` run on: --stack, $PULUMI_STACK, the selected one.

The real-engine side (nothing created, the selection untouched) is in
tests/integration/pulumi/test_stack_selection.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.pulumi.stacks import NoStackError, StackList, resolve_stack
from fabric_stack.cli import main

ENV = {"PULUMI_BACKEND_URL": "file:///state"}
TWO = StackList(("demo", "prod"), selected="prod")


@pytest.mark.parametrize(
    ("requested", "env", "stacks", "expected"),
    [
        (None, ENV, TWO, "prod"),  # the selected stack
        (None, {**ENV, "PULUMI_STACK": "demo"}, TWO, "demo"),  # $PULUMI_STACK over it
        ("demo", {**ENV, "PULUMI_STACK": "prod"}, TWO, "demo"),  # --stack over both
        (None, {**ENV, "PULUMI_STACK": ""}, TWO, "prod"),  # an empty variable is unset
    ],
)
def test_the_order_pulumi_uses(
    requested: str | None, env: dict[str, str], stacks: StackList, expected: str
) -> None:
    assert resolve_stack(requested, stacks, env) == expected


@pytest.mark.parametrize(
    ("requested", "env", "stacks", "message"),
    [
        (
            "prdo",
            ENV,
            TWO,
            "--stack prdo: no such stack in file:///state (stacks: demo, prod); "
            "`pulumi stack init prdo` creates it, nothing else does",
        ),
        (
            None,
            {**ENV, "PULUMI_STACK": "stage"},
            TWO,
            "PULUMI_STACK=stage: no such stack in file:///state (stacks: demo, prod); "
            "`pulumi stack init stage` creates it, nothing else does",
        ),
        (
            None,
            ENV,
            StackList(("demo", "prod"), None),
            "no Pulumi stack selected (stacks: demo, prod): pass --stack NAME, set "
            "PULUMI_STACK, or run `pulumi stack select NAME`",
        ),
        (
            None,
            ENV,
            StackList((), None),
            "no Pulumi stack in file:///state yet: create one with `pulumi stack init NAME` "
            "(it becomes the selected stack), or run `make demo` for the demo stack",
        ),
        (
            "demo",
            ENV,
            StackList((), None),
            "--stack demo: no such stack in file:///state (no stacks yet); "
            "`pulumi stack init demo` creates it, nothing else does",
        ),
    ],
)
def test_no_stack_or_a_typo_is_one_line_exit_2(
    requested: str | None, env: dict[str, str], stacks: StackList, message: str
) -> None:
    with pytest.raises(NoStackError) as caught:
        resolve_stack(requested, stacks, env)
    assert caught.value.message == message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    "args",
    [["check"], ["drift", "--lldp", "lldp"], ["size"], ["cabling"]],
    ids=lambda a: a[0],
)
def test_spec_commands_name_the_stacks_there_for_a_typo(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # check / drift / size ... read --stack NAME through Pulumi's backend (issue #48): a
    # typo is an error naming the backend's stacks, and creates nothing. The backend's
    # listing is stubbed here; tests/integration/pulumi/test_stack_spec.py runs the engine.
    from fabric_stack.adapters.pulumi import stack_config

    monkeypatch.setattr(stack_config, "_existing", lambda _pdir, _env: ("demo", "prod"))
    (tmp_path / "Pulumi.yaml").write_text("name: fabric\nruntime: python\n")
    (tmp_path / "lldp").mkdir()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(
        main, [*args, "--stack", "prdo"], env={"PULUMI_BACKEND_URL": f"file://{tmp_path}/st"}
    )
    assert r.exit_code == 2, r.output
    assert r.stderr == (
        f"error: --stack prdo: no such stack in file://{tmp_path}/st (stacks: demo, prod); "
        "`fabric-stack stack init prdo --from spec.yaml` creates it\n"
    )
    assert sorted(p.name for p in tmp_path.glob("Pulumi.*.yaml")) == []


def test_a_new_stacks_file_plans_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pulumi stack init demo` writes only an encryptionsalt; the stack file form
    # (`--config Pulumi.demo.yaml`) reads it as the default spec, not as spec fields.
    (tmp_path / "Pulumi.yaml").write_text("name: fabric\nruntime: python\n")
    (tmp_path / "Pulumi.demo.yaml").write_text("encryptionsalt: v1:abc=:v1:def:ghi==\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", "--config", "Pulumi.demo.yaml", "--format", "json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main, ["render", "report", "--config", "Pulumi.demo.yaml", "--out-dir", "build"]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "build" / "report" / "design-report.html").exists()
