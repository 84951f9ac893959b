"""Drift against a site whose shape the sizing flags cannot express (adopt's shape file).

The plan drift compares with is a full rail-optimized fabric: every rail, the model's
spine count, one cable per leaf–spine pair, spine ports numbered by the plan. A site
may cable some rails only, fewer spines, several cables per pair (the NDR DGX dump:
rails 1, 2, 5, 6, 9 spines, 2 per pair). Against such a plan every healthy uplink is
"unexpected" and every leaf of an uncabled rail "missing". With the shape adopt
inferred (:mod:`~fabric_stack.drift.shape_file`), this module:

1. folds the findings that are only the shape difference into ONE ``plan_mismatch``
   finding naming each difference and how many findings it stands for: planned leaves
   of a rail the site does not cable and planned spines beyond the site's, neither with a
   site device in the names file; and every link finding between adopted leaves and
   spines (the plan numbers that layer otherwise);
2. judges that layer against the shape instead, pair by pair from the observed cables:
   a pair with fewer cables than the shape's is a ``missing_link``, with more an
   ``unexpected_link``, a deficit and an excess on one leaf (or one spine) a moved cable
   (``wrong_peer``). A cable below the rate is the engine's ``speed_mismatch`` (it judges
   unplanned cables too), kept, and said to be an uplink of the site's shape.

Everything else (hosts, an adopted device not seen, a leaf of a cabled rail absent,
any speed finding of the engine) is left as the engine reported it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from fabric_stack.drift.model import KINDS, DriftReport, Finding, Side, Snapshot, summarize
from fabric_stack.drift.observation import short_name
from fabric_stack.drift.shape_file import SiteShape
from fabric_stack.topology.build import FabricTopology

FOLDED_LINK_KINDS = frozenset({"missing_link", "unexpected_link", "wrong_peer"})
"""Link findings between adopted leaves and spines that the shape judges instead."""

NOT_PLANNED = "(the cable is not in the plan)"
IN_SHAPE = "(an uplink of the site's shape the plan numbers otherwise)"
"""How a speed finding on a folded uplink says where the cable stands."""

Cable = tuple[str, str, str, str, str]
"""(leaf, leaf port, spine, spine port, rate) of one observed uplink."""


def plan_values(topo: FabricTopology) -> tuple[list[int], int, int]:
    """(rails with a planned leaf, planned spines, most planned cables of one leaf–spine pair)."""
    rails = sorted({d.rail for d in topo.devices if d.role == "leaf"})
    spines = sum(1 for d in topo.devices if d.role == "spine")
    role = {d.name: d.role for d in topo.devices}
    pairs = Counter(
        (lk.a_device, lk.b_device)
        for lk in topo.links
        if role.get(lk.a_device) == "leaf" and role.get(lk.b_device) == "spine"
    )
    return rails, spines, max(pairs.values(), default=0)


def differs(shape: SiteShape, topo: FabricTopology) -> bool:
    """True when the site's shape is one the plan does not have (else nothing to fold)."""
    rails, spines, pair = plan_values(topo)
    return (shape.rails, shape.spines, shape.cables_per_pair) != (rails, spines, pair)


def fold_shape(
    report: DriftReport,
    topo: FabricTopology,
    shape: SiteShape,
    snapshots: Iterable[Snapshot],
    adopted: frozenset[str],
    origin: str,
) -> DriftReport:
    """``report`` with the shape's consequences folded and the uplinks judged by the shape.

    ``adopted``: the planned names the names file binds to a site device; ``origin``:
    the shape file (named in the finding)."""
    if not differs(shape, topo):
        return report
    leaves = {d.name for d in topo.devices if d.role == "leaf" and d.planned_name in adopted}
    spines = {d.name for d in topo.devices if d.role == "spine" and d.planned_name in adopted}
    cables = uplinks(snapshots, leaves, spines)
    judge = bool(cables)  # no source saw the uplinks: their findings stay the plan's
    absent_rail = {
        d.name
        for d in topo.devices
        if d.role == "leaf" and d.rail not in shape.rails and d.planned_name not in adopted
    }
    extra_spine = {
        d.name
        for d in topo.devices
        if d.role == "spine" and d.planned_name not in adopted and shape.spines < _spines(topo)
    }
    folded: Counter[str] = Counter()
    kept: list[Finding] = []
    source = report.findings[0].source if report.findings else "shape"
    for f in report.findings:
        layer = leaves | spines if judge else set()
        why = _why_folded(f, absent_rail, extra_spine, layer)
        if f.kind == "speed_mismatch" and layer and _names(f) <= layer:
            f = f.model_copy(update={"summary": f.summary.replace(NOT_PLANNED, IN_SHAPE)})
        if why:
            folded[why] += 1
            source = f.source
        else:
            kept.append(f)
    if judge:
        kept += judge_uplinks(cables, leaves, spines, shape, source)
    if folded:
        kept.append(mismatch_finding(shape, topo, folded, source, origin))
    order = {k: i for i, k in enumerate(KINDS)}
    kept.sort(key=lambda f: (f.switch, order[f.kind], f.summary, f.source, f.id))
    return report.model_copy(update={"findings": kept, "summary": summarize(kept)})


def _spines(topo: FabricTopology) -> int:
    return sum(1 for d in topo.devices if d.role == "spine")


def _names(f: Finding) -> set[str]:
    out = {short_name(s.a_device) for s in (*f.expected, *f.actual) if s.a_device}
    return out | {short_name(s.b_device) for s in (*f.expected, *f.actual) if s.b_device}


def _why_folded(
    f: Finding, absent_rail: set[str], extra_spine: set[str], layer: set[str]
) -> str | None:
    """Which shape difference ``f`` is a consequence of (``None``: a real finding)."""
    names = _names(f)
    if f.kind == "missing_device" and names:
        if names <= absent_rail:
            return "rails"
        if names <= extra_spine:
            return "spines"
    if f.kind in FOLDED_LINK_KINDS and names and names <= layer:
        return "cables_per_pair"
    return None


def uplinks(snapshots: Iterable[Snapshot], leaves: set[str], spines: set[str]) -> list[Cable]:
    """Every observed cable between an adopted leaf and an adopted spine (physical sources)."""
    out: list[Cable] = []
    for snap in snapshots:
        if snap.scheduler is not None or not snap.physical:
            continue
        for lk in snap.links:
            a, b = short_name(lk.a.device), short_name(lk.b.device)
            if a in leaves and b in spines:
                out.append((a, lk.a.port, b, lk.b.port, lk.rate or ""))
            elif b in leaves and a in spines:
                out.append((b, lk.b.port, a, lk.a.port, lk.rate or ""))
    return out


def judge_uplinks(
    cables: list[Cable],
    leaves: set[str],
    spines: set[str],
    shape: SiteShape,
    source: str,
) -> list[Finding]:
    """The shape's findings on the leaf–spine layer: per-pair counts and moved cables (the
    engine's speed findings already judge each cable's rate, planned or not)."""
    k = shape.cables_per_pair
    seen = Counter((c[0], c[2]) for c in cables)
    # Every pair when the shape is a full mesh (two tiers); else (pods under a core) only
    # the pairs that are cabled at all: a pod's leaf never reaches another pod's spines.
    full = shape.spines_per_leaf in (0, shape.spines)
    pairs = ((lf, sp) for lf in leaves for sp in spines) if full else iter(seen)
    short = {p: k - seen[p] for p in pairs if seen[p] < k}
    extra = {p: n - k for p, n in seen.items() if n > k}
    out: list[Finding] = []
    for side in (0, 1):  # a deficit and an excess on one leaf, then on one spine: moved
        for p in sorted(short):
            for q in sorted(extra):
                if short.get(p, 0) > 0 and extra.get(q, 0) > 0 and p[side] == q[side]:
                    out.append(_moved(p, q, side, k, seen, source))
                    short[p] -= 1
                    extra[q] -= 1
    for (lf, sp), n in sorted(short.items()):
        if n > 0:
            out.append(_pair_finding("missing_link", lf, sp, seen[(lf, sp)], k, source))
    for (lf, sp), n in sorted(extra.items()):
        if n > 0:
            out.append(_pair_finding("unexpected_link", lf, sp, seen[(lf, sp)], k, source))
    return out


def _moved(
    p: tuple[str, str],
    q: tuple[str, str],
    side: int,
    k: int,
    seen: Counter[tuple[str, str]],
    source: str,
) -> Finding:
    """A cable missing from pair ``p`` and one too many on pair ``q``, sharing one end."""
    lf, sp = p
    ql, qs = q
    where = (
        f"{lf}: {seen[p]} cable(s) to {sp}, {seen[q]} to {qs}"
        if side == 0
        else f"{sp}: {seen[p]} cable(s) from {lf}, {seen[q]} from {ql}"
    )
    to = qs if side == 0 else ql
    frm = sp if side == 0 else lf
    return _finding(
        "wrong_peer",
        "wrong_switch",
        source,
        lf,
        f"{where} (the site's shape: {k} per leaf–spine pair): a cable of {lf} ↔ {sp} "
        f"is on {ql} ↔ {qs}",
        f"move one cable from {ql} ↔ {qs} back to {lf} ↔ {sp} (from {to} to {frm})",
        [Side(a_device=lf, b_device=sp)],
        [Side(a_device=ql, b_device=qs)],
    )


def _pair_finding(kind: str, lf: str, sp: str, n: int, k: int, source: str) -> Finding:
    """A leaf–spine pair with fewer (more) cables than the site's shape."""
    if kind == "missing_link":
        summary = f"{lf} ↔ {sp}: {n} of {k} cable(s) seen (the site's shape: {k} per pair)"
        fix = f"check the {k - n} missing cable(s) between {lf} and {sp} (seated, optics, port up)"
        exp, act = [Side(a_device=lf, b_device=sp)], []
    else:
        summary = f"{lf} ↔ {sp}: {n} cables, the site's shape has {k} per pair"
        fix = f"remove the {n - k} cable(s) too many between {lf} and {sp}, or re-run adopt"
        exp, act = [], [Side(a_device=lf, b_device=sp)]
    return _finding(kind, "", source, lf, summary, fix, exp, act)


def mismatch_finding(
    shape: SiteShape, topo: FabricTopology, folded: Counter[str], source: str, origin: str
) -> Finding:
    """The ONE finding standing for every consequence of the shape difference."""
    rails, spines, pair = plan_values(topo)
    changes = []
    if folded["rails"]:
        changes.append(
            f"rails: {_nums(rails)} → {_nums(shape.rails)} "
            f"({folded['rails']} missing-leaf finding(s))"
        )
    if folded["spines"]:
        changes.append(
            f"spines: {spines} → {shape.spines} ({folded['spines']} missing-spine finding(s))"
        )
    if folded["cables_per_pair"]:
        changes.append(
            f"cables per leaf–spine pair: {pair} → {shape.cables_per_pair} "
            f"({folded['cables_per_pair']} leaf–spine link finding(s); the uplinks are judged "
            "per pair against the site's shape instead)"
        )
    total = sum(folded.values())
    return _finding(
        "plan_mismatch",
        "",
        source,
        "",
        f"the site is not the plan's shape ({origin}): "
        + "; ".join(changes)
        + f": {total} finding(s) folded, not faults",
        "size the plan as the site is built (or cable the site as planned); the shape file "
        "says what the wiring shows, with its evidence",
        [],
        [],
        changes,
        links=total,
    )


def _finding(
    kind: str,
    cause: str,
    source: str,
    switch: str,
    summary: str,
    fix: str,
    expected: list[Side],
    actual: list[Side],
    changes: list[str] | None = None,
    links: int = 0,
) -> Finding:
    key = f"{source}|{kind}|{summary}".encode()
    return Finding.model_validate(
        {
            "id": f"{kind}:{hashlib.sha256(key).hexdigest()[:10]}",
            "kind": kind,
            "cause": cause,
            "source": source,
            "switch": switch,
            "summary": summary,
            "fix": fix,
            "expected": expected,
            "actual": actual,
            "changes": changes or [],
            "links": links,
        }
    )


def _nums(xs: list[int]) -> str:
    return ", ".join(map(str, xs))


__all__ = ["FOLDED_LINK_KINDS", "differs", "fold_shape", "judge_uplinks", "plan_values", "uplinks"]
