"""Ignore rules: ports, devices and findings a drift report should not flag.

The file is YAML. Either a mapping::

    ports:
      - {device: su1-node07, port: mlx5_3, mode: ignore}
      - {device: su1-r1-leaf, port: 1/4/1, mode: link_state_only}
    devices: [su1-node16, "lab-*"]        # fnmatch patterns allowed
    findings: ["wrong_peer:3f2a9c01d4"]   # accepted findings, by id
    rates:                                # rates a lab or emulator reports for the planned ones
      - {lane: HDR, means: NDR}           # read ibnetdiscover's 4xHDR as 4xNDR
      - {gbps: 10, means: unknown}        # an LLDP MAU of 10G says nothing about the link

or just the list of port entries. ``ignore`` drops every finding that touches
the port; ``link_state_only`` only checks that *something* is up on the port
(who the neighbour is and at what speed are not checked). Ports are resolved
like any source's (``swp4s0``, ``Ethernet4/1`` and ``7`` name the same leaf port):
:class:`ActiveRules` holds the rules of one comparison on the plan's names.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fabric_stack.drift.model import Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.files.config import load_yaml

if TYPE_CHECKING:
    from fabric_stack.drift.identity import Identity
    from fabric_stack.drift.plan import EP

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


class RateRule(BaseModel):
    """A rate a source reports that stands for another: a twin or lab that cannot run the plan's.

    ``lane`` + ``means``: an InfiniBand lane name read as another (``4xHDR`` → ``4xNDR``;
    the width is kept, so ``2xHDR`` still differs from a planned ``4xNDR``).
    ``gbps`` + ``means: unknown``: a reported speed that says nothing about the link.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    lane: str | None = Field(default=None, description="Lane name as reported (HDR).")
    gbps: int | None = Field(default=None, description="Speed in Gb/s as reported (10).")
    means: str = Field(description="The lane name it stands for (NDR), or 'unknown'.")


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
    rates: list[RateRule] = Field(
        default_factory=list, description="Reported rates that stand for planned ones."
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
            msg = (
                "unknown key (valid: ports, devices, findings, rates; a port has device, port, "
                "mode; a rate has lane or gbps, and means)"
            )
        raise InputFileError(path, msg, loc) from None


def load_ignore(path: str | Path) -> IgnoreRules:
    """Read an ignore file (YAML); bad content is one InputFileError line."""
    return parse_ignore(load_yaml(path), str(path))


class ActiveRules:
    """Ignore rules resolved against one comparison's plan names (cached per device)."""

    def __init__(self, rules: IgnoreRules | None, ident: Identity) -> None:
        rules = rules or IgnoreRules()
        self.ports: set[EP] = set()
        self.state_only: set[EP] = set()
        self.state_only_devices: list[str] = []
        self.device_patterns: list[str] = []
        self.findings = set(rules.findings)
        for pattern in rules.devices:
            self.device_patterns.append(pattern)
        for r in rules.ports:
            if r.port is None:
                (self.device_patterns if r.mode == "ignore" else self.state_only_devices).append(
                    r.device
                )
                continue
            dev = ident.device(r.device)
            port, _ = ident.port(dev, r.port)
            (self.ports if r.mode == "ignore" else self.state_only).add((dev, port))
        self._dev_cache: dict[str, bool] = {}
        self._state_cache: dict[str, bool] = {}
        self.active = bool(
            self.ports or self.state_only or self.state_only_devices or self.device_patterns
        )

    @staticmethod
    def _match(name: str, patterns: list[str]) -> bool:
        return any(
            fnmatch.fnmatchcase(name, p) if any(c in p for c in "*?[") else name == p
            for p in patterns
        )

    def device_ignored(self, device: str) -> bool:
        """Is ``device`` ignored entirely (by name or pattern)?"""
        hit = self._dev_cache.get(device)
        if hit is None:
            hit = self._dev_cache[device] = self._match(device, self.device_patterns)
        return hit

    def ignored(self, ep: EP) -> bool:
        """Is port ``ep`` ignored (itself or its device)?"""
        return ep in self.ports or (bool(self.device_patterns) and self.device_ignored(ep[0]))

    def state_only_ep(self, ep: EP) -> bool:
        """Is port ``ep`` checked for link state only?"""
        if ep in self.state_only:
            return True
        if not self.state_only_devices:
            return False
        hit = self._state_cache.get(ep[0])
        if hit is None:
            hit = self._state_cache[ep[0]] = self._match(ep[0], self.state_only_devices)
        return hit


_RATE = re.compile(r"^(\d+)x([A-Z0-9]+)$")


def alias_rates(snap: Snapshot, rules: IgnoreRules | None) -> Snapshot:
    """``snap`` with the ``rates`` rules applied to every observed link (same object if none)."""
    if rules is None or not rules.rates:
        return snap
    from fabric_stack.drift.speeds import LANE_GBPS

    lanes = {r.lane: r.means for r in rules.rates if r.lane}
    unknown = {r.gbps for r in rules.rates if r.gbps is not None and r.means == "unknown"}
    links = []
    for lk in snap.links:
        m = _RATE.match(lk.rate or "")
        if m and m.group(2) in lanes and lanes[m.group(2)] in LANE_GBPS:
            lane = lanes[m.group(2)]
            speed = int(int(m.group(1)) * LANE_GBPS[lane])
            lk = dataclasses.replace(lk, rate=f"{m.group(1)}x{lane}", speed_gbps=speed)
        elif lk.speed_gbps is not None and lk.speed_gbps in unknown:
            lk = dataclasses.replace(lk, speed_gbps=None)
        links.append(lk)
    snap.links = links
    return snap
