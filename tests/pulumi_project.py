"""Helpers for tests that drive the real Pulumi CLI on a throw-away copy of the project."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def make_project(tmp: Path, name: str = "fabric-stack") -> Path:
    """A project dir running components.program (installed in the repo's .venv)."""
    proj = tmp / "project"
    proj.mkdir(parents=True, exist_ok=True)
    (proj / "Pulumi.yaml").write_text(
        f"name: {name}\nruntime:\n  name: python\n  options:\n"
        f"    virtualenv: {REPO_ROOT / '.venv'}\n"
    )
    (proj / "__main__.py").write_text("from components.program import run\n\nrun()\n")
    return proj


def pulumi(
    proj: Path, env: dict[str, str], *args: str, check: bool = True, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    """Run the pinned CLI in ``proj``; on failure the assertion shows its output."""
    cmd = [str(REPO_ROOT / ".venv" / "bin" / "pulumi"), *args, "--non-interactive"]
    r = subprocess.run(
        cmd, cwd=proj, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and r.returncode != 0:
        raise AssertionError(
            f"pulumi {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        )
    return r


def preview_steps(proj: Path, env: dict[str, str], *extra: str) -> list[dict[str, Any]]:
    """`pulumi preview --json` steps (op, urn, type, oldState/newState inputs)."""
    r = pulumi(proj, env, "preview", "--json", *extra)
    return list(json.loads(r.stdout).get("steps", []))


def resource_name(urn: str) -> str:
    """Last URN segment: the resource name."""
    return urn.rsplit("::", 1)[-1]


def kill_session(sid: int) -> list[int]:
    """SIGKILL every process of session ``sid`` (a CLI started with start_new_session=True).

    The CLI starts its language host and provider hosts in process groups of their own,
    so killing the CLI's group leaves them running; they stay in its session.
    Returns the pids killed.
    """
    import os
    import signal

    killed = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        if int(fields[3]) == sid:  # after the command: state, ppid, pgrp, session
            pid = int(stat.parent.name)
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
    return killed
