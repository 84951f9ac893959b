"""The twin's commands: up, check, collect, fault, down (the CLI is a thin layer over these).

``up`` writes the state file before it creates anything (write-ahead), then
records every process as it starts; ``down`` works from that file alone, so
it is idempotent and cleans up after a crash or a killed ``up``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from fabric_stack.artifacts._base import RenderContext
from fabric_stack.files.outputs import write_files
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import FabricSpec, validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.twin import ops_eth, ops_frr, ops_ib
from fabric_stack.twin.host_side import host_link_report
from fabric_stack.twin.model import PREFIX, Fault, TwinState, Wiring
from fabric_stack.twin.runtime import (
    RUN_ROOT,
    add_namespaces,
    claim_runtime_dir,
    delete_namespaces,
    existing_namespaces,
    load_state,
    need_state,
    netns_name,
    new_token,
    remove_paths,
    require_root,
    runtime_token_matches,
    save_state,
    stop_processes,
    twin_tag,
)
from fabric_stack.twin.wiring import (
    TwinError,
    assign_guids,
    faulted_wiring,
    parse_fault,
    plan_wiring,
)

Say = Callable[[str], None]


def topology_of(state: TwinState) -> FabricTopology:
    """The plan the twin was built from (the pipeline, run again on the recorded spec)."""
    return build_topology(size_fabric(validate_spec(state.spec)))


def up(
    spec: FabricSpec,
    directory: Path,
    say: Say,
    guids: Mapping[str, str] | None = None,
) -> TwinState:
    """Build the twin of ``spec`` in ``directory``; its state when every daemon is up.

    Steps, in this order: refuse a directory that holds a twin; plan the wiring;
    write the state file naming every namespace and path (write-ahead); create
    them; start the daemons and wait for them; mark the state complete.
    """
    require_root()
    directory = directory.resolve()
    old = load_state(directory)
    if old is not None:
        raise TwinError(
            f"{directory}: a twin is already there (state {old.tag}); `fabric-stack twin down "
            f"--dir {directory}` first"
        )
    t0 = time.monotonic()
    topo = build_topology(size_fabric(spec))
    wiring = plan_wiring(topo)
    state = _initial_state(spec, topo, wiring, directory, guids)
    say(
        f"twin {state.tag}: {wiring.fabric}, {len(wiring.devices)} devices, "
        f"{len(wiring.cables)} links → {directory}"
    )
    save_state(directory, state)  # write-ahead: everything below is recorded already
    claim_runtime_dir(state)  # RUNTIME_DIR/token: a twin whose tag collides stops here
    (directory / "logs").mkdir(exist_ok=True)
    if state.fabric == "infiniband":
        state = _up_ib(directory, state, topo, wiring, say)
    else:
        state = ops_eth.up_eth(directory, state, wiring, say)
        state = ops_frr.up_routing(topo, state, say, lambda s: save_state(directory, s))
    total = round(time.monotonic() - t0, 2)
    state = state.model_copy(update={"complete": True, "phases": {**state.phases, "total": total}})
    save_state(directory, state)
    say(f"twin up in {total:.1f} s")
    return state


def _initial_state(
    spec: FabricSpec,
    topo: FabricTopology,
    wiring: Wiring,
    directory: Path,
    guids: Mapping[str, str] | None,
) -> TwinState:
    """The state before anything exists: names of every namespace and path, GUIDs, SMs."""
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    tag = twin_tag(directory)
    ib = wiring.fabric == "infiniband"
    names = [netns_name(tag, "ib")] if ib else [netns_name(tag, d.name) for d in wiring.devices]
    state = TwinState(
        tag=tag,
        token=new_token(),
        fabric=wiring.fabric,
        spec=spec.model_dump(mode="json"),
        created_dir=created,
        paths=("ib", "logs") if ib else ("logs",),
        runtime_dir=str(RUN_ROOT / f"{PREFIX}{tag}"),
        namespaces=tuple(names),
    )
    if not ib:
        return state
    node_guids = assign_guids(wiring, guids)
    ctx = RenderContext.from_topology(topo, guids=node_guids)
    return state.model_copy(
        update={
            "guids": node_guids,
            "sm": {"instances": ops_ib.plan_sms(ctx, node_guids)},
            "rate": ops_ib.rate_note(topo.plan.link_gbps),
        }
    )


def _up_ib(
    directory: Path, state: TwinState, topo: FabricTopology, wiring: Wiring, say: Say
) -> TwinState:
    """The IB twin's namespace, rendered files, ibsim and SMs; SUBNET UP timed."""
    add_namespaces(state.namespaces)
    ctx = RenderContext.from_topology(topo, guids=state.guids)
    ops_ib.render_files(ctx, directory, state)
    if state.rate:
        say(
            f"  note: links run {state.rate['twin']} for the planned {state.rate['planned']} "
            f"(ibsim 0.10 has no {state.rate['lane']} lanes)"
        )
    t1 = time.monotonic()
    state = ops_ib.start_fabric(directory, state, wiring, topo, say)
    return state.model_copy(update={"phases": {"subnet_up": round(time.monotonic() - t1, 2)}})


def check(directory: Path) -> dict[str, Any]:
    """What the running twin says about itself, against the plan (``ok`` says if all agree)."""
    require_root()
    state = need_state(directory.resolve())
    topo = topology_of(state)
    if state.fabric == "infiniband":
        report = ops_ib.check_ib(directory.resolve(), state, topo)
    else:
        running = faulted_wiring(topo, state.faults)
        report = ops_eth.check_eth(state, plan_wiring(topo), running)
        ctx = RenderContext.from_topology(topo)
        report["bgp"] = ops_frr.bgp_report(ctx, state, running.down)
        report["reachability"] = ops_frr.reachability_report(ctx, state)
        report["host_links"] = host_link_report(ctx, state, running.down)
        report["ok"] = (
            report["ok"]
            and report["reachability"]["ok"] == report["reachability"]["pairs"]
            and not report["host_links"]["mismatches"]
        )
    report["faults"] = [{"fault": f.text(), "expects": f.expects} for f in state.faults]
    if state.rate:
        report["rate"] = state.rate
    return report


def collect(directory: Path, out: Path) -> list[Path]:
    """Write what the real tools print, where drift reads it; plus the spec as YAML."""
    require_root()
    state = need_state(directory.resolve())
    topo = topology_of(state)
    if state.fabric == "infiniband":
        files = ops_ib.collect_ib(directory.resolve(), state, topo, out)
    else:
        files = ops_eth.collect_eth(state, faulted_wiring(topo, state.faults), out)
    spec_text = "# The spec the twin was built from: `fabric-stack drift --config` this file.\n"
    files.append((out / "spec.yaml", spec_text + yaml.safe_dump(state.spec, sort_keys=False)))
    # All or nothing (the output layer): a failed collect leaves no half-written OUT.
    return write_files([(p, text) for p, text in files])


def drift_command(state_dir: Path, out: Path) -> str:
    """The drift command line that reads what :func:`collect` wrote."""
    state = need_state(state_dir.resolve())
    base = f"fabric-stack drift --config {out / 'spec.yaml'}"
    if state.fabric == "infiniband":
        base += (
            f" --ibnetdiscover {out / 'ibnetdiscover.txt'} --node-name-map {out / 'node-name-map'}"
        )
    else:
        base += f" --lldp {out / 'lldp'}"
    if (out / "drift-ignore.yaml").exists():
        base += f" --ignore {out / 'drift-ignore.yaml'}"
    return base


def fault(directory: Path, kind: str, args: tuple[str, ...], say: Say) -> Fault:
    """Inject one fault into the running twin and record it in the fault log."""
    require_root()
    directory = directory.resolve()
    state = need_state(directory)
    topo = topology_of(state)
    if kind == "speed" and state.fabric != "infiniband":
        raise TwinError(
            "speed: a veth has one fixed speed; speed faults need the InfiniBand twin (ibsim)"
        )
    current = faulted_wiring(topo, state.faults)
    new_fault = parse_fault(topo, current, kind, args)
    if kind == "speed":
        from fabric_stack.twin.ibnet import fault_rate

        fault_rate(topo.plan.link_gbps, int(new_fault.args[1]))  # a rate the twin can run
    target = faulted_wiring(topo, (*state.faults, new_fault))
    state = _apply(directory, state, topo, current, target)
    state = state.model_copy(update={"faults": (*state.faults, new_fault)})
    save_state(directory, state)
    say(f"injected: {new_fault.text()} (drift should report {new_fault.expects})")
    return new_fault


def clear_faults(directory: Path, say: Say) -> int:
    """Undo every injected fault: the twin carries the plan again."""
    require_root()
    directory = directory.resolve()
    state = need_state(directory)
    if not state.faults:
        say("no faults injected")
        return 0
    topo = topology_of(state)
    current = faulted_wiring(topo, state.faults)
    state = _apply(directory, state, topo, current, plan_wiring(topo))
    count = len(state.faults)
    save_state(directory, state.model_copy(update={"faults": ()}))
    say(f"cleared {count} fault(s): the twin carries the plan again")
    return count


def _apply(
    directory: Path, state: TwinState, topo: FabricTopology, current: Wiring, target: Wiring
) -> TwinState:
    if state.fabric == "infiniband":
        state = ops_ib.stop_fabric(state)
        save_state(directory, state)
        return ops_ib.start_fabric(directory, state, target, topo, lambda _m: None)
    state = ops_eth.reconcile(directory, state, current, target)
    # reconcile restarts lldpd only; switches back from `down` need their FRR again.
    revived = sorted(set(current.down) - set(target.down))
    was = {c.model_dump_json() for c in current.cables}
    touched = {e.device for c in target.cables if c.model_dump_json() not in was
               for e in (c.a, c.b)}  # fmt: skip
    ctx = RenderContext.from_topology(topo)  # once, for both steps
    ops_frr.rewire_routing(ctx, state, touched - set(target.down))
    state = ops_frr.restart_routing(ctx, state, revived, target.down)
    save_state(directory, state)
    return state


def down(directory: Path, say: Say) -> dict[str, int]:
    """Stop every process, delete every namespace and file the twin recorded; idempotent."""
    require_root()
    directory = directory.resolve()
    state = load_state(directory)
    if state is None:
        say(f"{directory}: no twin state; nothing to do")
        return {"processes": 0, "namespaces": 0}
    # Namespaces and the runtime directory only when RUNTIME_DIR/token is this state's
    # token: a twin whose tag collides (6 hex digits) must not take another's down.
    ours = runtime_token_matches(Path(state.runtime_dir), state.token)
    if not ours and any(n in existing_namespaces() for n in state.namespaces):
        say(
            f"{state.runtime_dir}/token is not this twin's: its namespaces "
            f"({state.namespaces[0]}, …) are left alone (delete them with `ip netns delete` "
            "if they are yours)"
        )
    namespaces = state.namespaces if ours else ()
    stopped = stop_processes(state.processes, namespaces, token=state.token)
    deleted = delete_namespaces(namespaces)
    remove_paths(directory, state.paths, state.runtime_dir if ours else "")
    (directory / "twin.json").unlink(missing_ok=True)
    (directory / "twin.json.tmp").unlink(missing_ok=True)
    if state.created_dir:
        with contextlib.suppress(OSError):  # something else was put there: not ours
            directory.rmdir()
    say(f"twin {state.tag} down: {stopped} processes stopped, {deleted} namespaces deleted")
    return {"processes": stopped, "namespaces": deleted}


def fault_log(directory: Path) -> list[Fault]:
    """The injected faults, in order."""
    return list(need_state(directory.resolve()).faults)


__all__ = [
    "check",
    "clear_faults",
    "collect",
    "down",
    "drift_command",
    "fault",
    "fault_log",
    "up",
]
