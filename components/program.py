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
from fabric_stack.adapters.inventory.netbox_client import split_netbox_url, url_with_token
from fabric_stack.errors import FabricStackError, SpecError
from fabric_stack.files.config import spec_from_stack_config, split_stack_config, stack_config_error
from fabric_stack.pipeline import run_pipeline

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


def run(project_dir: Path | None = None) -> None:
    """Build the stack. Exports the sizing summary as stack outputs."""
    project_dir = project_dir or Path.cwd()
    config: dict[str, Any] = get_config_env()
    try:
        spec = spec_from_stack_config(config)
        try:
            plan, _, intent = run_pipeline(spec)
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

    FabricComponent(spec.name, intent, inventory, granularity)  # type: ignore[arg-type]

    pulumi.export("tiers", plan.tiers)
    pulumi.export("gpus", spec.gpus)
    pulumi.export("switches", plan.switches.model_dump())
    pulumi.export("cables", intent.summary.cables)
    pulumi.export("bandwidth", plan.bandwidth.model_dump())
    pulumi.export("oversubscription", plan.oversubscription)
    pulumi.export("inventory", shown)
