"""The records of a growth comparison (:mod:`fabric_stack.artifacts.growth`).

Kept apart from the comparison so the Pulumi change summary can carry them
without importing the renderers.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AddressChange(BaseModel):
    """One allocation that exists on both sides with a different value."""

    model_config = ConfigDict(frozen=True)

    object: str = Field(description="Stable identity and kind: 'spine-01 router-id'.")
    before: str = Field(description="Value before the change.")
    after: str = Field(description="Value after the change.")
    reason: str = Field(
        default="",
        description="Why it moves when the spec change is not the cause: the stack recorded "
        "another value ('recorded before stable allocations'); empty otherwise.",
    )
    caveat: str = Field(
        default="",
        description="What the change assumes and how to confirm it (a switch record without "
        "allocations is taken as numbered before stable allocations); empty when certain.",
    )


class ConfigChange(BaseModel):
    """One device whose configuration lines change."""

    model_config = ConfigDict(frozen=True)

    device: str = Field(description="Switch, server or SM the configuration belongs to.")
    new: bool = Field(default=False, description="True when the device is new (no config before).")
    added: int = Field(description="Configuration lines added.")
    removed: int = Field(description="Configuration lines removed.")
    groups: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="group → {'added': n, 'removed': n} (bgp, ports, …)."
    )
    # The lines themselves stay out of the plan's JSON (a new leaf has thousands):
    # ``fabric-stack diff --lines`` prints them.
    lines_added: list[str] = Field(
        default_factory=list, exclude=True, description="The lines added."
    )
    lines_removed: list[str] = Field(
        default_factory=list, exclude=True, description="The lines removed."
    )


class GrowthDiff(BaseModel):
    """Config and address changes between two specs."""

    model_config = ConfigDict(frozen=True)

    config_changes: list[ConfigChange] = Field(description="Devices whose config changes.")
    address_changes: list[AddressChange] = Field(description="Allocations that move.")
    allocations_added: int = Field(description="Allocations only after (growth).")
    allocations_removed: int = Field(description="Allocations only before (a shrink frees).")
