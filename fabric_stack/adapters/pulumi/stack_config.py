"""A stack's configuration through Pulumi's backend: read it, or make a stack from a spec.

``--stack NAME`` means the backend's stack for every command (issue #48): its config is
what ``pulumi config --stack NAME --json`` prints, wherever the stack file lives and
whatever directory the command runs in. The Pulumi project is the nearest directory
upwards holding a ``Pulumi.yaml``, else the fabric-stack checkout this package runs from
or ``$FABRIC_STACK_PROJECT`` (:func:`pulumi_project_dir`), so ``fabric-stack size --stack
prod`` works from anywhere.

``stack init NAME --from spec.yaml`` creates the stack and sets its whole config in one
``pulumi config set-all --json`` call; when that fails the stack it created is removed,
so a refused spec leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fabric_stack.adapters.pulumi.env import offline_env
from fabric_stack.adapters.pulumi.stacks import NoStackError, list_stacks
from fabric_stack.errors import EngineError
from fabric_stack.text.redact import mask_url

__all__ = ["create_stack", "pulumi_project_dir", "read_stack_config", "stack_secret"]


PROJECT_ENV = "FABRIC_STACK_PROJECT"
"""Environment variable: the Pulumi project directory to use outside any project."""


def pulumi_project_dir(start: Path | None = None) -> Path:
    """The Pulumi project: the nearest ancestor of ``start`` (the cwd) with a Pulumi.yaml,
    else ``$FABRIC_STACK_PROJECT``, else the checkout holding this package when it has one,
    else ``start``. (A ``file://`` backend keeps a stack's config in its project's
    ``Pulumi.NAME.yaml``, so the project decides which stacks' config is found.)"""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "Pulumi.yaml").exists():
            return d
    named = os.environ.get(PROJECT_ENV, "").strip()
    if named:
        if not (Path(named) / "Pulumi.yaml").exists():
            raise EngineError(f"{PROJECT_ENV}={named}: no Pulumi.yaml there")
        return Path(named).resolve()
    checkout = Path(__file__).resolve().parents[3]
    return checkout if (checkout / "Pulumi.yaml").exists() else here


def _engine(project_dir: Path) -> Path:
    pulumi = project_dir / ".venv" / "bin" / "pulumi"
    if not pulumi.exists():
        raise EngineError(f"{pulumi} is missing: run `make setup` first")
    return pulumi


def _run(project_dir: Path, env: Mapping[str, str], args: Sequence[str]) -> str:
    """Run ``pulumi ARGS`` in ``project_dir``; EngineError with its last error line."""
    r = subprocess.run(
        [str(_engine(project_dir)), *args, "--non-interactive"],
        cwd=project_dir,
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        lines = [x.strip() for x in (r.stderr or r.stdout).splitlines() if x.strip()]
        msg = lines[-1].removeprefix("error:").strip() if lines else f"exit {r.returncode}"
        raise EngineError(f"pulumi {' '.join(args[:2])}: {mask_url(msg)}")
    return r.stdout


def _existing(project_dir: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """The project's stack names in the backend."""
    return list_stacks(_engine(project_dir), project_dir, env).names


def read_stack_config(stack: str, project_dir: Path | None = None) -> dict[str, Any]:
    """``pulumi config --stack NAME --json`` (secrets stay ``{"secret": true}``, no value).

    NoStackError (exit 2, one line naming the stacks there are) when it does not exist.
    """
    pdir = project_dir or pulumi_project_dir()
    env = offline_env(pdir)
    names = _existing(pdir, env)
    if stack not in names:
        backend = mask_url(env.get("PULUMI_BACKEND_URL", ""))
        have = f"stacks: {', '.join(names)}" if names else "no stacks yet"
        raise NoStackError(
            f"--stack {stack}: no such stack in {backend} ({have}); "
            f"`fabric-stack stack init {stack} --from spec.yaml` creates it"
        )
    got = json.loads(_run(pdir, env, ["config", "--stack", stack, "--json"]) or "{}")
    if not isinstance(got, dict):
        raise EngineError(f"pulumi config --stack {stack} --json: expected a JSON object")
    return got


def create_stack(stack: str, config: Mapping[str, Any], project_dir: Path | None = None) -> None:
    """Create ``stack`` (never selected) holding exactly ``config`` (``pulumi config --json``
    form). NoStackError when it exists already; on a failure nothing is left behind."""
    pdir = project_dir or pulumi_project_dir()
    env = offline_env(pdir)
    if stack in _existing(pdir, env):
        raise NoStackError(
            f"stack {stack!r} exists already: `fabric-stack stack export {stack} --out FILE` "
            "shows its config; change it with `pulumi config set`, or pick another name"
        )
    _run(pdir, env, ["stack", "init", stack, "--no-select"])
    try:
        if config:
            _run(pdir, env, ["config", "set-all", "--stack", stack, "--json", json.dumps(config)])
    except EngineError:
        _run(pdir, env, ["stack", "rm", stack, "--yes", "-f"])  # -f: it holds no resources
        raise


def stack_secret(stack: str, key: str, project_dir: Path | None = None) -> str:
    """The plaintext of config ``key`` of ``stack`` (``pulumi config get``), '' when unset."""
    pdir = project_dir or pulumi_project_dir()
    env = offline_env(pdir)
    try:
        return _run(pdir, env, ["config", "get", key, "--stack", stack]).strip()
    except EngineError:
        return ""
