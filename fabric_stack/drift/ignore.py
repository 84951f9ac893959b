"""Ignore rules: ports, devices and findings a drift report should not flag.

The file is YAML. Either a mapping::

    ports:
      - {device: su1-node07, port: mlx5_3, mode: ignore}
      - {device: su1-r1-leaf, port: 1/4/1, mode: link_state_only}
    devices: [su1-node16, "lab-*"]        # fnmatch patterns allowed
    findings: ["wrong_peer:3f2a9c01d4"]   # accepted findings, by id

or just the list of port entries. ``ignore`` drops every finding that touches
the port; ``link_state_only`` only checks that *something* is up on the port
(who the neighbour is and at what speed are not checked). Ports are resolved
like any source's (``swp4s0``, ``Ethernet4/1`` and ``7`` name the same leaf port).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config import load_yaml
from ..errors import InputFileError

IgnoreMode = Literal["ignore", "link_state_only"]
"""What to do with a port: drop it from the report, or only check its link is up."""


class PortRule(BaseModel):
    """One port (or, without ``port``, a whole device) and what to do with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device: str = Field(description="Device name as the plan spells it (fnmatch pattern allowed).")
    port: str | None = Field(
        default=None, description="Port in any spelling; omit for the whole device."
    )
    mode: IgnoreMode = Field(default="ignore", description="'ignore' or 'link_state_only'.")

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, v: Any) -> Any:
        if isinstance(v, str):
            key = v.strip().lower().replace("-", "_").replace(" ", "_")
            return {"state": "link_state_only", "link_state": "link_state_only"}.get(key, key)
        return v

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v


class IgnoreRules(BaseModel):
    """Everything a drift report should leave out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ports: list[PortRule] = Field(
        default_factory=list, description="Per-port (or per-device) rules."
    )
    devices: list[str] = Field(default_factory=list, description="Devices to ignore entirely.")
    findings: list[str] = Field(
        default_factory=list, description="Finding ids accepted as they are."
    )


def parse_ignore(data: Any, path: str = "<ignore>") -> IgnoreRules:
    """Validate already-parsed ignore data; errors name the file and the YAML path."""
    if data is None:
        return IgnoreRules()
    if isinstance(data, list):
        data = {"ports": data}
    if not isinstance(data, dict):
        raise InputFileError(
            path, "expected a mapping with ports/devices/findings or a list of ports"
        )
    try:
        return IgnoreRules.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "literal_error":
            msg = f"{err.get('input')!r} is not a mode (use ignore or link_state_only)"
        elif err["type"] == "extra_forbidden":
            msg = "unknown key (valid: ports, devices, findings; a port has device, port, mode)"
        raise InputFileError(path, msg, loc) from None


def load_ignore(path: str | Path) -> IgnoreRules:
    """Read an ignore file (YAML); bad content is one InputFileError line."""
    return parse_ignore(load_yaml(path), str(path))
