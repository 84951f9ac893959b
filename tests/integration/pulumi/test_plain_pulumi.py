"""Plain `pulumi` after `make setup`, from a fresh clone in a clean environment.

The clone is the repository's tracked files (as `git clone` gives them: no .state,
no Pulumi.<stack>.yaml), with the checkout's .venv linked in (rebuilding a venv is
not what is tested). Everything runs under `env -i` with a HOME of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.pulumi_project import REPO_ROOT

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


def _clone(dest: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = REPO_ROOT / name.decode()
        if src.is_file():  # a file deleted in the work tree but not yet in the index
            (dest / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name.decode())
    (dest / ".venv").symlink_to(REPO_ROOT / ".venv")
    return dest


def _clean_env(home: Path) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    # Where the engine `make setup` linked for this checkout lives (its first option,
    # docs/pulumi-stack.md "The Pulumi engine"), so the clone's setup links it rather than
    # building one.
    env["FABRIC_STACK_PULUMI_BIN"] = str((REPO_ROOT / ".venv/bin/pulumi").resolve().parent)
    # A work tree sharing another checkout's venv (its editable install points there) runs
    # its own code through PYTHONPATH; keep it, or the clone would test the other checkout.
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _sh(clone: Path, env: dict[str, str], script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _readme_demo_ending() -> str:
    """The closing lines of `make demo` as README.md's quick start shows them."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- make demo ends with these lines", 1)[1]
    return block.split("```text\n", 1)[1].split("```", 1)[0].rstrip("\n")


def test_the_package_builds_without_warnings(tmp_path: Path) -> None:
    # `make setup` installs the checkout with pip; setuptools once printed four
    # deprecation blocks about our own pyproject.toml (the license table) there.
    clone = _clone(tmp_path / "clone")
    r = subprocess.run(
        [str(REPO_ROOT / ".venv/bin/python"), "-m", "pip", "wheel", "--no-deps", "-w",
         str(tmp_path / "dist"), str(clone)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    noise = [x for x in (r.stdout + r.stderr).splitlines() if re.search(r"warn|deprecat", x, re.I)]
    assert not noise, "\n".join(noise)


def test_plain_pulumi_sees_the_stacks_fabric_stack_uses(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    env = _clean_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    # Without the environment, plain pulumi asks for Pulumi Cloud (the symptom).
    bare = _sh(clone, env, ".venv/bin/pulumi stack ls --non-interactive")
    assert bare.returncode != 0 and "PULUMI_ACCESS_TOKEN must be set" in bare.stderr
    # make setup: the venv stamp exists (linked .venv); -o keeps make from reinstalling it
    # into the linked venv because the clone's pyproject.toml is newer.
    setup = _sh(clone, env, "make -o .venv/.installed setup")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    env_file = clone / ".state" / "env.sh"
    assert env_file.stat().st_mode & 0o777 == 0o600
    # `make demo` makes the demo stack (not selected: fabric-stack creates none itself) and
    # previews it; fabric-stack applies it; plain pulumi (after `. .state/env.sh`) sees it.
    demo = _sh(clone, env, "make -o .venv/.installed demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Plan for stack demo:" in demo.stdout
    # No warning of our own making, and it ends with what it did and the next steps,
    # exactly as the README shows them.
    printed = demo.stdout + demo.stderr
    assert not [x for x in printed.splitlines() if re.search(r"warn|deprecat", x, re.I)]
    assert demo.stdout.rstrip("\n").endswith(_readme_demo_ending()), demo.stdout[-800:]
    report = _sh(
        clone,
        env,
        ". .state/env.sh && fabric-stack render report --stack demo --out-dir build >/dev/null",
    )  # the third next step (the first two follow)
    assert report.returncode == 0 and (clone / "build/report/design-report.html").exists()
    selected = _sh(clone, env, ". .state/env.sh && pulumi stack --show-name --non-interactive")
    assert selected.returncode != 0 and "no stack selected" in selected.stderr
    again = _sh(clone, env, "make -o .venv/.installed demo-stack")
    assert again.returncode == 0 and "Created stack" not in again.stdout, again.stdout
    applied = _sh(clone, env, ".venv/bin/fabric-stack apply --stack demo --yes --format json")
    assert applied.returncode == 0, applied.stderr
    r = _sh(
        clone,
        env,
        ". .state/env.sh && pulumi stack ls --json --non-interactive"
        " && pulumi preview --stack demo --json --non-interactive",
    )
    assert r.returncode == 0, r.stderr
    ls_text, preview_text = r.stdout.split("\n]\n", 1)
    stacks = json.loads(ls_text + "\n]")
    assert [(s["name"], s["resourceCount"]) for s in stacks] == [("demo", 71)]
    assert list(json.loads(preview_text)["changeSummary"]) == ["same"]  # nothing to do
    # And the other way round: a stack made with plain pulumi is one fabric-stack plans.
    r = _sh(
        clone,
        env,
        ". .state/env.sh && pulumi stack init lab --non-interactive"
        " && pulumi config set --stack lab fabric:gpus 256",
    )
    assert r.returncode == 0, r.stderr
    plan = _sh(clone, env, ".venv/bin/fabric-stack plan --stack lab --format json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["stack"] == "lab"
    r = _sh(clone, env, ". .state/env.sh && pulumi stack ls --json --non-interactive")
    assert sorted(s["name"] for s in json.loads(r.stdout)) == ["demo", "lab"]
