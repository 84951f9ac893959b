"""Run the project's Pulumi stack through the Automation API (adapter; no planning here).

``fabric-stack plan`` / ``apply`` use these functions on the same project and
stack a user would run ``pulumi preview`` / ``pulumi up`` on, with the
offline environment from :mod:`fabric_stack.adapters.pulumi.env`. Resource steps from
the engine's event stream become a :class:`~fabric_stack.adapters.pulumi.changes.ChangeSummary`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric_stack.adapters.pulumi.backends import (
    backend_kind,
    live_lock_holder,
    lock_holders,
    mask_secrets,
)
from fabric_stack.adapters.pulumi.change_parts import with_parts
from fabric_stack.adapters.pulumi.changes import ChangeSummary, Step, summarize_changes
from fabric_stack.adapters.pulumi.env import offline_env
from fabric_stack.adapters.pulumi.stacks import list_stacks, resolve_stack
from fabric_stack.errors import EngineError

_TYPE = re.compile(r"fabric:(\w+)$")


@dataclass
class _Collector:
    steps: list[Step] = field(default_factory=list)
    violations: list[dict[str, str]] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    progress: Callable[[int, str], None] | None = None

    def __call__(self, ev: Any) -> None:
        pre = getattr(ev, "resource_pre_event", None)
        if pre is not None:
            m = pre.metadata
            kind = m.type.rsplit(":", 1)[-1]
            if _TYPE.search(m.type) or m.type.startswith("fabric-stack:"):
                self.steps.append(
                    Step.from_props(
                        op=str(getattr(m.op, "value", m.op)),
                        kind=kind,
                        name=m.urn.rsplit("::", 1)[-1],
                        old=(m.old.outputs or m.old.inputs) if m.old else None,
                        new=m.new.inputs if m.new else None,
                    )
                )
            if self.progress:
                self.progress(len(self.steps), m.urn.rsplit("::", 1)[-1])
        pol = getattr(ev, "policy_event", None)
        if pol is not None:
            self.violations.append(
                {
                    "policy": pol.policy_name,
                    "pack": pol.policy_pack_name,
                    "level": pol.enforcement_level,
                    "message": pol.message.strip(),
                    "resource": (pol.resource_urn or "").rsplit("::", 1)[-1],
                }
            )
        diag = getattr(ev, "diagnostic_event", None)
        if diag is not None and diag.severity == "error":
            self.diagnostics.append(_last_line(diag.message))


def _last_line(message: str) -> str:
    """A provider error arrives as a Python traceback; its last line is the message."""
    lines = [x.strip() for x in message.strip().splitlines() if x.strip()]
    if lines and lines[0].startswith("Traceback"):
        last = lines[-1]
        return (
            last.split(": ", 1)[1] if ": " in last and "Error" in last.split(": ", 1)[0] else last
        )
    return message.strip()


def _engine(project_dir: Path) -> Path:
    """The pinned ``pulumi`` in ``<project>/.venv/bin`` (``make setup`` links it)."""
    pulumi = project_dir / ".venv" / "bin" / "pulumi"
    if not pulumi.exists():
        raise EngineError(f"{pulumi} is missing: run `make setup` first")
    return pulumi


def chosen_stack(requested: str | None, project_dir: Path) -> str:
    """The stack a command runs on (see :mod:`.stacks`): never created, never selected."""
    env = offline_env(project_dir)
    return resolve_stack(requested, list_stacks(_engine(project_dir), project_dir, env), env)


def _stack(stack_name: str, project_dir: Path) -> Any:
    """The Automation API stack ``stack_name`` (which :func:`chosen_stack` found), unselected."""
    from pulumi import automation as auto

    from fabric_stack.adapters.pulumi.workspace import UnselectedWorkspace

    bin_root = _engine(project_dir).parent.parent
    env = offline_env(project_dir)
    try:
        ws = UnselectedWorkspace(
            work_dir=str(project_dir),
            env_vars=env,
            pulumi_command=auto.PulumiCommand(root=str(bin_root), skip_version_check=True),
        )
        return auto.Stack.select(stack_name, ws)
    except auto.CommandError as exc:
        msg = mask_secrets(_first_error(str(exc)), env["PULUMI_BACKEND_URL"])
        raise EngineError(f"pulumi: {msg}") from None


def _first_error(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("error:"):
            return line.removeprefix("error:").strip()
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else text


def policy_pack_dirs(project_dir: Path, use_policy: bool) -> list[str]:
    """The project's CrossGuard pack (``policies/``) when present and wanted."""
    pack = project_dir / "policies"
    return [str(pack)] if use_policy and (pack / "PulumiPolicy.yaml").exists() else []


def _run(
    op: str,
    stack_name: str,
    project_dir: Path,
    use_policy: bool,
    progress: Callable[[int, str], None] | None,
) -> ChangeSummary:
    from pulumi import automation as auto

    st = _stack(stack_name, project_dir)
    col = _Collector(progress=progress)
    packs = policy_pack_dirs(project_dir, use_policy)
    operation = "preview" if op == "preview" else "update"
    try:
        if op == "preview":
            st.preview(on_event=col, policy_packs=packs)
        else:
            st.up(on_event=col, policy_packs=packs)
    except auto.ConcurrentUpdateError:
        raise EngineError(
            f"stack {stack_name!r} is locked by another update; wait for it or, if it died, "
            f"run `fabric-stack recover --stack {stack_name}`"
        ) from None
    except auto.CommandError as exc:
        msg = col.diagnostics[0] if col.diagnostics else _first_error(str(exc))
        summary = summarize_changes(col.steps, stack_name, operation, col.violations)
        raise PreviewFailed(msg, with_parts(summary)) from None
    # Cables named by the part `bom` orders, not by the records' builder class (#44).
    return with_parts(summarize_changes(col.steps, stack_name, operation, col.violations))


def preview(
    stack_name: str,
    project_dir: Path,
    *,
    use_policy: bool = True,
    progress: Callable[[int, str], None] | None = None,
) -> ChangeSummary:
    """``pulumi preview`` (with the policy pack); raises PreviewFailed on failure or violation."""
    return _run("preview", stack_name, project_dir, use_policy, progress)


def up(
    stack_name: str,
    project_dir: Path,
    *,
    use_policy: bool = True,
    progress: Callable[[int, str], None] | None = None,
) -> ChangeSummary:
    """``pulumi up --yes`` (with the policy pack); raises PreviewFailed on failure."""
    return _run("up", stack_name, project_dir, use_policy, progress)


class PreviewFailed(EngineError):
    """The engine refused (policy violation, program error); carries what it saw so far."""

    exit_code = 1

    def __init__(self, message: str, summary: ChangeSummary) -> None:
        super().__init__(message)
        self.summary = summary


_UNREADABLE = object()


def _read_json(path: Path) -> object:
    """The file's JSON value, or ``_UNREADABLE`` when it is missing, cut short or not JSON."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _UNREADABLE


def _checkpoint_ok(path: Path) -> bool:
    data = _read_json(path)
    return isinstance(data, dict) and "checkpoint" in data


def _json_ok(path: Path) -> bool:
    return _read_json(path) is not _UNREADABLE


def repair_file_state(root: Path, project: str, stack_name: str) -> list[str]:
    """Repair what a killed ``up`` can leave torn in a ``file://`` backend's ``.pulumi`` dir.

    The backend (gocloud ``fileblob``) writes each blob to a temp file and renames it,
    so the checkpoint itself is replaced atomically. Its metadata sidecar
    (``<blob>.attrs``, content type and MD5) is not: it is truncated and rewritten in
    place just before the rename, so a kill in between leaves it empty and every later
    read of the stack fails with ``failed to load checkpoint: EOF``. A sidecar holds no
    state, and a missing one reads as the defaults, so a torn one is removed.

    A checkpoint that is not valid JSON (a hand edit, a copy cut short) is replaced by
    the newest intact copy: ``<stack>.json.bak`` or the newest file in
    ``.pulumi/backups``; the damaged one is kept as ``<stack>.json.torn``.

    Returns the steps taken; raises EngineError when no intact copy exists.
    """
    import shutil

    steps: list[str] = []
    stack_dirs = [
        root / "stacks" / project,
        root / "locks" / "organization" / project / stack_name,
        root / "history" / project / stack_name,
        root / "backups" / project / stack_name,
    ]
    torn = [
        a
        for d in stack_dirs
        if d.is_dir()
        for a in sorted(d.glob("*.attrs"))
        if (d != stack_dirs[0] or a.name.startswith(f"{stack_name}.json")) and not _json_ok(a)
    ]
    for a in torn:
        a.unlink()
    if torn:
        names = ", ".join(a.name for a in torn)
        steps.append(f"removed {len(torn)} torn metadata sidecar(s) a kill mid-write left: {names}")

    ckpt = root / "stacks" / project / f"{stack_name}.json"
    if ckpt.exists() and not _checkpoint_ok(ckpt):
        candidates = [ckpt.with_name(ckpt.name + ".bak")]
        candidates += sorted(
            (root / "backups" / project / stack_name).glob("*.json"),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        good = next((c for c in candidates if c.exists() and _checkpoint_ok(c)), None)
        if good is None:
            raise EngineError(f"{ckpt} is torn and no intact backup was found next to it")
        shutil.copyfile(ckpt, ckpt.with_name(ckpt.name + ".torn"))
        shutil.copyfile(good, ckpt)
        steps.append(
            f"restored the torn checkpoint from {good.name} "
            f"(the torn one is kept as {ckpt.name}.torn)"
        )
    return steps


def _check_and_repair_state(backend: str, project: str, stack_name: str) -> list[str]:
    """Step 1 of :func:`recover`, by backend kind."""
    holder = live_lock_holder(lock_holders(backend, project, stack_name))
    if holder is not None:
        raise EngineError(
            f"stack {stack_name!r} is locked by an update that is still running (pid "
            f"{holder.pid} on {holder.hostname}, since {holder.timestamp}): wait for it; "
            "recover is for an update that died"
        )
    kind = backend_kind(backend)
    if kind == "file":
        root = Path(backend.removeprefix("file://").split("?", 1)[0]).expanduser() / ".pulumi"
        return repair_file_state(root, project, stack_name)
    if kind == "postgres":
        return ["state is in PostgreSQL: each write is one statement, nothing torn to repair"]
    return []


def recover(stack_name: str, project_dir: Path) -> list[str]:
    """Bring a stack back after a killed ``up``; returns the steps taken, in order.

    1. Refuse when the lock belongs to an update still running on this host: recover
       is for one that died. On a ``file://`` backend, repair the state files a kill
       can leave torn (``repair_file_state``): first, because every later command
       reads them. A ``postgres://`` backend writes each blob in one statement, so
       there is nothing torn to repair.
    2. Clear the stale update lock (``pulumi cancel``).
    3. ``pulumi refresh --clear-pending-creates``: read every record back from the
       inventory and drop creates the engine never saw finish.

    Then ``up`` (``fabric-stack apply``) re-applies the plan; the providers upsert, so
    records written before the kill are matched rather than duplicated.
    """
    import subprocess

    import yaml

    env = offline_env(project_dir)
    pulumi = str(project_dir / ".venv" / "bin" / "pulumi")
    steps: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [pulumi, *args, "--stack", stack_name, "--non-interactive"],
            cwd=project_dir,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    backend = env["PULUMI_BACKEND_URL"]
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text())["name"]
    steps += _check_and_repair_state(backend, project, stack_name)
    if run("cancel", "--yes").returncode == 0:
        steps.append("cleared the stale update lock")
    r = run("refresh", "--yes", "--clear-pending-creates")
    if r.returncode != 0:
        msg = mask_secrets(_first_error(r.stdout + r.stderr), backend)
        raise EngineError(f"pulumi refresh: {msg}")
    steps.append("refreshed every record from the inventory and cleared pending creates")
    return steps
