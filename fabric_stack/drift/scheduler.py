"""Drift for the scheduler's view: a live Slurm topology file or Kubernetes node list vs the plan.

A scheduler places jobs by what it is told, not by what is cabled: a server listed under
the wrong SU in ``topology.conf``, or a node whose ``network.topology.nvidia.com/leaf``
label names another SU, gets jobs placed as if it sat elsewhere on the fabric.
:func:`compare_scheduler` compares a :class:`~fabric_stack.drift.model.SchedulerObservation`
with the plan's :func:`~fabric_stack.topology.scheduler.scheduler_view` and reports, in the
findings of cabling drift:

* Slurm: a server under the wrong switch (``wrong_peer``, cause ``wrong_switch``), under
  two, or under none (``missing_device``); a planned switch that is not in the file
  (``missing_device``); a spine or core whose ``Switches=`` differ (``attribute_changed``);
  a node or switch the plan does not have (``unexpected_device``). A switch of the file
  whose name the plan does not use is matched to the SU whose servers it mostly holds (a
  hand-written file may name SUs its own way).
* Kubernetes: per planned server, a missing node (``missing_device``) or labels missing or
  different (``attribute_changed``, one finding per node, one change per label; a wrong
  leaf label is the node placed under the wrong SU). Nodes the plan does not have are
  reported only when they carry topology labels (control-plane and CPU nodes do not).

Pure: the readers in :mod:`fabric_stack.adapters.discovery` did the I/O.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from fabric_stack.drift.ignore import IgnoreRules
from fabric_stack.drift.model import (
    DriftReport,
    Finding,
    FindingKind,
    SchedulerObservation,
    Side,
    Snapshot,
    SourceInfo,
    summarize,
)
from fabric_stack.text.hostlist import compress
from fabric_stack.topology.model import FabricTopology
from fabric_stack.topology.scheduler import SchedulerView, scheduler_view
from fabric_stack.topology.scheduler_labels import OWN, TOPOGRAPH, all_node_labels

_REGENERATE = {
    "slurm-topology": "fabric-stack render slurm",
    "k8s-nodes": "fabric-stack render k8s-topology",
}


class _Findings:
    """Findings of one source, ids as cabling drift makes them (source, kind, identity)."""

    def __init__(self, snap: Snapshot, accepted: Iterable[str]) -> None:
        self.source = snap.source
        self.accepted = set(accepted)
        self.out: list[Finding] = []

    def add(
        self,
        kind: FindingKind,
        identity: list[str],
        summary: str,
        fix: str,
        *,
        expected: Side | None = None,
        actual: Side | None = None,
        switch: str = "",
        su: int = 0,
        cause: str = "",
        changes: list[str] | None = None,
    ) -> None:
        digest = hashlib.sha1(
            "\n".join([self.source, kind, *sorted(identity)]).encode(), usedforsecurity=False
        ).hexdigest()[:10]
        fid = f"{kind}:{digest}"
        if fid in self.accepted:
            return
        self.out.append(
            Finding(
                id=fid,
                kind=kind,
                cause=cause,
                source=self.source,
                switch=switch,
                su=su,
                summary=summary,
                fix=fix,
                expected=[expected] if expected else [],
                actual=[actual] if actual else [],
                changes=changes or [],
            )
        )


def _side(device: str, parent: str, where: str) -> Side:
    return Side(a_device=device, b_device=parent, where=where)


def _map_switches(view: SchedulerView, obs: SchedulerObservation) -> dict[str, str]:
    """Observed level-0 switch → the planned SU switch it stands for, one to one: by name,
    else the switch holding most of an SU's servers (a hand-written file may name SUs its
    own way). A second switch holding some of an SU's servers stands for nothing: Slurm
    then sees the SU split, and each of those servers is under the wrong switch."""
    su_of = {p.name: f"su{p.su}" for p in view.servers}
    planned = {s.name for s in view.switches}
    out: dict[str, str] = {}
    taken: set[str] = set()
    for sw in obs.switches.values():
        if sw.nodes and sw.name in planned:
            out[sw.name] = sw.name
            taken.add(sw.name)
    best: dict[str, tuple[int, str]] = {}
    for sw in obs.switches.values():
        if not sw.nodes or sw.name in out:
            continue
        votes = Counter(su_of[n] for n in sw.nodes if n in su_of)
        for su, n in votes.items():
            if su not in taken and (su not in best or n > best[su][0]):
                best[su] = (n, sw.name)
    for su, (_, name) in sorted(best.items()):
        if name not in out:
            out[name] = su
    return out


def _slurm_nodes(view: SchedulerView, obs: SchedulerObservation, f: _Findings) -> None:
    """Each planned server under exactly its SU; nodes the plan does not have."""
    mapped = _map_switches(view, obs)
    under: dict[str, list[str]] = {}
    for sw in obs.switches.values():
        for node in sw.nodes:
            under.setdefault(node, []).append(sw.name)
    fix_tail = f" (or regenerate it: {_REGENERATE['slurm-topology']})"
    for place in view.servers:
        want = f"su{place.su}"
        got = under.get(place.name, [])
        exp = _side(place.name, want, "plan")
        if not got:
            f.add(
                "missing_device",
                [place.name],
                f"{place.name} is under no switch of the topology file; the plan has it in "
                f"SU {place.su} ({want})",
                f"add {place.name} to the Nodes= of the switch for SU {place.su}{fix_tail}",
                expected=exp,
                switch=want,
                su=place.su,
            )
            continue
        wrong = [s for s in got if mapped.get(s) != want]
        if not wrong and len(got) == 1:
            continue
        where = ", ".join(obs.switches[s].where for s in got)
        names = ", ".join(f"SwitchName={s}" for s in got)
        target = next((o for o, p in mapped.items() if p == want), want)
        f.add(
            "wrong_peer",
            [place.name, *got],
            f"{place.name} is under {names} in the topology file; the plan has it in SU "
            f"{place.su} ({want}): Slurm places its jobs as if it sat there",
            f"list {place.name} only under SwitchName={target}{fix_tail}",
            expected=exp,
            actual=_side(place.name, ",".join(got), where),
            switch=want,
            su=place.su,
            cause="wrong_switch",
        )
    planned = {p.name for p in view.servers}
    for node in sorted(set(under) - planned):
        sw = obs.switches[under[node][0]]
        f.add(
            "unexpected_device",
            [node],
            f"{node} is in the topology file (SwitchName={sw.name}) but not in the plan",
            f"remove {node} from SwitchName={sw.name}, or add the server to the plan",
            actual=_side(node, sw.name, sw.where),
            switch=sw.name,
        )


def _slurm_switches(view: SchedulerView, obs: SchedulerObservation, f: _Findings) -> None:
    """Planned switches present with their children; switches the plan does not have."""
    mapped = _map_switches(view, obs)
    reverse = {p: o for o, p in mapped.items()}
    for sw in view.switches:
        seen = obs.switches.get(sw.name)
        if seen is None:
            if sw.level == 0 and sw.name in mapped.values():
                continue  # present under the site's own name
            f.add(
                "missing_device",
                [sw.name],
                f"switch {sw.name} (Slurm level {sw.level}, {sw.role}) is not in the topology file",
                f"add its SwitchName line ({_REGENERATE['slurm-topology']} writes it)",
                expected=_side(sw.name, "", "plan"),
                switch=sw.name,
                su=sw.su,
            )
            continue
        if sw.level == 0:
            continue
        got = {mapped.get(c, c) for c in seen.switches}
        if got != set(sw.switches):
            spelled = compress(reverse.get(c, c) for c in sw.switches)
            f.add(
                "attribute_changed",
                [sw.name, "switches"],
                f"switch {sw.name}: Switches= differ from the plan's cabling",
                f"set Switches={spelled} on SwitchName={sw.name}",
                expected=_side(sw.name, compress(sw.switches), "plan"),
                actual=_side(sw.name, compress(seen.switches), seen.where),
                switch=sw.name,
                changes=[f"Switches: {spelled} → {compress(seen.switches) or '(none)'}"],
            )
    known = {s.name for s in view.switches} | set(mapped)
    servers = {p.name for p in view.servers}
    for name in sorted(set(obs.switches) - known):
        seen = obs.switches[name]
        if servers & set(seen.nodes):
            continue  # each of its planned servers is already a wrong_switch finding
        f.add(
            "unexpected_device",
            [name],
            f"switch {name} is in the topology file but not in the plan",
            f"remove SwitchName={name}, or plan the switch",
            actual=_side(name, "", seen.where),
            switch=name,
        )


def _k8s(view: SchedulerView, obs: SchedulerObservation, f: _Findings) -> None:
    """Every planned label on every planned node; labelled nodes the plan does not have."""
    planned = all_node_labels(view)
    fix_tail = f"(labels.sh of {_REGENERATE['k8s-nodes']} sets them all)"
    for node, want in planned.items():
        place = view.server(node)
        if node not in obs.labels:
            f.add(
                "missing_device",
                [node],
                f"node {node} is not in the Kubernetes node list",
                f"join {node} to the cluster, or check its node name (kubelet --hostname-override)",
                expected=_side(node, f"su{place.su}", "plan"),
                switch=f"su{place.su}",
                su=place.su,
            )
            continue
        labels, where = obs.labels[node]
        changes = [
            f"{k}: {v} → {labels.get(k, '(missing)')}"
            for k, v in want.items()
            if labels.get(k) != v
        ]
        if not changes:
            continue
        cmd = " ".join(f"{k}={v}" for k, v in want.items() if labels.get(k) != v)
        f.add(
            "attribute_changed",
            [node, *sorted(k for k, v in want.items() if labels.get(k) != v)],
            f"node {node}: {len(changes)} topology label(s) missing or not the plan's",
            f"kubectl label node --overwrite {node} {cmd} {fix_tail}",
            expected=_side(node, f"su{place.su}", "plan"),
            actual=_side(node, labels.get(f"{TOPOGRAPH}/leaf", ""), where),
            switch=f"su{place.su}",
            su=place.su,
            changes=changes,
        )
    for node in sorted(set(obs.labels) - set(planned)):
        labels, where = obs.labels[node]
        ours = sorted(k for k in labels if k.startswith((f"{TOPOGRAPH}/", f"{OWN}/")))
        if ours:
            f.add(
                "unexpected_device",
                [node],
                f"node {node} carries topology labels ({', '.join(ours)}) but is not in the plan",
                f"remove them (kubectl label node {node} "
                + " ".join(f"{k}-" for k in ours)
                + "), or add the server to the plan",
                actual=_side(node, labels.get(f"{TOPOGRAPH}/leaf", ""), where),
            )


def compare_scheduler(
    topo: FabricTopology, snapshot: Snapshot, ignore: IgnoreRules | None = None
) -> DriftReport:
    """Compare a scheduler observation with the plan (module docstring). Pure."""
    obs = snapshot.scheduler
    if obs is None:
        raise ValueError(f"{snapshot.source}: not a scheduler snapshot")
    view = scheduler_view(topo)
    f = _Findings(snapshot, ignore.findings if ignore is not None else ())
    if obs.kind == "slurm-topology":
        _slurm_nodes(view, obs, f)
        _slurm_switches(view, obs, f)
        seen = len(obs.switches)
    else:
        _k8s(view, obs, f)
        seen = len(obs.labels)
    info = SourceInfo(
        source=snapshot.source,
        origin=snapshot.origin,
        links=0,
        devices=seen,
        notes=list(snapshot.notes),
    )
    findings = sorted(f.out, key=lambda x: (x.switch, x.kind, x.summary))
    return DriftReport(summary=summarize(findings), sources=[info], findings=findings)


__all__ = ["compare_scheduler"]
