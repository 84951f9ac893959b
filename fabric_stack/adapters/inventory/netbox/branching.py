"""NetBox branches (the netbox-branching plugin): write a change where it can be reviewed.

A branch is a copy of NetBox's tables in a PostgreSQL schema of its own; a REST request
works in it when it carries the header ``X-NetBox-Branch: <schema_id>`` (the plugin's
``utilities.get_active_branch``, netbox-branching 1.2.2), and main is untouched until the
branch is merged in NetBox. The branch is named by ``fabric:netboxBranch`` (``up`` and
``destroy``) or ``--netbox-branch`` (``drift``, ``adopt``, ``inventory``) and travels with
the inventory URL as its ``?branch=NAME`` query (:func:`with_branch`), so every place that
opens a NetBox client gets it the same way.

Writing into a branch that does not exist creates it (``POST
/api/plugins/branching/branches/``); NetBox provisions it in a background job (status
``new`` → ``provisioning`` → ``ready``), so the client waits for ``ready``, at most
:data:`READY_WAIT_S` seconds. Reading a branch never creates one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fabric_stack.errors import InventoryError, NetBoxHttpError

BRANCH_HEADER = "X-NetBox-Branch"
"""The request header that selects a branch by its ``schema_id`` (REST and GraphQL only)."""

BRANCHES = "plugins/branching/branches/"
"""The plugin's branch endpoint below ``/api/``."""

MAX_NAME = 100
"""``Branch.name`` is ``CharField(max_length=100, unique=True)`` (netbox-branching 1.2.2,
``models/branches.py``)."""

READY_WAIT_S = 300.0
"""Longest wait for a new branch to be provisioned (a copy of every NetBox table: seconds on a
small NetBox, longer on a big one or with no free RQ worker)."""

_POLL_S = (0.5, 1.0, 2.0)
"""Waits between status reads (then the last, repeated)."""

Request = Callable[[str, str, Any], Any]
"""``(method, path below /api/, body) -> JSON``: a request on main (no branch header)."""


def check_branch_name(name: str, where: str) -> str:
    """``name`` if NetBox can hold it as a branch name; InventoryError naming ``where`` else."""
    if not name or name != name.strip():
        problem = "is empty" if not name.strip() else "starts or ends with a space"
    elif len(name) > MAX_NAME:
        problem = f"is {len(name)} characters long (NetBox takes at most {MAX_NAME})"
    elif any(ord(c) < 0x20 or c == "\x7f" for c in name):
        problem = "holds a control character"
    else:
        return name
    raise InventoryError(f"{where}: branch name {name[:40]!r} {problem}")


def with_branch(url: str, branch: str | None) -> str:
    """``url`` (``netbox+http(s)://…``) carrying ``branch`` as its ``?branch=`` query."""
    if not branch:
        return url
    head = url.split("?", 1)[0]
    return f"{head}?branch={quote(branch, safe='')}"


def branch_of(url: str) -> str:
    """The ``?branch=`` of a NetBox URL ('' for main)."""
    values = parse_qs(urlsplit(url).query).get("branch", [])
    return values[0] if values else ""


_LOCK = threading.Lock()
_READY: dict[tuple[str, str], str] = {}
"""(base, branch name) → schema_id of a branch seen ready in this process: a Pulumi provider
opens a client per resource, and its parallel calls must not each create the branch."""


def branch_schema(request: Request, base: str, name: str, create: bool) -> str:
    """The ``schema_id`` of branch ``name`` once it is ready; created first when ``create``.

    InventoryError (one line) when NetBox has no netbox-branching plugin, refuses the name,
    the branch is missing (reading), merged or failed, or it is not ready in time.
    """
    check_branch_name(name, f"NetBox {base}")
    with _LOCK:
        if (base, name) not in _READY:
            _READY[(base, name)] = _enter(request, base, name, create)
        return _READY[(base, name)]


def forget_branches() -> None:
    """Forget the branches seen ready (a long-lived process after a merge)."""
    with _LOCK:
        _READY.clear()


def _enter(request: Request, base: str, name: str, create: bool) -> str:
    where = f"NetBox {base}: branch {name!r}"
    found = find_branch(request, base, name)
    if found is None:
        if not create:
            raise InventoryError(f"{where}: no such branch (it is made by `up` with it)")
        found = _create(request, where, name)
        if found is None:  # another process made it meanwhile (a parallel `up`)
            found = find_branch(request, base, name)
        if found is None:
            raise InventoryError(f"{where}: NetBox refused to create it and it is not there")
    return _ready(request, where, found)


def find_branch(request: Request, base: str, name: str) -> dict[str, Any] | None:
    """The branch named ``name``, or None; InventoryError when the plugin is not there."""
    try:
        page = request("GET", f"{BRANCHES}?name={quote(name, safe='')}&limit=2", None)
    except NetBoxHttpError as exc:
        if exc.status == 404:
            raise InventoryError(
                f"NetBox {base}: no netbox-branching plugin (GET /api/{BRANCHES} answered "
                f"404), so branch {name!r} cannot be used: install netboxlabs-netbox-branching "
                "in NetBox, or unset fabric:netboxBranch / --netbox-branch"
            ) from None
        raise
    results = page.get("results") if isinstance(page, dict) else None
    if not isinstance(results, list):
        raise InventoryError(f"NetBox {base}: GET /api/{BRANCHES}: expected a list page")
    hits = [b for b in results if isinstance(b, dict) and b.get("name") == name]
    return hits[0] if hits else None


def _create(request: Request, where: str, name: str) -> dict[str, Any] | None:
    """The new branch; None when NetBox says one of that name exists (made meanwhile)."""
    try:
        made = request("POST", BRANCHES, {"name": name, "description": "fabric-stack"})
    except NetBoxHttpError as exc:
        if exc.status == 400 and "already exists" in exc.message:
            return None
        if exc.status == 400:
            raise InventoryError(f"{where}: NetBox refused the name ({exc.message})") from None
        raise
    if not isinstance(made, dict) or "id" not in made:
        raise InventoryError(f"{where}: POST /api/{BRANCHES}: expected the new branch")
    return made


def _ready(request: Request, where: str, branch: dict[str, Any]) -> str:
    """Wait (bounded) until ``branch`` is ready; its schema_id."""
    polls = iter(_POLL_S)
    wait = _POLL_S[0]
    deadline = time.monotonic() + READY_WAIT_S
    while True:
        status = _status(branch)
        if status == "ready":
            return str(branch["schema_id"])
        if status in ("merged", "archived", "failed", "pending-migrations"):
            raise InventoryError(
                f"{where}: its status is {status!r}, not ready for changes"
                + ("; name a new branch" if status in ("merged", "archived") else "")
            )
        if time.monotonic() + wait > deadline:
            raise InventoryError(
                f"{where}: still {status!r} after {READY_WAIT_S:g} s (is NetBox's RQ worker, "
                "`netbox rqworker`, running?)"
            )
        time.sleep(wait)
        wait = next(polls, wait)
        got = request("GET", f"{BRANCHES}{int(branch['id'])}/", None)
        if not isinstance(got, dict):
            raise InventoryError(f"{where}: GET /api/{BRANCHES}: expected the branch")
        branch = got


def _status(branch: dict[str, Any]) -> str:
    """A branch's status value (the API gives ``{"value": …, "label": …}``)."""
    status = branch.get("status")
    if isinstance(status, dict):
        status = status.get("value")
    return str(status or "")
