"""The twin's records: cables, faults, the wiring a running twin carries, and its state file.

Everything here is data. :mod:`.wiring` derives a :class:`Wiring` from the plan
(pure) and applies faults to it (pure); :mod:`.runtime` and :mod:`.ops` make the
running twin match a wiring and record every object they create in a
:class:`TwinState` (the JSON state file ``DIR/twin.json``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

STATE_FILE = "twin.json"
"""Name of the state file inside the twin's directory."""

STATE_VERSION = 1
"""Version of the state file layout (bumped on incompatible changes)."""

PREFIX = "fst-"
"""Every namespace, runtime directory and process marker the twin creates starts with this."""

FaultKind = Literal["unplug", "swap", "move", "speed", "down", "rogue"]
"""The faults ``twin fault`` injects."""

FAULT_KINDS: tuple[FaultKind, ...] = ("unplug", "swap", "move", "speed", "down", "rogue")
"""Every fault kind, in --help order."""

EXPECTED_FINDING: dict[str, str] = {
    "unplug": "missing_link",
    "swap": "wrong_peer",
    "move": "wrong_peer",
    "speed": "speed_mismatch",
    "down": "missing_device",
    "rogue": "unexpected_device",
}
"""The drift finding each fault kind should produce (one finding per fault)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class End(_Frozen):
    """One end of a twin cable: a device, its port label as the plan prints it, its number."""

    device: str = Field(description="Device name as the plan spells it.")
    port: str = Field(description="Port label as the plan spells it (1/3/1, swp3s0, mlx5_0).")
    number: int = Field(description="Logical port number (1-based) on the device.")

    def text(self) -> str:
        """``device:port``."""
        return f"{self.device}:{self.port}"


class Cable(_Frozen):
    """A cable of the twin: two ends and the link rate it runs at."""

    a: End = Field(description="Lower-tier end (server, leaf, spine), as in the plan.")
    b: End = Field(description="Upper-tier end.")
    gbps: int = Field(description="Link speed in Gb/s the twin runs this cable at.")
    role: str = Field(description="Plan role (node_leaf, leaf_spine, …, or rogue).")


class Device(_Frozen):
    """A device of the twin (a switch, a server, or one injected by a rogue fault)."""

    name: str = Field(description="Hostname / plan name.")
    kind: Literal["switch", "server"] = Field(description="switch or server.")
    ports: int = Field(description="Logical ports (switch radix; server: highest HCA port used).")
    model: str = Field(default="", description="Plan model (QM9700, SN5600, dgx-h100 …).")
    hcas: tuple[str, ...] = Field(
        default=(), description="InfiniBand: the server's HCA names (one CA node each)."
    )


class Wiring(_Frozen):
    """What the twin runs: devices, cables and the devices that are powered off."""

    fabric: Literal["infiniband", "ethernet"] = Field(description="Which twin this is.")
    devices: tuple[Device, ...] = Field(description="Every device, plan order, rogues last.")
    cables: tuple[Cable, ...] = Field(description="Every cable, plan order.")
    down: tuple[str, ...] = Field(default=(), description="Devices powered off by a fault.")

    def device(self, name: str) -> Device | None:
        """The device called ``name``, or None."""
        return next((d for d in self.devices if d.name == name), None)


class Fault(_Frozen):
    """One injected fault, as given on the command line (resolved onto plan names)."""

    kind: FaultKind = Field(description="unplug, swap, move, speed, down or rogue.")
    args: tuple[str, ...] = Field(description="Its arguments, resolved (device:port, Gb/s, name).")
    expects: str = Field(description="The drift finding kind this fault should produce.")

    def text(self) -> str:
        """``swap su1-node01:mlx5_0 su1-node02:mlx5_0``."""
        return " ".join((self.kind, *self.args))


class Process(_Frozen):
    """A process the twin started: enough to find it again, and only it."""

    name: str = Field(description="What it is (ibsim, opensm-sm-host-1, lldpd su1-r1-leaf).")
    pid: int = Field(description="Process id.")
    start_ticks: int = Field(description="/proc/PID/stat start time: guards against PID reuse.")
    netns: str = Field(description="The twin namespace it runs in.")
    command: str = Field(
        default="",
        description="Program name (argv[0]'s base name): checked against /proc/PID/cmdline "
        "before the process is signalled (empty in state files older than issue 35).",
    )


class TwinState(_Frozen):
    """The state file: every object the twin made, written before it makes them."""

    version: int = Field(default=STATE_VERSION, description="State file layout version.")
    tag: str = Field(description="Short id of this twin, part of every name it creates.")
    token: str = Field(
        default="",
        description="Random secret of this twin (32 hex digits), made by `up`: in the "
        "environment of every process it starts and in RUNTIME_DIR/token; `down` stops and "
        "deletes only what carries it (the tag is a hash prefix anyone can collide with).",
    )
    fabric: Literal["infiniband", "ethernet"] = Field(description="Which twin this is.")
    spec: dict[str, Any] = Field(description="The FabricSpec (JSON) the twin was built from.")
    guids: dict[str, str] = Field(
        default_factory=dict, description="InfiniBand: node GUID per switch / 'host mlx5_N'."
    )
    created_dir: bool = Field(description="Whether `up` created the twin directory itself.")
    paths: tuple[str, ...] = Field(
        default=(), description="Files and directories (relative to DIR) the twin wrote."
    )
    runtime_dir: str = Field(description="/run/fst-<tag>: sockets and PID files of the daemons.")
    namespaces: tuple[str, ...] = Field(default=(), description="Every network namespace.")
    processes: tuple[Process, ...] = Field(default=(), description="Every process started.")
    faults: tuple[Fault, ...] = Field(default=(), description="Injected faults, in order.")
    phases: dict[str, float] = Field(
        default_factory=dict, description="Seconds each `up` phase took."
    )
    complete: bool = Field(default=False, description="True once `up` finished.")
    sm: dict[str, Any] = Field(
        default_factory=dict, description="InfiniBand: SM instances, where they attach, priority."
    )
    rate: dict[str, str] = Field(
        default_factory=dict,
        description="InfiniBand: planned lane name and the lane the twin runs instead, if any.",
    )
