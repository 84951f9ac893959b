"""Ethernet/RoCE twin: a namespace per device, a veth pair per cable, lldpd in every namespace.

Interface names are per namespace, so both ends of a veth carry the plan's port
names (``swp1s0`` on the leaf, ``mlx5_0`` on the server: the plan names a
server's RDMA port by its RDMA device; a real host's netdev differs and drift
maps it with ``--mac-table``). Each pair is created straight into its two
namespaces (``ip link add … netns A type veth peer … netns B``), so nothing the
twin makes ever sits in the host's namespace. The plan has no per-port
addresses (compute links are unnumbered), so none are set.

lldpd runs per namespace with the device's hostname, a 1 s tx-interval and the
interface name as port id (``portidsubtype ifname``: what drift matches on
switches and servers alike). Its socket, PID file and config live in the
runtime directory ``/run/fst-<tag>/<device>/``: ``lldpcli`` is setuid
``_lldpd`` and must reach them.

Faults change the live twin: the target wiring is computed (pure) and
:func:`reconcile` deletes the veths that are not in it, creates the ones that
are new, stops lldpd on devices that went down and starts it where needed.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from fabric_stack.adapters.discovery.lldp import parse_lldpd
from fabric_stack.twin.model import Cable, Process, TwinState, Wiring
from fabric_stack.twin.runtime import (
    add_namespaces,
    alive,
    delete_namespaces,
    netns_name,
    ns_cmd,
    run,
    save_state,
    start_ticks,
    stop_processes,
    wait_until,
)
from fabric_stack.twin.wiring import TwinFailure

Say = Callable[[str], None]


def device_dir(state: TwinState, device: str) -> Path:
    """The runtime directory of one device's lldpd."""
    return Path(state.runtime_dir) / device


def _ns(state: TwinState, device: str) -> str:
    return netns_name(state.tag, device)


def create_cables(state: TwinState, cables: Iterable[Cable]) -> int:
    """Create one veth pair per cable, each end named and placed as the plan says; set them up."""
    lines = []
    ups: dict[str, list[str]] = defaultdict(list)
    for c in cables:
        na, nb = _ns(state, c.a.device), _ns(state, c.b.device)
        lines.append(
            f"link add name {c.a.port} netns {na} type veth peer name {c.b.port} netns {nb}"
        )
        ups[na].append(c.a.port)
        ups[nb].append(c.b.port)
    if not lines:
        return 0
    run(["ip", "-batch", "-"], stdin="\n".join(lines) + "\n", timeout=60 + len(lines) / 20)
    for ns, ports in ups.items():
        batch = "".join(f"link set dev {p} up\n" for p in ports)
        run(["ip", "-n", ns, "-batch", "-"], stdin=batch, timeout=30)
    return len(lines)


def delete_cables(state: TwinState, cables: Iterable[Cable]) -> None:
    """Delete the veth of each cable (its peer goes with it); missing ones are fine."""
    by_ns: dict[str, list[str]] = defaultdict(list)
    for c in cables:
        by_ns[_ns(state, c.a.device)].append(c.a.port)
    for ns, ports in by_ns.items():
        batch = "".join(f"link del dev {p}\n" for p in ports)
        run(["ip", "-force", "-n", ns, "-batch", "-"], stdin=batch, timeout=30, check=False)


def lldpd_conf(hostname: str) -> str:
    """lldpd configuration of one device (read with ``lldpd -O``)."""
    return (
        f"configure system hostname {hostname}\n"
        "configure lldp tx-interval 1\n"
        "configure lldp portidsubtype ifname\n"
    )


def start_lldpds(state: TwinState, devices: list[str]) -> list[Process]:
    """Start lldpd inside each device's namespace; their monitor processes as recorded.

    The launches run side by side (lldpd daemonizes, so each launcher exits at
    once) and are bounded by one timeout; then each PID file is read.
    """
    launches = []
    for device in devices:
        d = device_dir(state, device)
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o755)
        conf = d / "lldpd.conf"
        conf.write_text(lldpd_conf(device), encoding="utf-8")
        conf.chmod(0o644)
        (d / "lldpd.pid").unlink(missing_ok=True)
        argv = ["lldpd", "-O", str(conf), "-u", str(d / "lldpd.socket"), "-p", str(d / "lldpd.pid")]
        launches.append(
            subprocess.Popen(
                ns_cmd(_ns(state, device), [*argv, "-I", "*,!lo"]),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    deadline = time.monotonic() + 30 + len(devices) / 10
    for device, proc in zip(devices, launches, strict=True):
        try:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            raise TwinFailure(f"lldpd on {device} did not start in time") from None
        if proc.returncode != 0:
            raise TwinFailure(f"lldpd on {device} failed: {err.decode(errors='replace')[-200:]}")
    pidfiles = {device: device_dir(state, device) / "lldpd.pid" for device in devices}
    for device, pidfile in pidfiles.items():
        wait_until(f"lldpd on {device}", lambda f=pidfile: _pid_in(f), 10, 0.05)  # type: ignore[misc]
    resume_lldpds(state, devices)
    out = []
    for device, pidfile in pidfiles.items():
        pid = int(pidfile.read_text().strip())
        ticks = start_ticks(pid)
        if ticks is None:  # 0 is refused by the state check: never record a guess
            raise TwinFailure(f"lldpd on {device} exited right after it started")
        out.append(
            Process(
                name=f"lldpd {device}",
                pid=pid,
                start_ticks=ticks,
                netns=_ns(state, device),
                command="lldpd",
            )
        )
    return out


def resume_lldpds(state: TwinState, devices: list[str], attempts: int = 5) -> None:
    """Apply each lldpd's configuration and ``resume`` it ourselves, checking the result.

    lldpd starts paused and runs ``lldpcli -c <conf> resume`` to configure and unpause
    itself, but it does not check that child's exit status: when it fails (seen under
    load), the daemon stays paused, sends nothing, and its neighbours never see it.
    SONiC works around the same bug (sonic-buildimage
    dockers/docker-lldp/waitfor_lldp_ready.sh). Applying the same file again is
    idempotent, so every device gets it, in parallel, retried until it succeeds.
    """
    pending = list(devices)
    failed: dict[str, str] = {}
    for attempt in range(attempts):
        failed = {}
        for at in range(0, len(pending), 64):  # bounded: at most 64 lldpcli at once
            failed.update(_lldpcli_resume(state, pending[at : at + 64]))
        pending = sorted(failed)
        if not pending:
            return
        time.sleep(0.5 * (attempt + 1))
    first = pending[0]
    raise TwinFailure(
        f"lldpd on {first} (and {len(pending) - 1} more) could not be configured: {failed[first]}"
    )


def _lldpcli_resume(state: TwinState, devices: list[str]) -> dict[str, str]:
    """Run ``lldpcli -c <conf> resume`` for each device side by side; {device: error}."""
    launches = {
        dev: subprocess.Popen(
            [
                "lldpcli",
                "-u",
                str(device_dir(state, dev) / "lldpd.socket"),
                "-c",
                str(device_dir(state, dev) / "lldpd.conf"),
                "resume",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for dev in devices
    }
    failed: dict[str, str] = {}
    for dev, proc in launches.items():
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            err = b"lldpcli timed out"
        if proc.returncode != 0:
            failed[dev] = err.decode(errors="replace").strip()[-200:] or f"exit {proc.returncode}"
    return failed


def _pid_in(pidfile: Path) -> bool:
    try:
        return pidfile.read_text().strip().isdigit()
    except FileNotFoundError:
        return False


def stop_device(state: TwinState, device: str) -> TwinState:
    """Stop every process in one device's namespace; drop them from the state."""
    mine = [p for p in state.processes if p.netns == _ns(state, device)]
    stop_processes(mine, [_ns(state, device)], grace=2.0)
    return state.model_copy(
        update={"processes": tuple(p for p in state.processes if p not in mine)}
    )


def lldp_doc(state: TwinState, device: str) -> dict[str, Any]:
    """``lldpctl -f json0`` of one device, parsed."""
    sock = device_dir(state, device) / "lldpd.socket"
    res = run(["lldpctl", "-u", str(sock), "-f", "json0"], timeout=20)
    try:
        doc: dict[str, Any] = json.loads(res.stdout)
    except ValueError:
        raise TwinFailure(f"lldpctl on {device} printed no JSON") from None
    return doc


def expected_neighbours(wiring: Wiring) -> dict[str, dict[str, tuple[str, str]]]:
    """Per device, per local port: the (device, port) lldpd should report there."""
    down = set(wiring.down)
    out: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for c in wiring.cables:
        if c.a.device in down or c.b.device in down:
            continue
        out[c.a.device][c.a.port] = (c.b.device, c.b.port)
        out[c.b.device][c.b.port] = (c.a.device, c.a.port)
    return out


def observed_neighbours(state: TwinState, device: str) -> dict[str, tuple[str, str]]:
    """Per local port: the (chassis name, port id) lldpd reports, via the drift LLDP reader."""
    return {port: peer for port, peers in _observed_peers(state, device).items() for peer in peers}


def _observed_peers(state: TwinState, device: str) -> dict[str, set[tuple[str, str]]]:
    """Per local port: every (chassis name, port id) lldpd reports there.

    A port can list two neighbours for a while: when a fault deletes a veth and makes a
    new one with the same name at once, lldpd may keep the old peer until its TTL runs
    out, so a collect right after the fault would report both cables (a stale link).
    """
    doc = lldp_doc(state, device)
    peers: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for lk in parse_lldpd(doc, device, Path(f"{device}.json")):
        peers[lk.a.port].add((lk.b.device, lk.b.port))
    return peers


def wait_converged(state: TwinState, wiring: Wiring, timeout: float) -> float:
    """Wait until every device's lldpd reports every neighbour the wiring gives it."""
    want = expected_neighbours(wiring)
    pending = {d for d in want if d not in wiring.down}

    last: list[str] = []

    def done() -> bool:
        for dev in sorted(pending):
            # Exactly one neighbour per port, the wired one (stale peers must have expired).
            seen = _observed_peers(state, dev)
            wanted = {port: {peer} for port, peer in want[dev].items()}
            if seen == wanted:
                pending.discard(dev)
            else:
                last[:] = _mismatches(dev, wanted, seen)
                return False  # poll the rest next round; one slow device blocks anyway
        return True

    try:
        return wait_until("LLDP convergence", done, timeout, 0.5)
    except TwinFailure as exc:
        # Name the ports that never agreed: "not reached" alone cannot be diagnosed.
        raise TwinFailure(
            f"{exc}; {len(pending)} device(s) pending, e.g. {'; '.join(last)}"
        ) from None


def _mismatches(
    dev: str, wanted: dict[str, set[tuple[str, str]]], seen: dict[str, set[tuple[str, str]]]
) -> list[str]:
    """Up to three ``dev port: want A, seen B`` lines, for the convergence error."""
    out = []
    for port in sorted(set(wanted) | set(seen)):
        w, s = wanted.get(port, set()), seen.get(port, set())
        if w != s:
            want_s = ", ".join(f"{d} {p}" for d, p in sorted(w)) or "nothing"
            seen_s = ", ".join(f"{d} {p}" for d, p in sorted(s)) or "nothing"
            out.append(f"{dev} {port}: want {want_s}, seen {seen_s}")
    return out[:3]


def up_eth(directory: Path, state: TwinState, wiring: Wiring, say: Say) -> TwinState:
    """Namespaces, veths, lldpd everywhere; wait for LLDP to converge. Times each phase."""
    devices = [d.name for d in wiring.devices]
    t0 = time.monotonic()
    add_namespaces(state.namespaces)
    n = create_cables(state, wiring.cables)
    state = _phase(state, "links", t0)
    say(f"  namespaces: {len(devices)}, veth pairs: {n} ({state.phases['links']:.1f} s)")
    t1 = time.monotonic()
    # Between the launch and the PID files, `down` finds the daemons by namespace.
    started = start_lldpds(state, devices)
    state = state.model_copy(update={"processes": (*state.processes, *started)})
    save_state(directory, state)
    state = _phase(state, "daemons", t1)
    say(f"  lldpd: {len(devices)} daemons ({state.phases['daemons']:.1f} s)")
    t2 = time.monotonic()
    wait_converged(state, wiring, 60 + len(devices))
    state = _phase(state, "converged", t2)
    say(f"  LLDP converged: every planned neighbour seen ({state.phases['converged']:.1f} s)")
    return state


def _phase(state: TwinState, name: str, t0: float) -> TwinState:
    return state.model_copy(
        update={"phases": {**state.phases, name: round(time.monotonic() - t0, 2)}}
    )


def reconcile(directory: Path, state: TwinState, old: Wiring, new: Wiring) -> TwinState:
    """Make the running twin carry ``new`` instead of ``old`` (see the module docstring)."""
    old_keys = {c.model_dump_json(): c for c in old.cables}
    new_keys = {c.model_dump_json(): c for c in new.cables}
    gone = [c for k, c in old_keys.items() if k not in new_keys]
    added = [c for k, c in new_keys.items() if k not in old_keys]
    new_devices = [d.name for d in new.devices if old.device(d.name) is None]
    removed_devices = [d.name for d in old.devices if new.device(d.name) is None]
    if new_devices:
        names = tuple(_ns(state, d) for d in new_devices)
        state = state.model_copy(update={"namespaces": (*state.namespaces, *names)})
        save_state(directory, state)  # write-ahead: recorded before they exist
        add_namespaces(names)
    delete_cables(state, gone)
    for dev in removed_devices:
        state = stop_device(state, dev)
    delete_namespaces(_ns(state, d) for d in removed_devices)
    create_cables(state, added)
    for dev in set(new.down) - set(old.down):
        state = stop_device(state, dev)
    started = start_lldpds(state, [*new_devices, *sorted(set(old.down) - set(new.down))])
    state = state.model_copy(update={"processes": (*state.processes, *started)})
    save_state(directory, state)
    wait_converged(state, new, 30 + len(new.devices) / 4)
    return state


# --------------------------------------------------------------------------- check / collect


def check_eth(state: TwinState, planned: Wiring, running: Wiring) -> dict[str, Any]:
    """LLDP neighbours of every port against the plan."""
    want = expected_neighbours(planned)
    ports = agree = 0
    wrong: list[dict[str, Any]] = []
    for dev in sorted({d.name for d in running.devices} | set(want)):
        expected = want.get(dev, {})
        try:
            seen = observed_neighbours(state, dev) if dev not in running.down else {}
        except TwinFailure:
            seen = {}
        for port in sorted(set(expected) | set(seen)):
            ports += port in expected
            if port in expected and seen.get(port) == expected[port]:
                agree += 1
                continue
            wrong.append(
                {
                    "device": dev,
                    "port": port,
                    "expected": ":".join(expected[port]) if port in expected else None,
                    "seen": ":".join(seen[port]) if port in seen else None,
                }
            )
    daemons = sum(1 for p in state.processes if alive(p))
    return {
        "fabric": "ethernet",
        "lldp": {"ports": ports, "agree": agree, "disagree": wrong[:50], "daemons": daemons},
        "ok": not wrong and ports == agree,
    }


def collect_eth(state: TwinState, running: Wiring, out: Path) -> list[tuple[Path, str]]:
    """``OUT/lldp/<hostname>.json`` (``lldpctl -f json0``) for every device whose lldpd runs."""
    files: list[tuple[Path, str]] = []
    for d in running.devices:
        if d.name in running.down:
            continue  # a powered-off device answers nothing, as on a real site
        res = run(
            ["lldpctl", "-u", str(device_dir(state, d.name) / "lldpd.socket"), "-f", "json0"],
            timeout=20,
        )
        files.append((out / "lldp" / f"{d.name}.json", res.stdout))
    files.append((out / "drift-ignore.yaml", veth_ignore()))
    return files


def veth_ignore() -> str:
    """A drift ignore file: the veth's fixed 10G MAU that lldpd advertises is not a link speed."""
    head = (
        "# Written by `fabric-stack twin collect`. lldpd advertises each port's MAU type from\n"
        "# ethtool; a veth always reports 10GbaseT, whatever the plan's speed. This file tells\n"
        "# drift not to read that as the link speed. A real fabric needs no such file.\n"
    )
    return head + yaml.safe_dump({"rates": [{"gbps": 10, "means": "unknown"}]})
