"""FRR in the Ethernet/RoCE twin: the rendered ``frr/<switch>.conf`` in every switch namespace.

The twin does not write its own routing config: it renders ``fabric-stack render
frr`` (the same function the CLI uses) and starts ``zebra`` and ``bgpd`` in each
leaf/spine/core namespace with that file **unchanged**. Only the daemons'
command-line options are twin-specific (paths, not configuration): ``-N`` the
switch name (a separate instance per namespace), ``-z`` the zserv socket and
``--vty_socket`` in the switch's runtime directory ``<device>/frr`` (owned by
the ``frr`` user the daemons drop to), ``-i`` the PID file.

Before any daemon starts, each file goes through ``vtysh --dryrun -f`` with its exit
status checked (:func:`check_conf`): a line FRR's parser rejects fails ``twin up`` with
that line, as a real switch's ``frr-reload.py`` would refuse the file, instead of the
daemon skipping it at start.

What the NOS would do before FRR (create the leaf-local rail VLAN bridge
``vlan<vid>`` over the leaf's host ports, :func:`fabric_stack.nos.cumulus.vlan_interface`)
the twin does with ``ip``. Hosts get the rendered addresses of
:mod:`fabric_stack.artifacts.hosts`: per rail NIC its address, its own routing
table and ``ip rule from <addr> table <n>``.

Reachability is a real packet per sampled pair: from the source host's
namespace a TCP SYN bound to its rail address goes to the destination's rail
address on a closed port; the destination's kernel answers RST, so
``ConnectionRefused`` proves the round trip (both directions, both hosts'
rules); a timeout or "unreachable" is a failure.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import fabric_stack.artifacts.frr as frr_render
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.nos.cumulus import vlan_interface
from fabric_stack.topology.build import FabricTopology
from fabric_stack.twin.host_side import apply_switch_mtu
from fabric_stack.twin.model import Process, TwinState
from fabric_stack.twin.runtime import alive, netns_name, run, spawn, wait_until
from fabric_stack.twin.wiring import TwinFailure

Say = Callable[[str], None]
FRR_DIR = Path("/usr/lib/frr")
SAMPLE_PAIRS = 16
"""Same-rail host pairs across SUs probed by `twin check` (fixed seed, stated in the output)."""
ASK_AT_ONCE = 8
"""`vtysh` queries and probes `twin check` runs side by side: each mostly waits (on a
daemon's answer, or a failing probe's 2 s timeout), so one after another the checks of
a fault test spent minutes waiting."""
PROBE = (
    "import socket,sys\n"
    "s=socket.socket(); s.settimeout(float(sys.argv[3])); s.bind((sys.argv[1],0))\n"
    "try:\n s.connect((sys.argv[2],9)); print('open')\n"
    "except ConnectionRefusedError: print('ok')\n"
    "except OSError as e: print('fail', e)\n"
)


def _ns(state: TwinState, device: str) -> str:
    return netns_name(state.tag, device)


def _dir(state: TwinState, device: str) -> Path:
    return Path(state.runtime_dir) / device / "frr"


def _own(d: Path) -> None:
    # FRR daemons drop privileges to frr:frr and must create sockets and PID files here.
    import shutil

    d.mkdir(parents=True, exist_ok=True)
    shutil.chown(d, "frr", "frr")
    d.chmod(0o755)


def frr_argv(daemon: str, d: Path, name: str) -> list[str]:
    """Command line of one FRR daemon of one switch (paths only; the config is the rendered one)."""
    return [
        str(FRR_DIR / daemon),
        "-N", name,
        "-f", str(d / "frr.conf"),
        "-i", str(d / f"{daemon}.pid"),
        "-z", str(d / "zserv.api"),
        "--vty_socket", str(d),
    ]  # fmt: skip


def prepare_leaf(ctx: RenderContext, state: TwinState, leaf: str) -> None:
    """The leaf-local rail VLAN bridge the NOS would create (leaf-subnet addressing only)."""
    u = ctx.underlay
    if u.settings.host_addressing != "leaf-subnet":
        return
    lines = []
    for block in u.blocks_of(leaf):
        br = vlan_interface(ctx.spec.rail_vlan(block.rail))
        lines += [f"link add {br} type bridge", f"link set {br} mtu {u.mtu} up"]
    lines += _bridge_members(ctx, leaf)
    if lines:
        run(["ip", "-n", _ns(state, leaf), "-batch", "-"], stdin="\n".join(lines) + "\n")


def _bridge_members(ctx: RenderContext, leaf: str) -> list[str]:
    """``ip -batch`` lines putting each host port of ``leaf`` in its rail's bridge."""
    u = ctx.underlay
    return [
        f"link set {h.leaf_port} master {vlan_interface(ctx.spec.rail_vlan(block.rail))}"
        for block in u.blocks_of(leaf)
        for h in u.hosts_of(leaf)
        if h.rail == block.rail
    ]


def start_frr(ctx: RenderContext, state: TwinState, switches: list[str]) -> list[Process]:
    """zebra then bgpd in each switch's namespace with its rendered frr.conf."""
    confs = {a.path: a.content for a in frr_render.render(ctx)}
    for name in switches:  # every file judged before any daemon starts
        d = _dir(state, name)
        _own(d)
        (d / "frr.conf").write_text(confs[f"frr/{name}.conf"], encoding="utf-8")
        (d / "vtysh.conf").write_text("service integrated-vtysh-config\n", encoding="utf-8")
        check_conf(state, name)
    procs = []
    for name in switches:
        # A switch routes: the NOS has forwarding on; a fresh namespace does not.
        sysctls = ["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"]
        run(["sysctl", "-qw", *sysctls], netns=_ns(state, name))
        if ctx.underlay.switches[name].role == "leaf":
            prepare_leaf(ctx, state, name)
        procs += spawn_daemons(state, name)
    return procs


def check_conf(state: TwinState, name: str) -> None:
    """A switch's frr.conf through FRR's own parser, as a switch's reload would; else fail.

    A daemon started with ``-f`` logs a line it cannot parse and carries on, so a bad
    line would not show in the twin; every reload path of a real switch (Cumulus,
    SONiC, ``systemctl reload frr``) goes through ``frr-reload.py``, which refuses the
    whole file when ``vtysh -m -f`` fails (/usr/lib/frr/frr-reload.py,
    ``Config.load_from_file``). ``vtysh --dryrun -f`` runs the same grammar with no
    daemon, and its exit status is non-zero when any line is rejected: that fails
    ``twin up`` with vtysh's own lines (``line 272: % Unknown command[17]:  mtu 9000``).
    """
    d = _dir(state, name)
    argv = ["vtysh", "--config_dir", str(d), "--dryrun", "-f", str(d / "frr.conf")]
    res = run(argv, timeout=30, check=False)
    if res.returncode == 0:
        return
    said = [ln.strip() for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
    raise TwinFailure(
        f"FRR rejects frr/{name}.conf (`vtysh --dryrun -f`, exit {res.returncode}): "
        + ("; ".join(said[:5]) or "no message")
    )


def spawn_daemons(state: TwinState, name: str) -> list[Process]:
    """zebra, then bgpd once zebra's socket exists, with the frr.conf already in place.

    A socket or PID file left by a stopped instance (a switch that was ``down``) is
    removed first: otherwise the wait below would see the dead zebra's socket and
    start bgpd before the new zebra listens.
    """
    d = _dir(state, name)
    for daemon in ("zebra", "bgpd"):
        (d / f"{daemon}.pid").unlink(missing_ok=True)
    (d / "zserv.api").unlink(missing_ok=True)
    procs = []
    for daemon in ("zebra", "bgpd"):
        if daemon == "bgpd":  # bgpd needs zebra's socket
            wait_until(f"zebra {name}", (d / "zserv.api").exists, 20, 0.05)
        log = d / f"{daemon}.log"
        argv = frr_argv(daemon, d, name)
        ns = _ns(state, name)
        procs.append(spawn(f"{daemon} {name}", argv, netns=ns, log=log, token=state.token))
    return procs


def restart_routing(
    ctx: RenderContext, state: TwinState, revived: list[str], down: tuple[str, ...]
) -> TwinState:
    """FRR again on switches that come back from a ``down`` fault; wait for their sessions.

    ``down`` stops every process of a device (FRR included) but keeps its namespace,
    interfaces, leaf bridges and frr.conf, so only the daemons are started again. The
    wait covers the revived switches' sessions whose peer is not itself still down.
    """
    u = ctx.underlay
    switches = [n for n in revived if n in u.switches]
    if not switches:
        return state
    procs = [p for name in switches for p in spawn_daemons(state, name)]
    state = state.model_copy(update={"processes": (*state.processes, *procs)})

    def peer_up(name: str) -> int:
        return sum(
            1 for _, lk in u.links_of(name)
            if (lk.b_device if lk.a_device == name else lk.a_device) not in down
        )  # fmt: skip

    want = {name: peer_up(name) for name in switches}
    wait_until(
        "BGP re-convergence",
        lambda: all(bgp_sessions(state, n)[1] >= w for n, w in want.items()),
        60 + sum(want.values()) / 10,
        1.0,
    )
    # Sessions up is not routes installed (the CI run where a check right after
    # `fault --clear` found 15 of 16 pairs): wait for the kernels as `up` does.
    wait_routes(ctx, state, 60 + len(u.blocks) / 10, down)
    return state


def rewire_routing(ctx: RenderContext, state: TwinState, touched: set[str]) -> None:
    """Host addressing and leaf bridge membership again where a fault recreated veths.

    A fault (or its clear) that re-plugs a port deletes the veth and makes a new one,
    which drops what was configured on it: the host's rail address, its per-rail routes
    and, on a leaf, the port's membership of the rail bridge. ``touched`` are the devices
    at either end of the recreated cables; every line is applied with ``-force`` because
    most of it still exists ("File exists" is expected and harmless).
    """
    u = ctx.underlay
    address_hosts(ctx, state, sorted({h.server for h in u.hosts} & touched), force=True)
    apply_switch_mtu(ctx, state, touched)  # a re-made veth starts at 1500 on the leaf's end too
    if u.settings.host_addressing != "leaf-subnet":
        return
    for leaf in sorted({b.leaf for b in u.blocks} & touched):
        batch = "\n".join(_bridge_members(ctx, leaf)) + "\n"
        run(["ip", "-force", "-n", _ns(state, leaf), "-batch", "-"], stdin=batch, check=False)


def address_hosts(
    ctx: RenderContext, state: TwinState, hosts: list[str], force: bool = False
) -> None:
    """Rendered host addressing: address, per-rail table and `ip rule` per rail NIC.

    ``force`` applies every line even where some already exist (re-applying after a
    re-plug), without failing on them.
    """
    from fabric_stack.artifacts.hosts import ip_commands

    for server in hosts:
        # The twin's server veths carry RDMA device names (ops_eth.py), not host netdevs.
        batch = "\n".join(ip_commands(ctx, server, str)) + "\n"
        argv = ["ip", *(["-force"] if force else []), "-n", _ns(state, server), "-batch", "-"]
        run(argv, stdin=batch, check=not force)


def bgp_sessions(state: TwinState, switch: str) -> tuple[int, int]:
    """(configured, established) BGP sessions of one switch, from ``show bgp summary json``."""
    d = _dir(state, switch)
    res = run(
        ["vtysh", "--vty_socket", str(d), "--config_dir", str(d),
         "-c", "show bgp ipv4 unicast summary json"],
        netns=_ns(state, switch), timeout=20, check=False,
    )  # fmt: skip
    try:
        peers = json.loads(res.stdout).get("peers", {})
    except ValueError:
        return 0, 0
    return len(peers), sum(1 for p in peers.values() if p.get("state") == "Established")


def bgp_report(ctx: RenderContext, state: TwinState, down: tuple[str, ...]) -> dict[str, Any]:
    """Planned sessions (one per fabric link end) and how many are established."""
    planned = 2 * len(ctx.underlay.links)
    up = [name for name in ctx.underlay.switches if name not in down]
    with ThreadPoolExecutor(max_workers=ASK_AT_ONCE) as pool:
        est = sum(got[1] for got in pool.map(lambda name: bgp_sessions(state, name), up))
    return {"sessions": planned, "established": est}


def sample_pairs(ctx: RenderContext, n: int = SAMPLE_PAIRS) -> list[tuple[Any, Any]]:
    """Same-rail host-port pairs on different SUs (fixed seed: the same sample every check)."""
    hosts = ctx.underlay.hosts
    su = {d.name: d.su for d in ctx.topo.devices if d.role == "server"}
    pairs = [
        (a, b)
        for a in hosts
        for b in hosts
        if a.rail == b.rail and a.plane == b.plane and su[a.server] != su[b.server]
    ]
    if not pairs:  # one SU: same rail, different servers
        pairs = [(a, b) for a in hosts for b in hosts if a.rail == b.rail and a.server != b.server]
    rng = random.Random(16)
    return rng.sample(pairs, min(n, len(pairs)))


def probe(state: TwinState, src: Any, dst: Any, timeout: float = 2.0) -> str:
    """One TCP SYN from ``src``'s rail address to ``dst``'s; 'ok' when the RST came back."""
    res = run(
        ["python3", "-c", PROBE, src.address, dst.address, str(timeout)],
        netns=_ns(state, src.server), timeout=timeout + 10, check=False,
    )  # fmt: skip
    return (res.stdout.strip() or res.stderr.strip()[-80:]) or "fail"


def reachability_report(ctx: RenderContext, state: TwinState) -> dict[str, Any]:
    """Probe the sampled pairs; failures are listed."""
    pairs = sample_pairs(ctx)
    with ThreadPoolExecutor(max_workers=ASK_AT_ONCE) as pool:
        outs = list(pool.map(lambda pair: probe(state, *pair), pairs))
    failed = [
        {"from": f"{a.server}:{a.nic}", "to": f"{b.server}:{b.nic}", "got": out}
        for (a, b), out in zip(pairs, outs, strict=True)
        if out != "ok"
    ]
    return {
        "pairs": len(pairs),
        "ok": len(pairs) - len(failed),
        "sample": f"{len(pairs)} same-rail pairs across SUs, fixed seed; TCP SYN answered by RST",
        "failed": failed[:20],
    }


def wait_bgp(ctx: RenderContext, state: TwinState, timeout: float) -> float:
    """Wait until every planned BGP session is established."""
    want = 2 * len(ctx.underlay.links)
    return wait_until(
        "BGP convergence", lambda: bgp_report(ctx, state, ())["established"] >= want, timeout, 1.0
    )


def wait_routes(
    ctx: RenderContext, state: TwinState, timeout: float, down: tuple[str, ...] = ()
) -> float:
    """Wait until every leaf's kernel holds a route to every other same-plane rail block
    (same-rail only when the spines are rail-grouped).

    Leaves in ``down`` (a fault stopped their routing) are neither polled nor expected
    to be reachable.

    Established sessions are not yet converged routing: zebra installs the learned
    prefixes a moment later, and a probe sent in between is answered with ICMP net
    unreachable by a leaf (seen in CI: 9 of 16 pairs right after "BGP sessions up").
    """
    want: dict[str, set[str]] = {}
    blocks = [b for b in ctx.underlay.blocks if b.leaf not in down]
    # Rail-grouped spines join no two rails: a leaf learns only its own rail's blocks.
    by_rail = ctx.topo.plan.spine_grouping == "rail"
    for leaf in {b.leaf for b in blocks}:
        mine = next(b for b in blocks if b.leaf == leaf)
        want[leaf] = {
            b.subnet
            for b in blocks
            if b.plane == mine.plane and b.leaf != leaf and (not by_rail or b.rail == mine.rail)
        }
    pending = {leaf for leaf, nets in want.items() if nets}

    def done() -> bool:
        for leaf in sorted(pending):
            res = run(["ip", "-4", "route", "show"], netns=_ns(state, leaf), timeout=20)
            have = {line.split()[0] for line in res.stdout.splitlines() if line.strip()}
            if not want[leaf] <= have:
                return False  # poll the rest next round
            pending.discard(leaf)
        return True

    return wait_until("route convergence", done, timeout, 0.5)


def raise_neighbour_limits(links: int, say: Say) -> None:
    """Raise the kernel's neighbour-table limits when the twin needs more entries.

    The IPv4/IPv6 neighbour tables are shared by every namespace (one table,
    entries tagged by netns; ``gc_thresh*`` exist only in the host namespace). BGP
    unnumbered needs an IPv6 link-local entry per link end, so a 1,024-link twin
    overflows the default 1,024 ("ndisc_cache: neighbor table overflow" in dmesg)
    and sessions hang in SYN-SENT. Only ever raised, never lowered; not restored
    by `down` (a larger limit harms nothing and other twins may rely on it).
    """
    want = 8 * links + 4096
    for fam in ("ipv4", "ipv6"):
        base = Path(f"/proc/sys/net/{fam}/neigh/default")
        for i, value in ((1, want // 4), (2, want // 2), (3, want)):
            f = base / f"gc_thresh{i}"
            if int(f.read_text()) < value:
                f.write_text(str(value))
                say(f"  raised net.{fam}.neigh.default.gc_thresh{i} to {value} (shared table)")


def up_routing(
    topo: FabricTopology, state: TwinState, say: Say, save: Callable[[TwinState], None]
) -> TwinState:
    """FRR on every switch, addresses on every host, then wait for BGP (timed)."""
    ctx = RenderContext.from_topology(topo)
    t0 = time.monotonic()
    raise_neighbour_limits(len(ctx.underlay.links) + len(ctx.underlay.hosts), say)
    procs = start_frr(ctx, state, list(ctx.underlay.switches))
    state = state.model_copy(update={"processes": (*state.processes, *procs)})
    save(state)
    servers = sorted({h.server for h in ctx.underlay.hosts})
    address_hosts(ctx, state, servers)
    apply_switch_mtu(ctx, state)  # the leaf end of each host cable, as the NOS sets it
    bad = [p.name for p in procs if not alive(p)]
    if bad:
        raise TwinFailure(
            f"FRR did not stay up: {', '.join(bad[:5])} (logs in {state.runtime_dir})"
        )
    took = wait_bgp(ctx, state, 60 + len(ctx.underlay.links) / 10)
    took += wait_routes(ctx, state, 60 + len(ctx.underlay.blocks) / 10)
    phases = {**state.phases, "bgp": round(time.monotonic() - t0, 2)}
    say(
        f"  FRR: {len(procs)} daemons, {2 * len(ctx.underlay.links)} BGP sessions up ({took:.1f} s)"
    )
    return state.model_copy(update={"phases": phases})
