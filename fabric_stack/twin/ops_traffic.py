"""`twin traffic`: real iperf3 traffic over the rail addresses of a RoCE/Ethernet twin.

The twin cannot run NCCL, but its servers have the plan's rail addresses and its switches
route them (FRR), so a real tool can measure them: iperf3, client and server in the
servers' namespaces, bound to the rail addresses (``-B``), so each run crosses exactly
one server port, the rail leaf (and its bridge) and the other server's port.

The sweep, per rail: every server sends to the next and to the previous server of the
rail (a ring both ways), so each server is measured as a sender and, from two senders,
as a receiver: what ``accept`` needs to tell a port's two directions apart. The rails run
side by side, one run per rail at a time (``2 × servers`` rounds).

The twin's veths have no line rate; each run is paced (``-b``, :data:`RATE_GBPS` by
default), which states what a link is asked to carry, and ``accept`` holds a run to the
lower of that pace and the median of the sweep. Bounded: ``-t`` seconds per run
(:data:`SECONDS`), every iperf3 under ``timeout`` (it stops by itself), servers one-off
(``-1``) and killed if their client never came, everything inside the twin's own
namespaces and addresses. Writes ``OUT/iperf3/<host>_<device>_to_<peer>.json`` (iperf3's
``-J``, as printed) and ``OUT/spec.yaml``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import yaml

from fabric_stack.files.outputs import write_files
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.ops import topology_of
from fabric_stack.twin.runtime import need_state, netns_name, ns_cmd, require_root, wait_until
from fabric_stack.twin.wiring import TwinError, TwinFailure, faulted_wiring
from fabric_stack.underlay.plan import HostPort, plan_underlay

Say = Callable[[str], None]
RATE_GBPS = 0.5
"""Default pace of every run (iperf3 ``-b``), Gb/s: one run per rail at a time, so 8 rails
ask 4 Gb/s of the machine, which the project's 2-core machines carry with every run within
1 % of its pace (measured); at 1 Gb/s a loaded round fell to 83 %."""
SECONDS = 2
"""Default length of every run (iperf3 ``-t``)."""
PORT = 5201
"""iperf3's port; each server binds its own rail address, so one port serves every rail."""
GRACE = 20
"""Seconds an iperf3 may run beyond its ``-t`` before ``timeout`` stops it."""

Pair = tuple[HostPort, HostPort]


def sweep_pairs(hosts: list[HostPort]) -> list[list[Pair]]:
    """Rounds of (sender, receiver) pairs: per rail, each server to its next and previous
    server (module docstring); one pair per rail in a round."""
    by_rail: dict[tuple[int, int], list[HostPort]] = defaultdict(list)
    for h in hosts:
        by_rail[h.plane, h.rail].append(h)
    per_rail: list[list[Pair]] = []
    for _, ring in sorted(by_rail.items()):
        n = len(ring)
        pairs: list[Pair] = []
        seen: set[tuple[str, str]] = set()
        for step in (1, -1):  # two servers: next and previous are one peer, run once
            for i, h in enumerate(ring):
                peer = ring[(i + step) % n]
                if peer.server != h.server and (h.server, peer.server) not in seen:
                    seen.add((h.server, peer.server))
                    pairs.append((h, peer))
        per_rail.append(pairs)
    rounds = max((len(p) for p in per_rail), default=0)
    return [[p[k] for p in per_rail if k < len(p)] for k in range(rounds)]


def _listening(netns: str, address: str) -> bool:
    res = subprocess.run(
        ns_cmd(netns, ["ss", "-Hltn", "sport", "=", f":{PORT}"]),
        capture_output=True, text=True, timeout=10, check=False,
    )  # fmt: skip
    return f"{address}:{PORT}" in res.stdout


def _popen(netns: str, argv: list[str], seconds: int) -> subprocess.Popen[str]:
    bounded = ["timeout", "-k", "2", str(seconds + GRACE), *argv]
    try:
        return subprocess.Popen(
            ns_cmd(netns, bounded),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise TwinFailure("ip is not installed (run `make twin-deps`)") from None


def run_round(state: TwinState, pairs: list[Pair], rate: float, seconds: int) -> list[str]:
    """One round: a one-off server per receiver, then every client at once; their -J text."""
    ns = {h.server: netns_name(state.tag, h.server) for p in pairs for h in p}
    server_argv = ["iperf3", "-s", "-1", "-p", str(PORT), "-B"]
    servers: list[subprocess.Popen[str]] = []
    clients: list[subprocess.Popen[str]] = []
    try:
        # Started one by one inside the try: a signal between two starts must still stop
        # the servers already running (a list built in one expression would be lost).
        for _, dst in pairs:
            servers.append(_popen(ns[dst.server], [*server_argv, dst.address], seconds))
        for _, dst in pairs:
            wait_until(
                f"iperf3 server on {dst.server} {dst.address}",
                lambda d=dst: _listening(ns[d.server], d.address),  # type: ignore[misc]
                10,
                0.05,
            )
        for src, dst in pairs:
            argv = ["iperf3", "-c", dst.address, "-B", src.address, "-p", str(PORT), "-J"]
            argv += ["-t", str(seconds), "-b", str(int(rate * 1e9)), "--connect-timeout", "3000"]
            clients.append(_popen(ns[src.server], argv, seconds))
        out = []
        for (src, dst), proc in zip(pairs, clients, strict=True):
            text, err = proc.communicate(timeout=seconds + GRACE + 5)
            if not text.strip():
                tail = (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
                raise TwinFailure(f"iperf3 {src.server}:{src.nic} → {dst.server}: {tail}")
            out.append(text)
        return out
    except BaseException:
        # A failure or a signal (cli/signals.py): nothing of this round is wanted, so no
        # waiting for the runs to end (up to 5 s each), they are stopped now.
        for proc in servers + clients:
            _kill(proc)
        _kill_strays(set(ns.values()), {h.address for p in pairs for h in p})
        raise
    finally:
        for proc in servers + clients:
            _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Wait a moment for one iperf3 (a one-off server exits after its test), else kill it."""
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        _kill(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)


def _kill_strays(namespaces: set[str], addresses: set[str]) -> None:
    """SIGKILL every iperf3 (and its ``timeout``) of this round that no Popen object holds.

    A signal that lands inside ``subprocess.Popen`` (between the fork and its return) loses
    the object, not the process: it is found by what it runs, an ``iperf3`` bound
    (``-B``) to one of the round's rail addresses in one of the round's namespaces, where
    nothing but the twin's daemons and these runs lives."""
    wanted = {a.encode() for a in addresses}
    for netns in sorted(namespaces):
        res = subprocess.run(
            ["ip", "netns", "pids", netns], capture_output=True, text=True, timeout=10, check=False
        )
        for pid in res.stdout.split():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue  # it ended meanwhile
            bound = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == b"-B"}
            if b"iperf3" in argv and bound & wanted:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


def _kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the run's whole process group: ``timeout`` and the iperf3 under it (killing
    ``timeout`` alone would leave iperf3 running in the namespace; each run is its own
    session, see :func:`_popen`, so the group is exactly these two)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def traffic(
    directory: Path, out: Path, say: Say, rate: float = RATE_GBPS, seconds: int = SECONDS
) -> list[Path]:
    """Run the sweep on the twin in ``directory``; write its results under ``out``."""
    require_root()
    state = need_state(directory.resolve())
    if state.fabric != "ethernet":
        raise TwinError(
            "traffic needs the RoCE/Ethernet twin (rail addresses in namespaces); the "
            "InfiniBand twin is ibsim's simulated fabric, which carries no data"
        )
    topo = topology_of(state)
    down = set(faulted_wiring(topo, state.faults).down)
    hosts = [h for h in plan_underlay(topo).hosts if h.server not in down]
    rounds = sweep_pairs(hosts)
    runs = sum(map(len, rounds))
    say(
        f"iperf3: {runs} runs over {len(rounds[0]) if rounds else 0} rail(s), {len(rounds)} "
        f"round(s) of {seconds} s, each paced at {rate:g} Gb/s"
    )
    t0 = time.monotonic()
    files: list[tuple[Path, str]] = []
    for pairs in rounds:
        for (src, dst), text in zip(pairs, run_round(state, pairs, rate, seconds), strict=True):
            files.append((out / "iperf3" / f"{src.server}_{src.nic}_to_{dst.server}.json", text))
    spec = "# The spec the twin was built from: `fabric-stack accept --config` this file.\n"
    files.append((out / "spec.yaml", spec + yaml.safe_dump(state.spec, sort_keys=False)))
    written = write_files(files)
    say(f"iperf3: {runs} runs in {time.monotonic() - t0:.1f} s")
    return written


__all__ = ["PORT", "RATE_GBPS", "SECONDS", "run_round", "sweep_pairs", "traffic"]
