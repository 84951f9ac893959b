"""Reader for a live Slurm tree: its ``topology.conf``, or ``scontrol show topology`` output.

Both are ``Key=value`` words per line (topology.conf(5); keys case-insensitive, ``#`` starts
a comment). ``SwitchName=`` names the switch, ``Nodes=`` and ``Switches=`` hold hostlist
expressions; ``scontrol show topology`` also prints ``Level=`` and ``LinkSpeed=``, and the
union of the nodes below on every level above 0, which is dropped (what a switch holds
directly is its level-0 ``Nodes=``). A block topology (``BlockName=``) is not a tree: refused
on its line, as is any line without ``SwitchName=``.

Source: https://slurm.schedmd.com/topology.conf.html
"""

from __future__ import annotations

from pathlib import Path

from fabric_stack.adapters.discovery._common import read_text
from fabric_stack.drift.model import DeviceSeen, SchedulerObservation, SchedulerSwitch, Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.files.inputs import lines
from fabric_stack.text.hostlist import MAX_NAMES, expand

SOURCE = "slurm-topology"

_KEYS = {"switchname", "nodes", "switches", "linkspeed", "level"}


def _fields(path: Path, lineno: int, line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in line.split():
        key, sep, value = word.partition("=")
        if not sep:
            raise InputFileError(str(path), f"{word!r} is not Key=value", lineno)
        out[key.lower()] = value
    if "blockname" in out or "blocksizes" in out:
        raise InputFileError(
            str(path),
            "a block topology line (topology/block); drift compares the tree "
            "(topology/tree: SwitchName= lines)",
            lineno,
        )
    if "switchname" not in out:
        raise InputFileError(str(path), "expected SwitchName=<name> (topology/tree)", lineno)
    unknown = sorted(set(out) - _KEYS)
    if unknown:
        raise InputFileError(
            str(path),
            f"unknown key {unknown[0]!r} (valid: SwitchName, Nodes, Switches, LinkSpeed, Level)",
            lineno,
        )
    return out


class SlurmTopologyReader:
    """``topology.conf`` or ``scontrol show topology`` → a scheduler snapshot."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self) -> Snapshot:
        """Read the file; every bad line is one located error."""
        text = read_text(self.path)
        switches: dict[str, SchedulerSwitch] = {}
        devices: dict[str, DeviceSeen] = {}
        named = 0  # names expanded so far: the whole file shares MAX_NAMES
        for lineno, raw in lines(text, self.path):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            f = _fields(self.path, lineno, line)
            name = f["switchname"]
            where = f"{self.path}:{lineno}"
            if name in switches:
                raise InputFileError(str(self.path), f"SwitchName={name} is listed twice", lineno)
            try:
                nodes = expand(f.get("nodes", ""), MAX_NAMES - named)
                kids = expand(f.get("switches", ""), MAX_NAMES - named - len(nodes))
            except ValueError as exc:
                raise InputFileError(str(self.path), str(exc), lineno) from None
            named += len(nodes) + len(kids)
            if f.get("level", "0") != "0":
                nodes = []  # scontrol prints the union of the nodes below
            switches[name] = SchedulerSwitch(name, tuple(nodes), tuple(kids), where)
            devices[name] = DeviceSeen(name, "slurm-switch", where)
            for node in nodes:
                devices.setdefault(node, DeviceSeen(node, "server", where))
        if not switches:
            raise InputFileError(str(self.path), "no SwitchName= lines (empty topology)")
        return Snapshot(
            source=SOURCE,
            origin=str(self.path),
            devices=devices,
            networks=frozenset({"compute"}),
            physical=False,
            scheduler=SchedulerObservation("slurm-topology", switches=switches),
        )


__all__ = ["SlurmTopologyReader"]
