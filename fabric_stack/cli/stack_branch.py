"""Before `plan`/`apply` run the engine: check the stack's NetBox branch (issue #48).

A stack with ``fabric:netboxBranch`` writes into that branch of its NetBox. A name NetBox
refuses, a branch on an inventory that is not NetBox, or a NetBox without the
netbox-branching plugin is bad input: one line and exit 2 here, before the engine runs,
rather than one failure per resource from inside ``pulumi up``. ``apply`` also creates the
branch and waits until NetBox has provisioned it, so the providers find it ready.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fabric_stack.adapters.inventory.netbox.branching import (
    branch_schema,
    check_branch_name,
    find_branch,
)
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient, split_netbox_url
from fabric_stack.errors import InventoryError


def _value(config: dict[str, Any], key: str) -> str:
    entry = config.get(key)
    return str(entry.get("value") or "") if isinstance(entry, dict) else ""


def check_stack_branch(stack: str, project_dir: Path, create: bool) -> str:
    """The stack's NetBox branch ('' for none), checked against its NetBox (made if ``create``;
    a preview writes nothing, so ``plan`` checks the plugin and the name only)."""
    from fabric_stack.adapters.pulumi.stack_config import read_stack_config, stack_secret

    config = read_stack_config(stack, project_dir)
    branch = _value(config, "fabric:netboxBranch")
    if not branch:
        return ""
    inventory = _value(config, "fabric:inventory")
    if not inventory.startswith("netbox+"):
        raise InventoryError(
            "fabric:netboxBranch: only a NetBox inventory has branches "
            "(fabric:inventory: netbox+https://HOST); unset it for this inventory"
        )
    check_branch_name(branch, "fabric:netboxBranch")
    base, _ = split_netbox_url(inventory)
    token = stack_secret(stack, "fabric:netboxToken", project_dir)
    client = NetBoxClient(base, token or os.environ.get("NETBOX_TOKEN", ""))

    def request(method: str, path: str, body: Any) -> Any:
        return client.request(method, path, body)

    if create:
        branch_schema(request, base, branch, create=True)
    else:
        find_branch(request, base, branch)
    return branch
