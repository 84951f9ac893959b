"""What ``NCCL_DEBUG=INFO`` lines say about the network NCCL used.

NCCL prefixes each line ``HOST:PID:TID [DEV] NCCL INFO|WARN …``. The messages read
here, as NCCL 2.2x prints them (``../shared/realdata/nccl-tests`` holds real ones):

* ``NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB …; OOB …``: the HCAs NCCL opened
  on that host (``NET/IB : No device found.``: none, NCCL falls back to sockets);
* ``Using network IB|Socket|<plugin>``;
* ``NCCL_IB_HCA set to …`` (``set by environment to …`` in other versions), and
  ``NCCL_ALGO set by environment to …``;
* ``comm … rank R nranks N`` / ``nRanks N``: the job's rank count;
* ``Connected all rings, use ring PXN p GDR g`` and ``Channel … via NET/IB/k/GDRDMA``:
  whether GPUDirect RDMA is used;
* ``via NET/…/Shared``: several GPUs share one NIC's connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabric_stack.acceptance.model import HostNet, NetDevice

INFO = re.compile(
    r"^(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>[^\]]*)\] "
    r"NCCL (?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$"
)
USING_IB = re.compile(r"^NET/IB ?: Using (.*)$")
NET_DEVICE = re.compile(r"\[(\d+)\]([A-Za-z0-9_.-]+):(\d+)/(IB|RoCE)")
NO_DEVICE = re.compile(r"^NET/IB ?: No device found")
NETWORK = re.compile(r"^Using network (\S.*)$")
IB_HCA = re.compile(r"^NCCL_IB_HCA set (?:by environment )?to (\S+)")
ALGO = re.compile(r"^NCCL_ALGO set by environment to (\S+)")
NRANKS = re.compile(r"\bn[Rr]anks (\d+)")
INIT = re.compile(r"^ncclCommInitRank\b|^comm 0x[0-9a-f]+ rank \d+ nranks \d+ .*Init")
"""A communicator's set-up line (NCCL 2.x: ``ncclCommInitRank comm 0x… rank R nranks N``,
real sample ``moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log`` line 18)."""
RINGS = re.compile(r"Connected all rings(?:, use ring PXN \d+ GDR (\d))?")
VIA_NET = re.compile(r"via NET/[^/\s]+/\d+(?:\(\d+\))?(/GDRDMA)?(/Shared)?")
VERSION = re.compile(r"^NCCL version (\d+\.\d+\.\d+\S*)")
MAX_WARNINGS = 5


@dataclass
class InfoState:
    """What the INFO lines of one run said so far."""

    lines: int = 0
    version: str | None = None
    nets: dict[str, tuple[list[NetDevice], int]] = field(default_factory=dict)
    network: str | None = None
    ib_hca: dict[str, str] = field(default_factory=dict)
    ib_hca_line: int | None = None
    algo: str | None = None
    nranks: int | None = None
    gdr: bool | None = None
    gdr_line: int | None = None
    shared: bool = False
    shared_line: int | None = None
    warnings: list[str] = field(default_factory=list)
    ranks_said: set[int] = field(default_factory=set)
    """Every rank count a ``ncclCommInitRank … nranks N`` line said."""
    init_processes: set[tuple[str, str]] = field(default_factory=set)
    """(host, pid) of every process that initialised a communicator."""
    init_line: int | None = None

    def host_nets(self) -> list[HostNet]:
        """Per host, the HCAs NCCL opened, in log order."""
        return [HostNet(host=h, devices=d, line=no) for h, (d, no) in self.nets.items()]


def read_info(state: InfoState, s: str, no: int) -> bool | None:
    """Fold one line into ``state``: True when it was an NCCL log line, else None."""
    m = INFO.match(s)
    if not m:
        return None
    state.lines += 1
    host, msg = m["host"], m["msg"]
    if m["level"] == "WARN":
        if len(state.warnings) < MAX_WARNINGS:
            state.warnings.append(f"line {no}: {host}: {msg.strip()}")
        return True
    _network(state, host, msg, no)
    _settings(state, host, msg, no)
    if INIT.match(msg):
        r = NRANKS.search(msg)
        if r:
            state.ranks_said.add(int(r.group(1)))
            state.init_processes.add((host, m["pid"]))
            state.init_line = state.init_line or no
    _transport(state, msg, no)
    return True


def _network(state: InfoState, host: str, msg: str, no: int) -> None:
    u = USING_IB.match(msg)
    if u and host not in state.nets:
        devs = [
            NetDevice(index=int(i), name=n, port=int(p), link_layer=ll)
            for i, n, p, ll in NET_DEVICE.findall(u.group(1).split(";")[0])
        ]
        state.nets[host] = (devs, no)
    elif NO_DEVICE.match(msg) and host not in state.nets:
        state.nets[host] = ([], no)
    n = NETWORK.match(msg)
    if n and state.network is None:
        state.network = n.group(1).strip()


def _settings(state: InfoState, host: str, msg: str, no: int) -> None:
    h = IB_HCA.match(msg)
    if h and host not in state.ib_hca:
        state.ib_hca[host] = h.group(1).rstrip(".")
        state.ib_hca_line = state.ib_hca_line or no
    a = ALGO.match(msg)
    if a:
        state.algo = a.group(1).rstrip(".")
    r = NRANKS.search(msg)
    if r and state.nranks is None:
        state.nranks = int(r.group(1))
    v = VERSION.match(msg)
    if v and state.version is None:
        state.version = v.group(1)


def _transport(state: InfoState, msg: str, no: int) -> None:
    ring = RINGS.search(msg)
    if ring and ring.group(1) is not None:  # NCCL's own summary wins over channel lines
        state.gdr, state.gdr_line = ring.group(1) == "1", no
    via = VIA_NET.search(msg)
    if via:
        if state.gdr is None:
            state.gdr, state.gdr_line = bool(via.group(1)), no
        if via.group(2) and not state.shared:
            state.shared, state.shared_line = True, no


__all__ = ["InfoState", "read_info"]
