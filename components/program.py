"""The Pulumi program: stack config → spec → plan → topology → intent → Fabric component.

Bad config fails the program with the same one-line message the CLI prints
(``pulumi.RunError``: no traceback).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime.config import get_config_env

from fabric_stack.adapters.inventory import mask_url
from fabric_stack.adapters.inventory.netbox.branching import check_branch_name
from fabric_stack.adapters.inventory.netbox.client import split_netbox_url, url_with_token
from fabric_stack.errors import FabricStackError, SpecError
from fabric_stack.files.config import spec_from_stack_config, split_stack_config, stack_config_error
from fabric_stack.pipeline import Pipeline, run_pipeline
from fabric_stack.sizing.managers import managers_took

from .fabric import FabricComponent


def default_inventory_url(project_dir: Path) -> str:
    """Embedded default: an SQLite file in the project's (gitignored) state directory."""
    return f"sqlite:///{(project_dir / '.state' / 'inventory.db').resolve()}"


def resolve_inventory(url: str, project_dir: Path) -> str:
    """Make a relative ``sqlite:///rel.db`` absolute: providers may run in another cwd."""
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
        return f"sqlite:///{(project_dir / url[len('sqlite:///') :]).resolve()}"
    return url


def netbox_inventory(url: str, cfg: pulumi.Config) -> tuple[pulumi.Input[str], str]:
    """(inventory URL carrying the secret ``fabric:netboxToken``, URL to show) for NetBox."""
    if mask_url(url) != url:
        raise pulumi.RunError(
            "fabric:inventory: keep the NetBox token out of the URL; store it as a secret "
            "(pulumi config set --secret fabric:netboxToken TOKEN)"
        )
    try:
        split_netbox_url(url)
    except FabricStackError as exc:
        raise pulumi.RunError(f"fabric:inventory: {exc.message}") from None
    token = cfg.get_secret("netboxToken")
    if token is None:
        raise pulumi.RunError(
            "fabric:netboxToken: not set; a NetBox inventory needs an API token that may write "
            "(pulumi config set --secret fabric:netboxToken TOKEN)"
        )
    return pulumi.Output.secret(token.apply(lambda t: url_with_token(url, t))), url


def check_branch(branch: Any, inventory: str | None) -> None:
    """RunError unless ``fabric:netboxBranch`` is unset, or a name NetBox takes on a NetBox
    inventory (the providers read it themselves: ``InventoryProvider.configure``)."""
    if branch is None or branch == "":
        return
    if not (inventory or "").startswith("netbox+"):
        raise pulumi.RunError(
            "fabric:netboxBranch: only a NetBox inventory has branches "
            "(fabric:inventory: netbox+https://HOST); unset it for this inventory"
        )
    try:
        check_branch_name(str(branch), "fabric:netboxBranch")
    except FabricStackError as exc:
        raise pulumi.RunError(exc.message) from None


def run(project_dir: Path | None = None) -> None:
    """Build the stack. Exports the sizing summary as stack outputs."""
    project_dir = project_dir or Path.cwd()
    config: dict[str, Any] = get_config_env()
    try:
        spec = spec_from_stack_config(config)
        try:
            pipe = run_pipeline(spec)
        except SpecError as exc:  # a sizing rule the spec breaks: name its stack-config key
            raise stack_config_error(exc) from None
    except FabricStackError as exc:
        raise pulumi.RunError(exc.message) from None

    _, settings = split_stack_config(config)
    granularity = str(settings.get("granularity") or "bundle")
    if granularity not in ("bundle", "cable"):
        raise pulumi.RunError(
            f"fabric:granularity: {granularity!r} is not allowed (expected 'bundle' or 'cable')"
        )
    cfg = pulumi.Config("fabric")
    raw = cfg.get("inventory")
    if raw is None or pulumi.runtime.is_config_secret("fabric:inventory"):
        secret = cfg.get_secret("inventory")
        inventory: pulumi.Input[str] = (
            secret.apply(lambda u: resolve_inventory(u, project_dir))
            if secret is not None
            else default_inventory_url(project_dir)
        )
        shown = "[secret]" if secret is not None else default_inventory_url(project_dir)
    elif raw.startswith("netbox+"):
        inventory, shown = netbox_inventory(raw, cfg)
    else:
        inventory = resolve_inventory(raw, project_dir)
        shown = mask_url(str(inventory))
        if shown != inventory:
            raise pulumi.RunError(
                "fabric:inventory: the URL contains a password; store it as a secret "
                "(pulumi config set --secret fabric:inventory 'postgresql://…')"
            )

    check_branch(settings.get("netbox_branch"), raw)

    on = settings.get("config_records", True) not in (False, "false")
    # Off, the Fabric record says so: plan then knows a switch record without
    # allocations was not written before stable allocations (growth.recorded_changes).
    extras = config_records(pipe, project_dir) if on else {"": {"config_records": False}}
    FabricComponent(
        spec.name,
        pipe.intent,
        inventory,
        granularity,  # type: ignore[arg-type]
        extras=extras,
    )

    for key, value in stack_outputs(pipe).items():
        pulumi.export(key, value)
    pulumi.export("inventory", shown)


def config_records(pipe: Pipeline, project_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Config digests and allocations per switch record (issue #27).

    Rendered once per spec: the records and the configuration lines behind them
    are kept in the project's render cache (``fabric_stack.files.render_cache``),
    so a later preview of the same spec, ``pulumi up`` and ``fabric-stack plan``
    (which compares the lines) read them instead of rendering again.
    ``fabric:config_records: false`` leaves them out (the preview then shows
    cabling only, as before).
    """
    from fabric_stack.files.render_cache import cached

    spec = pipe.plan.spec

    def records() -> dict[str, dict[str, Any]]:
        # Imported only on a miss: the renderers cost ~0.6 s of CPU to import alone.
        from fabric_stack.artifacts._base import RenderContext
        from fabric_stack.artifacts.growth import config_lines_of, device_records

        ctx = RenderContext(pipe.topology, pipe.intent)
        lines = cached(project_dir, "lines", spec, lambda: config_lines_of(ctx))
        return device_records(ctx, lines)

    return cached(project_dir, "records", spec, records)


def stack_outputs(pipe: Pipeline) -> dict[str, Any]:
    """The sizing summary the stack exports (``pulumi stack output``), besides ``inventory``.

    ``gpus`` stays the GPUs asked, as it always was (scripts read it); ``gpus_requested``
    says the same by name, and ``gpus_built`` is what is cabled: fewer when the fabric
    managers take a server position (the DGX SuperPOD RA rule), ``servers_removed`` says
    how many and why (its ``reason`` is '' when none was).
    """
    spec, plan = pipe.plan.spec, pipe.plan
    return {
        "tiers": plan.tiers,
        "gpus": spec.gpus,
        "gpus_requested": spec.gpus,
        "gpus_built": plan.gpus,
        "servers_removed": {
            "count": plan.servers_removed,
            "reason": managers_took(plan.servers_removed, plan.manager_su),
        },
        "switches": plan.switches.model_dump(),
        "cables": pipe.intent.summary.cables,
        "bandwidth": plan.bandwidth.model_dump(),
        "oversubscription": plan.oversubscription,
    }
