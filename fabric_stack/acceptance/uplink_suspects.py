"""A slow job across SUs whose per-SU jobs pass: the uplinks between the SUs, by elimination.

The acceptance jobs (``render kubernetes``) run one nccl-tests job per SU and jobs over
every SU, each judged against the plan's estimate for its own servers. A job inside one
SU crosses only its rail leaves; a job across SUs also crosses the leaf–spine uplinks
(and, between pods, the spine–core uplinks). So when a job across SUs falls short while
a job inside each of its SUs reaches its floor, and nothing in its log explains it (no
HCA missing, no crash, GPUDirect on), the fault is on the uplinks of the rail leaves of
those SUs (or the spines/cores between them).

Narrowing, in the plan's words: the rails are those of the HCAs the slow job opened
(``NET/IB : Using``; every planned rail when the log does not say), the SUs those of its
servers; a per-rail job (``NCCL_IB_HCA`` = one rail HCA, judged against that rail's
figure by :mod:`.judge_nccl`) narrows it to that rail's leaves. No nccl-tests log says
which uplink a flow hashed onto (no per-flow path data), so the suspect names the runs
that pin it: the same job per rail HCA
(``NCCL_IB_HCA==mlx5_N:1``) for the rail, then ``ib_write_bw`` pairs across the two
rail leaves, one queue pair per run so each run's flow takes one uplink, repeated until
the runs have covered the leaf's uplinks; the slow runs share one uplink, which the
spines' per-port counters during the runs name (``accept``'s sweep then reports the
spine path of the slow pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabric_stack.acceptance.checks import (
    cable_text,
    drift_check,
    rail_cable,
    rail_label,
    server_nics,
    uplinks,
)
from fabric_stack.acceptance.model import NcclRun
from fabric_stack.acceptance.nccl_suspects import UNEXPLAINED
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import Suspect, TestResult
from fabric_stack.topology.build import Link, Nic


@dataclass(frozen=True)
class JobScope:
    """Where one nccl-tests job ran, as the elimination reads it."""

    index: int
    """Index of the job's result in the report."""
    sus: frozenset[int]
    rails: frozenset[int]
    """Rails of the HCAs NCCL opened (every planned rail when the log does not say)."""
    passed: bool | None


def job_scope(index: int, run: NcclRun, result: TestResult, ctx: AcceptContext) -> JobScope:
    """The SUs of the job's servers and the rails of the HCAs it opened."""
    sus = frozenset(s.su for name in result.servers if (s := ctx.server(name)) is not None)
    by_name = {n.name: n.rail for n in server_nics(ctx)}
    opened = {by_name[d.name] for hn in run.nets for d in hn.devices if d.name in by_name}
    rails = frozenset(opened or by_name.values())
    return JobScope(index=index, sus=sus, rails=rails, passed=result.passed)


def localise_uplinks(
    tests: list[TestResult], scopes: Sequence[JobScope], ctx: AcceptContext
) -> list[TestResult]:
    """``tests`` with the uplink suspect on each job across SUs that the per-SU jobs clear
    (module docstring); the others unchanged."""
    out = list(tests)
    per_su_ok = {next(iter(s.sus)) for s in scopes if len(s.sus) == 1 and s.passed}
    for job in scopes:
        t = tests[job.index]
        unexplained = all(s.what == UNEXPLAINED for s in t.suspects)
        if len(job.sus) < 2 or t.passed is not False or not unexplained:
            continue
        if not job.sus <= per_su_ok:
            continue  # a slow SU on its own would explain it: nothing to eliminate
        out[job.index] = t.model_copy(update={"suspects": [_uplink_suspect(ctx, t, job)]})
    return out


def _rail_leaf(ctx: AcceptContext, su: int, nic: Nic) -> str | None:
    server = next((d.name for d in ctx.topo.devices if d.role == "server" and d.su == su), None)
    link = rail_cable(ctx, server, nic.name) if server else None
    return link.b_device if link else None


def _core_uplinks(ctx: AcceptContext, leaves: list[str]) -> list[Link]:
    """Spine → core cables of the spines the leaves reach (3 tiers; [] otherwise)."""
    spines = {lk.b_device for leaf in leaves for lk in uplinks(ctx, leaf)}
    return [lk for lk in ctx.index.links if lk.role == "spine_core" and lk.a_device in spines]


def _uplink_suspect(ctx: AcceptContext, t: TestResult, job: JobScope) -> Suspect:
    nics = [n for n in server_nics(ctx) if n.rail in job.rails]
    sus = sorted(job.sus)
    leaves = sorted({leaf for su in sus for n in nics if (leaf := _rail_leaf(ctx, su, n))})
    links = [lk for leaf in leaves for lk in uplinks(ctx, leaf)]
    plan = ctx.topo.plan
    pods = {(su - 1) // plan.sus_per_pod for su in job.sus} if plan.tiers == 3 else set()
    core = _core_uplinks(ctx, leaves) if len(pods) > 1 else []
    su_text = ", ".join(map(str, sorted(job.sus)))
    a, b = _pair(ctx, sus)
    per_leaf = len(uplinks(ctx, leaves[0])) if leaves else 0
    return Suspect(
        what=f"the leaf–spine uplinks of {rail_label(nics)} between SUs {su_text}"
        + (" (and the spine–core uplinks between their pods)" if core else ""),
        where=f"uplinks of {', '.join(leaves)}: {len(links)} cable(s)"
        + (f" + {len(core)} spine–core" if core else ""),
        why=f"{t.kind} across SUs {su_text} at {t.measured:g} {t.unit} < {t.pass_at:g} "
        f"({t.file}:{t.line}) while the job inside each of these SUs reaches its floor: "
        f"the tier only the cross-SU job uses is the slow one; NCCL opened {rail_label(nics)}"
        + "; nccl-tests logs carry no per-flow path, so the single uplink is not known",
        check=(
            f"per rail, a job across SUs {su_text} with NCCL_IB_HCA=={nics[0].name}:1 "
            "(one rail HCA) names the rail; then "
            if len(nics) > 1
            else ""
        )
        + "`ib_write_bw -d "
        f"{nics[0].name} -q 1 --report_gbits {b}` on {a} (rail leaf "
        f"{_rail_leaf(ctx, sus[0], nics[0])}) against {b}, repeated with new queue "
        f"pairs until the runs cover the leaf's {per_leaf} uplinks (ECMP hashes each flow "
        "onto one): the slow runs share one uplink, which the spines' per-port counters "
        "during the runs name; give those files to accept; "
        + drift_check(ctx, f"the uplinks of {', '.join(leaves)}"),
        cables=[cable_text(lk) for lk in links + core],
    )


def _pair(ctx: AcceptContext, sus: list[int]) -> tuple[str, str]:
    """A server of the first and of the last SU: the ib_write_bw pair across two leaves."""
    first = next(d.name for d in ctx.topo.devices if d.role == "server" and d.su == sus[0])
    last = next(d.name for d in ctx.topo.devices if d.role == "server" and d.su == sus[-1])
    return first, last


__all__ = ["JobScope", "job_scope", "localise_uplinks"]
