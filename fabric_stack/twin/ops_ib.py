"""InfiniBand twin: ibsim + real OpenSM (the rendered config) + real infiniband-diags.

Everything runs inside the twin's namespace ``fst-<tag>-ib``: ibsim's sockets
are abstract Unix sockets, which belong to a network namespace, so no other
process on the machine can reach this fabric (and ``IBSIM_SOCKNAME`` names them
after the twin too). Diagnostic tools run with ``libumad2sim`` preloaded and a
working directory inside the twin, because libumad2sim writes a fake sysfs tree
(``sys-<pid>``) into the current directory.

A fault re-renders the net file and restarts ibsim and the SMs: ibsim 0.10's
console can unlink and link ports but cannot change a port's speed or add a
node, so one path (restart) serves every fault kind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from fabric_stack.artifacts import infiniband, opensm
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.naming.nodedesc import mf0_host
from fabric_stack.topology.build import FabricTopology
from fabric_stack.twin import ibnet, ibroutes
from fabric_stack.twin.lfts import Lfts, parse_lfts, set_lft
from fabric_stack.twin.model import Process, TwinState, Wiring
from fabric_stack.twin.runtime import (
    UMAD2SIM,
    alive,
    netns_name,
    run,
    save_state,
    spawn,
    stop_processes,
    wait_until,
)
from fabric_stack.twin.wiring import TwinFailure, assign_guids, plan_wiring

Say = Callable[[str], None]

MAX_SMS = 3
"""SM instances the twin runs at most (ibsim serves 10 clients; diag tools need some)."""


def ib_dirs(directory: Path) -> dict[str, Path]:
    """The twin's InfiniBand paths: rendered files, logs, scratch (libumad2sim's sysfs)."""
    ib = directory / "ib"
    return {"ib": ib, "etc": ib / "etc", "logs": directory / "logs", "work": ib / "work"}


def sim_env(state: TwinState, attach: str | None = None) -> dict[str, str]:
    """Environment of a umad program run against this twin's ibsim (``ibsim-run`` does the same)."""
    env = {"LD_PRELOAD": UMAD2SIM, "IBSIM_SOCKNAME": f"fst-{state.tag}"}
    if attach:
        env["SIM_HOST"] = attach
    return env


def diag(
    state: TwinState, directory: Path, argv: list[str], attach: str, timeout: float = 60.0
) -> str:
    """Run one infiniband-diags tool against the twin; its stdout."""
    ns = netns_name(state.tag, "ib")
    work = ib_dirs(directory)["work"]
    full = ["env", "-C", str(work), *argv]
    return run(full, netns=ns, env=sim_env(state, attach), timeout=timeout).stdout


def plan_sms(
    ctx: RenderContext, guids: dict[str, str], planes: Iterable[int] = (1,)
) -> list[dict[str, Any]]:
    """SM instances of ``planes`` (``twin up``: plane 1, the subnet it models): name,
    rendered priority, master or standby, the node whose port it runs on.

    UFM / OpenSM hosts are cabled in the plan: each SM runs on its manager's HCA
    (``SIM_HOST`` = that HCA, ``guid`` bound in the rendered config). Switch-hosted
    SMs run on port 0 of their planned switch. A plan whose SMs have no cable (none
    planned) falls back to port 0 of the top-tier switches.
    """
    every = opensm.sm_instances(ctx)
    sms = [sm for p in sorted(set(planes)) for sm in [s for s in every if s.plane == p][:MAX_SMS]]
    out = []
    for sm in sms:
        if sm.port:
            guid, node = guids[sm.guid_name], ibnet.node_id(guids[sm.guid_name], False)
        else:
            guid, node = guids[sm.host], ibnet.node_id(guids[sm.host], True)
        out.append(
            {
                "name": sm.name,
                "priority": sm.priority,
                "attach": sm.host,
                "node": node,
                "guid": guid,
                "port": sm.port,
                "plane": sm.plane,
                "master": sm.index == 0,
            }
        )
    return out


def render_files(ctx: RenderContext, directory: Path, state: TwinState) -> None:
    """Write the rendered InfiniBand files and each SM's config with its paths adapted."""
    d = ib_dirs(directory)
    for key in ("etc", "logs", "work"):
        d[key].mkdir(parents=True, exist_ok=True)
    for art in infiniband.render(ctx):
        (d["etc"] / Path(art.path).name).write_text(art.content, encoding="utf-8")
    ufm_partitions(d["etc"])
    for sm in state.sm["instances"]:
        rendered = (d["etc"] / f"opensm-{sm['name']}.conf").read_text(encoding="utf-8")
        conf = ibnet.adapt_opensm_conf(
            rendered, str(d["etc"]), str(d["logs"] / f"opensm-{sm['name']}.log"), str(d["logs"])
        )
        (d["ib"] / f"opensm-{sm['name']}.conf").write_text(conf, encoding="utf-8")


def ufm_partitions(etc: Path) -> None:
    """Do what UFM does with the rendered ``partitions.conf.user_ext``: its own Default
    partition line, then the extension, as ``partitions.conf`` (UFM manual, Partitioning)."""
    ext = etc / "partitions.conf.user_ext"
    if not ext.exists():
        return
    default = "Default=0x7fff, ipoib, defmember=full : ALL, ALL_SWITCHES=full, SELF=full ;\n"
    text = "# twin: what UFM generates (Default partition), then the rendered user_ext\n"
    (etc / "partitions.conf").write_text(text + default + ext.read_text(), encoding="utf-8")


def _log_has(path: Path, offset: int, needle: str) -> bool:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return needle.encode() in fh.read()
    except FileNotFoundError:
        return False


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def start_fabric(
    directory: Path, state: TwinState, wiring: Wiring, topo: FabricTopology, say: Say
) -> TwinState:
    """Write the net file, start ibsim and every SM (master first, then standbys)."""
    d = ib_dirs(directory)
    ns = netns_name(state.tag, "ib")
    plan = topo.plan
    # Rogue devices (a fault) get GUIDs the same way; the plan's GUIDs stay as recorded.
    guids = assign_guids(wiring, state.guids)
    net = ibnet.render_netfile(wiring, guids, plan.link_gbps, plan.switch_model.key)
    (d["ib"] / "net").write_text(net, encoding="utf-8")
    t0 = time.monotonic()
    log = d["logs"] / "ibsim.log"
    offset = _size(log)
    argv = ["ibsim", "-s", "-n", *ibnet.ibsim_limits(wiring), str(d["ib"] / "net")]
    sim = spawn(
        "ibsim",
        argv,
        netns=ns,
        log=log,
        env={"IBSIM_SOCKNAME": f"fst-{state.tag}"},
        token=state.token,
    )
    state = state.model_copy(update={"processes": (*state.processes, sim)})
    save_state(directory, state)
    wait_until(
        "ibsim ready",
        lambda: _ready_or_dead(log, offset, "Network simulator ready", sim),
        20 + len(wiring.devices) / 50,
    )
    say(f"  ibsim: {len(wiring.devices)} devices, {len(wiring.cables)} links ({_took(t0)})")
    for i, sm in enumerate(state.sm["instances"]):
        t1 = time.monotonic()
        master = bool(sm.get("master", i == 0))
        bound = sm_wait(wiring)
        state, needle, tries = _start_sm(directory, state, sm, master, bound)
        role = "master" if master else "standby"
        again = f", {tries} starts" if tries > 1 else ""
        say(
            f"  OpenSM {sm['name']} ({role}, priority {sm['priority']}) on {sm['attach']}: "
            f"{needle} ({_took(t1)}{again})"
        )
    return state


SM_STARTS = 2
"""Starts of one OpenSM before giving up (see :func:`kick`; a restart is the fallback)."""


def kick(procs: Iterable[Process]) -> None:
    """Send SIGUSR1 (OpenSM: reopen the log file) to the twin's OpenSM processes.

    Under ibsim, OpenSM's sweep now and then stops with every thread asleep until
    a signal arrives (seen here: on a fresh 128-GPU fabric most starts stall in
    poll() after "Entering MASTER state"; any handled signal lets it finish the
    sweep at once). libumad2sim emulates the umad device's poll() in user space
    and a wake-up is lost there; with the kernel's umad this does not happen. So
    while the twin waits for OpenSM, and before it queries it, it sends the one
    signal OpenSM handles without side effects on the fabric.
    """
    for p in procs:
        if p.name.startswith("opensm") and alive(p):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p.pid, signal.SIGUSR1)


def sm_wait(wiring: Wiring) -> float:
    """Seconds one OpenSM start may take to SUBNET UP / STANDBY on this wiring.

    Discovery grows with the devices; the routing run with HCAs × switches (ftree's
    tables: measured here at 16,384 GPUs, 16,378 HCAs × 1,280 switches, about 350 s from
    start to SUBNET UP at load average 6–9 on 2 cores, where ``10 + devices / 20`` allowed
    176 s and each of two starts was stopped in the middle of its routing run).
    """
    switches = sum(1 for d in wiring.devices if d.kind == "switch")
    hcas = sum(len(d.hcas) for d in wiring.devices)
    return 10 + len(wiring.devices) / 20 + hcas * switches / 40_000


def _start_sm(
    directory: Path, state: TwinState, sm: dict[str, Any], master: bool, bound: float
) -> tuple[TwinState, str, int]:
    """Start one OpenSM and wait for SUBNET UP (master) or STANDBY; bounded restarts."""
    d = ib_dirs(directory)
    ns = netns_name(state.tag, "ib")
    name = sm["name"]
    cache = d["ib"] / f"cache-{name}"
    cache.mkdir(exist_ok=True)
    env = {**sim_env(state, sm["node"]), "OSM_CACHE_DIR": str(cache)}
    argv = ["env", "-C", str(d["work"]), "opensm", "-F", str(d["ib"] / f"opensm-{name}.conf")]
    needle = "SUBNET UP" if master else "Entering STANDBY state"
    where = d["logs"] / (f"opensm-{name}.log" if master else f"opensm-{name}.out")
    for attempt in range(1, SM_STARTS + 1):
        offset = _size(where)
        out = d["logs"] / f"opensm-{name}.out"
        out_offset = _size(out)
        proc = spawn(f"opensm {name}", argv, netns=ns, log=out, env=env, token=state.token)
        state = state.model_copy(update={"processes": (*state.processes, proc)})
        save_state(directory, state)
        try:
            wait_until(
                f"OpenSM {name}: {needle}",
                lambda p=proc, o=offset, f=out, fo=out_offset: _kick_ready_or_dead(  # type: ignore[misc]
                    where, o, needle, p, f, fo
                ),
                bound,
            )
            return state, needle, attempt
        except TwinFailure:
            if attempt == SM_STARTS or not alive(proc):
                raise
            stop_processes([proc], [], grace=1.0)
            state = state.model_copy(
                update={"processes": tuple(p for p in state.processes if p != proc)}
            )
            save_state(directory, state)
    raise TwinFailure(f"OpenSM {name}: {needle} not reached")  # not reached: loop raises


def _kick_ready_or_dead(
    log: Path, offset: int, needle: str, proc: Process, out: Path, out_offset: int
) -> bool:
    if _ready_or_dead(log, offset, needle, proc):
        return True
    # Only once OpenSM runs its state machine: before its handlers are set, SIGUSR1 kills it.
    if _log_has(out, out_offset, "Entering MASTER state"):
        kick([proc])
    return False


def _ready_or_dead(log: Path, offset: int, needle: str, proc: Process) -> bool:
    if _log_has(log, offset, needle):
        return True
    if not alive(proc):
        raise TwinFailure(f"{proc.name} exited before '{needle}' (see {log})")
    return False


def _took(t0: float) -> str:
    return f"{time.monotonic() - t0:.1f} s"


def stop_fabric(state: TwinState) -> TwinState:
    """Stop ibsim and the SMs (for a restart); the namespace stays.

    One second of grace: OpenSM often lingers on SIGTERM under ibsim (the same lost
    wake-up as :func:`kick`), and neither keeps state worth a clean exit.
    """
    stop_processes(state.processes, [], grace=1.0)
    return state.model_copy(update={"processes": ()})


def rate_note(plan_gbps: int) -> dict[str, str]:
    """Planned lane vs the lane the twin runs (empty when ibsim runs the planned one)."""
    planned = ibnet.planned_rate(plan_gbps)
    twin = ibnet.twin_rate(planned)
    if twin == planned:
        return {}
    return {"planned": planned.text, "twin": twin.text, "lane": planned.lane, "as": twin.lane}


# --------------------------------------------------------------------------- check / collect


def check_ib(directory: Path, state: TwinState, topo: FabricTopology) -> dict[str, Any]:
    """SM state, routing engine used, LFT reachability and hop counts of the running twin."""
    d = ib_dirs(directory)
    sms = state.sm["instances"]
    planned_engine = topo.plan.spec.infiniband.routing_engine
    log_text = (d["logs"] / f"opensm-{sms[0]['name']}.log").read_text(errors="replace")
    routing = ibnet.routing_used(log_text, planned_engine)
    probe = _probe_node(state, topo)
    kick(state.processes)
    text = diag(state, directory, ["ibnetdiscover"], probe, discovery_wait(state))
    fab = ibnet.parse_discover(text)
    sm_rows = []
    for i, sm in enumerate(sms):
        guid = f"{int(sm['guid'], 16):016x}"
        lid = fab.lid.get(guid)
        kick(state.processes)  # the discovery before took long at 16k GPUs: wake it again
        out = _sminfo(state, directory, lid, probe) if lid else ""
        info = ibnet.parse_sminfo(out) or {"state": "NO ANSWER"}
        want = "MASTER" if i == 0 else "STANDBY"
        sm_rows.append(
            {
                "name": sm["name"],
                "attach": sm["attach"],
                "planned_priority": sm["priority"],
                **info,
                "expected_state": want,
                "ok": info.get("state") == want and info.get("priority") == sm["priority"],
            }
        )
    # -n: no destination names (the check has ibnetdiscover's): 1.8 GB → ~0.3 GB of text at
    # 16,384 GPUs. Its wait: measured 234–258 s at 16k under load 8–20 (bound ~1,800 s).
    lfts = parse_lfts(diag(state, directory, ["dump_fts", "-n"], probe, 4 * discovery_wait(state)))
    traced = trace_missing(state, directory, probe, fab, lfts)
    reachability = ibroutes.verify_routes(fab, lfts, topo.plan.tiers)
    if traced:
        reachability["method"] += (
            f"; {len(traced)} destination LID(s) dump_fts does not print traced with "
            "ibtracert from every leaf"
        )
    hcas = {k for k, v in fab.kind.items() if v == "Ca"}
    links = compare_links(fab, plan_wiring(topo))
    return {
        "fabric": "infiniband",
        "sm": sm_rows,
        "routing": routing,
        "reachability": reachability,
        "nodes": {"switches": len(fab.kind) - len(hcas), "hcas": len(hcas)},
        "links": links,
        "ok": bool(routing["ok"])
        and all(r["ok"] for r in sm_rows)
        and bool(reachability["all"])
        and links["planned"] == links["agree"] == links["seen"],
    }


def discovery_wait(state: TwinState) -> float:
    """Seconds a whole-fabric diagnostic (``ibnetdiscover``, ``iblinkinfo``) may take: 60 s
    plus 1 s per 50 nodes. Measured: ``ibnetdiscover`` 0.8 s at 2,048 GPUs, 46.6 s (175 s
    next to a ``dump_fts``) at 16,384 GPUs, ~19,700 nodes → a 454 s bound; the fixed 60 s
    stopped ``twin collect`` there."""
    return 60 + len(state.guids) / 50


def _sminfo(state: TwinState, directory: Path, lid: int, probe: str) -> str:
    """``sminfo LID`` output, or "" when the SM does not answer (a failing check row, not a
    crash: seen on a 16,384-GPU twin whose SM had been restarted)."""
    try:
        return diag(state, directory, ["sminfo", str(lid)], probe, 20)
    except TwinFailure:
        return ""


def trace_missing(
    state: TwinState,
    directory: Path,
    probe: str,
    fab: ibnet.Fabric,
    lfts: Lfts,
) -> list[int]:
    """Fill the LFT entries ``dump_fts`` leaves out with ``ibtracert`` paths (one per leaf).

    Bounded: at most 4 such LIDs (one is the known case); more is reported as a failure
    of the walk, not traced.
    """
    missing = ibroutes.missing_destinations(fab, lfts)
    if not missing or len(missing) > 4:
        return []
    by_leaf: dict[str, str] = {}
    for g, kind in fab.kind.items():
        if kind == "Ca" and (g, 1) in fab.peer:
            by_leaf.setdefault(fab.peer[(g, 1)][0], g)
    for dst in missing:
        for src in by_leaf.values():
            if fab.lid.get(src) == dst:
                continue
            text = diag(state, directory, ["ibtracert", str(fab.lid[src]), str(dst)], probe, 30)
            for sw, port in ibnet.parse_tracert(text):
                set_lft(lfts, sw, dst, port)
    return missing


def compare_links(fab: ibnet.Fabric, planned: Wiring) -> dict[str, Any]:
    """Cables ibnetdiscover saw against the plan's, by NodeDescription and port."""

    def end_name(guid: str, port: int) -> str:
        desc = fab.desc.get(guid, guid)
        if fab.kind.get(guid) == "Switch":
            return f"{mf0_host(desc) or desc}:{port}"
        return desc.replace(" ", ":", 1)

    seen = {frozenset((end_name(g, p), end_name(rg, rp))) for (g, p), (rg, rp) in fab.peer.items()}
    kinds = {d.name: d.kind for d in planned.devices}

    def plan_end(device: str, port: str, number: int) -> str:
        return f"{device}:{number}" if kinds.get(device) == "switch" else f"{device}:{port}"

    want = {
        frozenset(
            (plan_end(c.a.device, c.a.port, c.a.number), plan_end(c.b.device, c.b.port, c.b.number))
        )
        for c in planned.cables
    }
    odd = sorted(" — ".join(sorted(k)) for k in seen ^ want)
    return {"planned": len(want), "seen": len(seen), "agree": len(want & seen), "differ": odd[:20]}


def _probe_node(state: TwinState, topo: FabricTopology) -> str:
    """Where diagnostic tools attach: the first leaf switch (never an SM's port)."""
    leaf = next(s.name for s in topo.switches("leaf"))
    return ibnet.node_id(state.guids[leaf], True)


COLLECT_TOOLS: tuple[tuple[str, list[str]], ...] = (
    ("ibnetdiscover.txt", ["ibnetdiscover"]),
    ("iblinkinfo.txt", ["iblinkinfo"]),
    ("ibnetdiscover-p.txt", ["ibnetdiscover", "-p"]),
)
"""Files ``twin collect`` writes on an IB twin, and the infiniband-diags command of each."""


def collect_ib(
    directory: Path, state: TwinState, topo: FabricTopology, out: Path
) -> list[tuple[Path, str]]:
    """What drift reads on a real site: ``ibnetdiscover``, ``iblinkinfo`` and
    ``ibnetdiscover -p`` output (the same fabric, three readers) and the node-name-map."""
    probe = _probe_node(state, topo)
    nmap = (ib_dirs(directory)["etc"] / "ib-node-name-map").read_text(encoding="utf-8")
    wait = discovery_wait(state)
    files = [
        (out / name, diag(state, directory, argv, probe, wait)) for name, argv in COLLECT_TOOLS
    ]
    files.append((out / "node-name-map", nmap))
    if state.rate:
        files.append((out / "drift-ignore.yaml", rate_ignore(state.rate)))
    return files


def rate_ignore(rate: dict[str, str]) -> str:
    """A drift ignore file saying the twin's lanes stand for the planned ones."""
    head = (
        f"# Written by `fabric-stack twin collect`. The twin runs {rate['twin']} links where the\n"
        f"# plan has {rate['planned']}: ibsim 0.10 (Debian 12) has no {rate['lane']} lanes. This\n"
        f"# file tells drift to read {rate['as']} as {rate['lane']}; any other rate (a speed\n"
        "# fault) is still a finding. A real fabric needs no such file.\n"
    )
    return head + yaml.safe_dump({"rates": [{"lane": rate["as"], "means": rate["lane"]}]})
