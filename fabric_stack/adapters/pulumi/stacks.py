"""Which Pulumi stack a command runs on: the one the user chose, never one made up.

``fabric-stack plan`` / ``apply`` / ``recover`` run on ``--stack NAME``, else
``$PULUMI_STACK``, else the stack selected in the project (``pulumi stack select``), in
the order the Pulumi CLI itself uses. They never create a stack and never change the
selection: a name that does not exist is an error naming the stacks that do, and with no
stack chosen at all the error says how to choose one (exit 2 either way). Creating a stack
is ``pulumi stack init NAME`` (``make demo`` runs ``pulumi stack init demo --no-select``
the first time).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fabric_stack.errors import EngineError
from fabric_stack.text.redact import mask_url

__all__ = ["NoStackError", "StackList", "list_stacks", "resolve_stack"]


class NoStackError(EngineError):
    """No stack was chosen, or the one chosen does not exist (exit 2: fix the command)."""


@dataclass(frozen=True)
class StackList:
    """The project's stacks in the backend, and the one ``pulumi stack select`` chose."""

    names: tuple[str, ...]
    selected: str | None


def list_stacks(pulumi: Path, project_dir: Path, env: Mapping[str, str]) -> StackList:
    """``pulumi stack ls --json`` in ``project_dir``: the stacks of this project.

    ``PULUMI_STACK`` is left out of the environment, so ``selected`` is the workspace's
    own selection (the CLI would report ``$PULUMI_STACK`` as current even when no such
    stack exists); :func:`resolve_stack` weighs the variable itself.
    """
    quiet = {k: v for k, v in env.items() if k != "PULUMI_STACK"}
    r = subprocess.run(
        [str(pulumi), "stack", "ls", "--json", "--non-interactive"],
        cwd=project_dir,
        env=quiet,
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        lines = [x.strip() for x in (r.stderr or r.stdout).splitlines() if x.strip()]
        msg = lines[-1].removeprefix("error:").strip() if lines else f"exit {r.returncode}"
        backend = mask_url(env.get("PULUMI_BACKEND_URL", ""))
        raise EngineError(f"pulumi stack ls ({backend}): {msg}")
    rows = json.loads(r.stdout or "[]")
    names = tuple(str(s["name"]) for s in rows)
    selected = next((str(s["name"]) for s in rows if s.get("current")), None)
    return StackList(names, selected)


def resolve_stack(requested: str | None, stacks: StackList, env: Mapping[str, str]) -> str:
    """The stack to run on: ``requested`` (``--stack``), else ``$PULUMI_STACK``, else the
    selected one. Raises :class:`NoStackError` when none is chosen or it does not exist."""
    backend = mask_url(env.get("PULUMI_BACKEND_URL", ""))
    have = ", ".join(stacks.names)
    from_env = env.get("PULUMI_STACK") or None
    if requested:
        name, given = requested, f"--stack {requested}"
    elif from_env:
        name, given = from_env, f"PULUMI_STACK={from_env}"
    elif stacks.selected:
        return stacks.selected
    elif stacks.names:
        raise NoStackError(
            f"no Pulumi stack selected (stacks: {have}): pass --stack NAME, set PULUMI_STACK, "
            "or run `pulumi stack select NAME`"
        )
    else:
        raise NoStackError(
            f"no Pulumi stack in {backend} yet: create one with `pulumi stack init NAME` "
            "(it becomes the selected stack), or run `make demo` for the demo stack"
        )
    if name in stacks.names:
        return name
    where = f"stacks: {have}" if have else "no stacks yet"
    raise NoStackError(
        f"{given}: no such stack in {backend} ({where}); "
        f"`pulumi stack init {name}` creates it, nothing else does"
    )
