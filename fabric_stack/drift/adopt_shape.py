"""The shape the wiring shows against the plan's: rails, spines, cables per leaf–spine pair.

The sizing flags describe a full rail-optimized fabric (every rail, one cable per
leaf–spine pair). A site may cable one plane with some rails only, or two cables per
pair (the NDR DGX dump: rails 1, 2, 5, 6, 9 spines, 2 cables per pair). Adopt places what
fits; this says, in one note, where the plan cannot express the fabric, so drift's
missing leaves / spines and its unexpected leaf–spine cables read as that one mismatch,
not as faults.
"""

from __future__ import annotations

from collections import Counter

from fabric_stack.drift.adopt_plan import PlanPorts
from fabric_stack.drift.adopt_roles import Role
from fabric_stack.drift.observation import Observation
from fabric_stack.drift.shape_file import SiteShape


def plan_shape(plan: PlanPorts) -> tuple[set[int], int, int]:
    """(rails with a planned leaf, planned spines, most planned cables of one leaf–spine pair)."""
    rails = {d.rail for p, d in plan.attrs.items() if plan.role[p] == "leaf"}
    spines = sum(1 for r in plan.role.values() if r == "spine")
    pairs: Counter[tuple[str, str]] = Counter()
    for (a, _), (b, _) in plan.peer.items():
        if plan.role.get(a) == "leaf" and plan.role.get(b) == "spine":
            pairs[(a, b)] += 1
    return rails, spines, max(pairs.values(), default=0)


def wiring_shape(roles: dict[str, Role], obs: Observation) -> tuple[set[int], int, int]:
    """(rails the leaves' NICs say, spines, most cables of one leaf–spine pair) as cabled."""
    rails = {r.rail for r in roles.values() if r.role == "leaf" and r.rail}
    spines = sum(1 for r in roles.values() if r.role == "spine")
    role = {d: r.role for d, r in roles.items()}
    pairs: Counter[tuple[str, str]] = Counter()
    for a, _, b, _ in obs.cables:
        ends = {role.get(a): a, role.get(b): b}
        if "leaf" in ends and "spine" in ends and a != b:
            pairs[(ends["leaf"], ends["spine"])] += 1
    return rails, spines, max(pairs.values(), default=0)


def shape_note(plan: PlanPorts, roles: dict[str, Role], obs: Observation) -> str | None:
    """One note where the wiring's shape is one the plan cannot express (``None``: it fits)."""
    p_rails, p_spines, p_pair = plan_shape(plan)
    w_rails, w_spines, w_pair = wiring_shape(roles, obs)
    if not w_rails or (w_rails == p_rails and w_spines == p_spines and w_pair <= p_pair):
        return None
    absent = sorted(p_rails - w_rails)
    return (
        f"the wiring is not the plan's shape: rails {_nums(w_rails)} cabled (plan: "
        f"{_nums(p_rails)}), {w_spines} spines (plan: {p_spines}), up to {w_pair} cable(s) per "
        f"leaf–spine pair (plan: {p_pair}); the sizing flags cannot express it, so drift "
        f"against this plan reports the leaves of rails {_nums(set(absent)) or '-'} and the "
        f"{max(p_spines - w_spines, 0)} spines beyond {w_spines} as missing and the leaf–spine "
        "cables the plan numbers otherwise as unexpected: one plan mismatch, not faults"
    )


def site_shape(plan: PlanPorts, roles: dict[str, Role], obs: Observation) -> SiteShape | None:
    """The shape the wiring shows, each value with its evidence (``None``: no leaf with a rail,
    nothing to say). Written beside the names file; drift judges the leaf–spine layer by it."""
    role = {d: r.role for d, r in roles.items()}
    leaves = {d: r.rail for d, r in roles.items() if r.role == "leaf" and r.rail}
    if not leaves:
        return None
    spines = sorted(d for d, r in role.items() if r == "spine")
    pairs: Counter[tuple[str, str]] = Counter()
    hosts: Counter[str] = Counter()
    for a, _, b, _ in obs.cables:
        for x, y in ((a, b), (b, a)):
            if x in leaves and role.get(y) == "spine":
                pairs[(x, y)] += 1
            elif x in leaves and y not in role:
                hosts[x] += 1
    per_pair = Counter(pairs.values())
    k = max(per_pair, key=lambda n: (per_pair[n], n), default=0)
    per_rail = Counter(leaves.values())
    reach = Counter(Counter(lf for lf, _ in pairs).values())
    reached = max(reach, key=lambda n: (reach[n], n), default=0)
    p_rails, p_spines, p_pair = plan_shape(plan)
    rate = max(obs.rates, key=lambda r: (obs.rates[r], r), default="")
    none = len(leaves) * len(spines) - len(pairs)
    return SiteShape(
        source=obs.origin,
        rails=sorted(per_rail),
        spines=len(spines),
        cables_per_pair=k,
        spines_per_leaf=reached,
        leaves_per_rail=dict(sorted(per_rail.items())),
        hosts_per_leaf=max(hosts.values(), default=0),
        link_rate=rate,
        plan={
            "rails": _nums(p_rails),
            "spines": str(p_spines),
            "cables_per_pair": str(p_pair),
            "leaves_per_rail": str(_leaves_per_rail(plan)),
        },
        evidence={
            "rails": "the NICs most of each leaf's host cables use: "
            + ", ".join(f"rail {r}: {n} leaves" for r, n in sorted(per_rail.items())),
            "spines": f"{len(spines)} switches cabled only to leaves (roles from the wiring)",
            "cables_per_pair": f"of {len(pairs)} cabled leaf–spine pairs, "
            + ", ".join(f"{n} have {c}" for c, n in sorted(per_pair.items(), key=lambda x: -x[1]))
            + (f"; {none} pair(s) have none" if none > 0 else ""),
            "spines_per_leaf": f"of {len(leaves)} leaves, "
            + ", ".join(
                f"{n} reach {c} spine(s)" for c, n in sorted(reach.items(), key=lambda x: -x[1])
            ),
            "leaves_per_rail": "leaves per rail their NICs say",
            "hosts_per_leaf": "the most host cables on one leaf",
            "link_rate": ", ".join(f"{n} cable(s) at {r}" for r, n in obs.rates.most_common())
            or "the source reports no rate",
        },
    )


def _leaves_per_rail(plan: PlanPorts) -> int:
    rails = Counter(d.rail for p, d in plan.attrs.items() if plan.role[p] == "leaf")
    return max(rails.values(), default=0)


def _nums(xs: set[int]) -> str:
    return ", ".join(map(str, sorted(xs)))


__all__ = ["plan_shape", "shape_note", "site_shape", "wiring_shape"]
