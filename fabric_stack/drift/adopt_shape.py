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


def _nums(xs: set[int]) -> str:
    return ", ".join(map(str, sorted(xs)))


__all__ = ["plan_shape", "shape_note", "wiring_shape"]
