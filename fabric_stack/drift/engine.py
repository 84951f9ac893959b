"""The drift engine: plan links vs one source's snapshot → findings with fixes.

:func:`compute_drift` is pure (no I/O). It follows diffsync's shape, one module per job:

1. **Resolve** every observed end onto the plan's names and merge the two
   directions LLDP reports of one cable (:mod:`.resolve`, :mod:`.identity`).
2. **Match by identity**: a cable is its unordered pair of endpoints, so a
   planned and an observed link match when their keys are equal (one dict
   lookup each).
3. **Compare attributes of matched pairs** (:mod:`.compare`): the few fields that
   matter (speed, width, status, optics, medium) are compared directly, and only
   pairs that differ go through deepdiff, to explain the difference.
4. **Classify what is left**, in an order chosen so one physical mistake is
   one finding: devices never seen / never planned first (their links fold
   into them), then swaps of two cables (one finding, not four), then a
   planned cable whose lower-tier end is plugged elsewhere (wrong port, wrong
   rail, wrong switch), then planned ports that are up without a neighbour,
   then planned ports holding some other cable, and finally plain missing and
   unexpected links. Each becomes a finding with its fix (:mod:`.findings`). A port
   the planned switch model cannot have is its own ``unknown_port`` finding (folding
   the planned cable of its other end) and is never turned into a move.
5. **Judge what no plan link covers**: an unplanned cable at a planned switch is also a
   ``speed_mismatch`` when it runs slower (or on other lanes) than its class should
   (:class:`~fabric_stack.drift.compare.ClassRates`), and HCAs bound to their host by
   switch port (a factory NodeDesc, :meth:`.resolve.Resolver.links`) give one finding per
   host.

Ignore rules (:mod:`.ignore`) apply throughout. Scope matters as much as matching: a
source only vouches for what it can see (:class:`~fabric_stack.drift.model.Snapshot`
coverage), so a planned storage cable is not "missing" from an ibnetdiscover dump. Without
``networks`` the scope is what the source can see
(:func:`~fabric_stack.drift.coverage.infer_networks`), and every report carries its
coverage (:mod:`.coverage`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fabric_stack.drift.compare import (
    ClassRates,
    device_differences,
    differs,
    link_differences,
)
from fabric_stack.drift.coverage import (
    DEFAULT_MIN_COVERAGE,
    NETWORKS,
    CoverageReport,
    compute_coverage,
    infer_networks,
    merge_coverage,
)
from fabric_stack.drift.findings import FindingBuilder
from fabric_stack.drift.identity import Identity
from fabric_stack.drift.ignore import ActiveRules, IgnoreRules
from fabric_stack.drift.model import (
    KINDS,
    DriftReport,
    Finding,
    PortState,
    Snapshot,
    SourceInfo,
    summarize,
)
from fabric_stack.drift.plan import EP, Key, PlanIndex
from fabric_stack.drift.resolve import Observed, Resolver
from fabric_stack.topology.build import Link


class _Comparison:
    """One comparison of a plan with one snapshot (see the module docstring for the order)."""

    def __init__(
        self,
        plan: PlanIndex,
        snap: Snapshot,
        ignore: IgnoreRules | None,
        networks: frozenset[str] | None = None,
    ) -> None:
        self.plan = plan
        self.snap = snap
        self.ident = Identity(plan, snap)
        self.rules = ActiveRules(ignore, self.ident)
        self.resolver = Resolver(plan, self.ident, self.rules)
        self.out = FindingBuilder(plan, snap, self.ident, self.rules)
        self.observed: list[Observed] = []
        self.scope_networks = networks
        """The ``--network`` limit (``None``: what the source can see)."""
        self.scope_why = "--network"
        self.scope: frozenset[str] = frozenset()
        self.planes: set[int] | None = None
        self.matched_by_network: dict[str, int] = {}

    def run(self) -> list[Finding]:
        """The steps, in order; returns the findings sorted for the report.

        :meth:`Resolver.links`, :meth:`_devices_seen`, :meth:`_in_scope`, :meth:`_match`,
        :meth:`_fold_unknown_ports`, :meth:`_fold_missing_devices`,
        :meth:`_fold_unexpected_devices`, :meth:`_Leftovers.classify` and
        :meth:`_device_attributes`.
        """
        obs_keys = self.resolver.links(self.snap)
        self.observed = list(obs_keys.values())
        seen, covered = self._devices_seen()
        in_scope = self._in_scope(seen, covered)
        matched = self._match(obs_keys)
        missing = [link for key, link in in_scope if key not in matched]
        if self.resolver.unknown_obs:
            missing = self._fold_unknown_ports(missing)
        extra = [o for o in self.observed if not o.done]
        missing = self._fold_missing_devices(seen, in_scope, missing)
        extra = self._fold_unexpected_devices(seen, extra)
        _Leftovers(self, missing, extra).classify()
        for host, hcas in sorted(self.resolver.bound.items()):
            self.out.factory_nodedesc(host, hcas)
        if self.snap.physical:
            self._judge_unplanned()
        self._device_attributes()
        order = {k: i for i, k in enumerate(KINDS)}
        findings = self.out.findings
        findings.sort(key=lambda f: (f.switch, order[f.kind], f.summary, f.id))
        return findings

    def _devices_seen(self) -> tuple[set[str], set[str] | None]:
        """Devices the source saw (named, linked or covered), and the coverage it claims."""
        snap = self.snap
        seen: set[str] = {self.ident.device(n) for n in snap.devices}
        seen.update({o.a[0] for o in self.observed})
        seen.update({o.b[0] for o in self.observed})
        for o in self.resolver.unknown_obs.values():
            seen.update((o.a[0], o.b[0]))
        covered = None if snap.covered is None else {self.ident.device(n) for n in snap.covered}
        if covered is not None:
            seen |= covered
        return seen, covered

    def _in_scope(self, seen: set[str], covered: set[str] | None) -> list[tuple[Key, Link]]:
        """The planned links this source vouches for (its networks, planes, coverage)."""
        plan, rules = self.plan, self.rules
        networks = self._networks(seen)
        planes: set[int] | None = None
        if self.snap.one_plane:
            planes = {
                plan.devices[d].plane for d in seen if d in plan.devices and plan.devices[d].plane
            }
            # No planned switch seen at all: every plane is in scope (and coverage is low),
            # rather than an empty scope that would look clean.
            planes = planes or None
        self.planes = planes
        self.scope = networks if networks is not None else frozenset(NETWORKS)
        in_scope: list[tuple[Key, Link]] = []
        for key, link in plan.by_key.items():
            if networks is not None and link.network not in networks:
                continue
            if planes is not None and link.plane not in planes:
                continue
            if (
                covered is not None
                and link.a_device not in covered
                and link.b_device not in covered
            ):
                continue
            if rules.active and (rules.ignored(key[0]) or rules.ignored(key[1])):
                continue
            in_scope.append((key, link))
        return in_scope

    def _networks(self, seen: set[str]) -> frozenset[str] | None:
        """The networks in scope: the source's own, inferred from what it saw, or ``--network``.

        Sets :attr:`scope_why` (how the scope was chosen, for the coverage report).
        """
        plan, snap = self.plan, self.snap
        networks = snap.networks
        if self.scope_networks is None and networks is None:
            servers = {d for d, info in plan.devices.items() if info.is_server}
            inferred, self.scope_why = infer_networks(plan.device_networks(), seen, servers)
            networks = inferred
        elif self.scope_networks is None:
            self.scope_why = f"what {snap.source} can see"
        if self.scope_networks is not None:
            networks = self.scope_networks if networks is None else networks & self.scope_networks
        return networks

    def _match(self, obs_keys: dict[Key, Observed]) -> set[Key]:
        """Match by identity and compare the attributes of matched pairs."""
        rules, by_key = self.rules, self.plan.by_key
        matched: set[Key] = set()
        matched_nets = self.matched_by_network
        for key, o in obs_keys.items():
            hit = by_key.get(key)
            if hit is None:
                continue
            matched.add(key)
            o.done = o.hit = True
            net = hit.network
            matched_nets[net] = matched_nets.get(net, 0) + 1
            if not differs(hit, o, self.plan):
                continue  # the common case, kept cheap: deepdiff only explains differences
            if rules.active and (rules.state_only_ep(key[0]) or rules.state_only_ep(key[1])):
                continue
            diff = link_differences(hit, o, self.plan)
            if diff.exp_speed:
                self.out.speed_mismatch(hit, o, diff)
            if diff.exp:
                self.out.cable_attributes_changed(hit, o, diff)
        return matched

    def _fold_unknown_ports(self, missing: list[Link]) -> list[Link]:
        """One ``unknown_port`` finding per observed port the planned model cannot have.

        The planned cable of the other end (when it is missing) folds into the
        finding. Returns the missing links left.
        """
        unknown_eps = self.resolver.unknown_eps
        open_at: dict[EP, Link] = {}
        for link in missing:
            open_at[(link.a_device, link.a_port)] = link
            open_at[(link.b_device, link.b_port)] = link
        folded: set[str] = set()
        for o in self.resolver.unknown_obs.values():
            bad = o.a if o.a in unknown_eps else o.b
            good = o.b if bad == o.a else o.a
            if self.rules.ignored(bad) or self.rules.ignored(good):
                continue
            planned = open_at.get(good)
            if planned is not None and planned.id in folded:
                planned = None
            if planned is not None:
                folded.add(planned.id)
            self.out.unknown_port(bad, good, o, planned)
        return [link for link in missing if link.id not in folded]

    def _fold_missing_devices(
        self, seen: set[str], in_scope: list[tuple[Key, Link]], missing: list[Link]
    ) -> list[Link]:
        """Planned devices never seen: one finding each, their missing links folded in."""
        scope_devices = {link.a_device for _, link in in_scope}
        scope_devices.update({link.b_device for _, link in in_scope})
        gone = {d for d in scope_devices - seen if not self.rules.device_ignored(d)}
        if not gone:
            return missing
        folded: dict[str, list[Link]] = {d: [] for d in gone}
        keep: list[Link] = []
        for link in missing:
            d = (
                link.a_device
                if link.a_device in gone
                else (link.b_device if link.b_device in gone else None)
            )
            if d is None:
                keep.append(link)
            else:
                folded[d].append(link)
        for d in sorted(gone):
            self.out.missing_device(d, folded[d])
        return keep

    def _fold_unexpected_devices(self, seen: set[str], extra: list[Observed]) -> list[Observed]:
        """Devices the plan does not have: one finding each, their links folded in."""
        plan, rules = self.plan, self.rules
        strangers = {d for d in seen if d not in plan.devices and not rules.device_ignored(d)}
        if not strangers:
            return extra
        their: dict[str, list[Observed]] = {d: [] for d in strangers}
        rest: list[Observed] = []
        for o in extra:
            d = o.a[0] if o.a[0] in strangers else (o.b[0] if o.b[0] in strangers else None)
            if d is None:
                rest.append(o)
            else:
                their[d].append(o)
                o.done = True
        for d in sorted(strangers):
            self.out.unexpected_device(d, their[d])
        return rest

    def _judge_unplanned(self) -> None:
        """Unplanned cables at a planned switch: a speed finding when one runs slower (or on
        other lanes) than the switch's planned cables of its class (to hosts, to switches)."""
        plan = self.plan
        todo = [o for o in self.observed if not o.hit]
        if not todo:
            return
        classes = ClassRates(plan)
        kinds = {self.ident.device(raw): seen.kind for raw, seen in self.snap.devices.items()}
        for o in todo:
            ends = (o.a, o.b)
            sw = next(
                (e for e in ends if e[0] in plan.devices and not plan.devices[e[0]].is_server),
                None,
            )
            if sw is None:
                continue
            far = o.b if sw == o.a else o.a
            info = plan.devices.get(far[0])
            host = info.is_server if info is not None else kinds.get(far[0]) == "server"
            want = classes.judge(o, host, sw[0])
            if want is not None:
                self.out.unplanned_speed(o, sw, far, host, *want)

    def _device_attributes(self) -> None:
        """Device records and side files: GUIDs, models, statuses that drifted."""
        for raw, seen in sorted(self.snap.devices.items()):
            name = self.ident.device(raw)
            if self.rules.device_ignored(name):
                continue
            exp, act = device_differences(self.plan, name, seen)
            if exp:
                self.out.device_attributes_changed(name, seen, exp, act)


class _Leftovers:
    """Step 4 after the device folds: classify the unmatched planned and observed links."""

    def __init__(self, run: _Comparison, missing: list[Link], extra: list[Observed]) -> None:
        self.run = run
        self.out = run.out
        self.rules = run.rules
        self.missing = missing
        self.extra = extra
        self.at: dict[EP, list[Observed]] = {}
        for o in extra:
            self.at.setdefault(o.a, []).append(o)
            self.at.setdefault(o.b, []).append(o)
        self.open_at: dict[EP, Link] = {}
        for link in missing:
            self.open_at[(link.a_device, link.a_port)] = link
            self.open_at[(link.b_device, link.b_port)] = link
        self.used: set[str] = set()
        """Ids of the planned links a finding already accounts for."""
        self.states_up: dict[EP, PortState] = {}
        for ps in run.snap.port_states:
            ep, ok = run.resolver.endpoint(ps.endpoint)
            if ok and ps.up:
                self.states_up[ep] = ps

    def classify(self) -> None:
        """In order: link-state-only ports, swaps, moved cables, silent ports, displaced
        cables, then plain missing and unexpected links."""
        self._state_only()
        self._swaps()
        self._moved()
        self._silent_ports()
        self._displaced()
        for link in self.missing:
            if link.id not in self.used:
                self.out.missing_link(link)
        for o in self.extra:
            if not o.done:
                self.out.unexpected_link(o)

    def _free_obs(self, ep: EP) -> Observed | None:
        for cand in self.at.get(ep, ()):
            if not cand.done:
                return cand
        return None

    def _state_only(self) -> None:
        """Link-state-only ports: anything up there satisfies the plan."""
        for link in self.missing:
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            for ep in (a, b):
                if self.rules.state_only_ep(ep):
                    up = self._free_obs(ep)
                    if up is not None or ep in self.states_up:
                        self.used.add(link.id)
                        if up is not None:
                            up.done = True
                        break

    def _swaps(self) -> None:
        """Two planned cables whose far ends are exchanged."""
        for link in self.missing:
            if link.id in self.used:
                continue
            a1, b1 = (link.a_device, link.a_port), (link.b_device, link.b_port)
            o1 = self._free_obs(a1)
            if o1 is None:
                continue
            y = o1.b if o1.a == a1 else o1.a
            link2 = self.open_at.get(y)
            if link2 is None or link2.id in self.used or link2 is link:
                continue
            ends2 = ((link2.a_device, link2.a_port), (link2.b_device, link2.b_port))
            x2 = ends2[0] if ends2[1] == y else ends2[1]
            o2 = next(
                (c for c in self.at.get(x2, ()) if not c.done and b1 in (c.a, c.b) and c is not o1),
                None,
            )
            if o2 is None:
                continue
            self.used.update((link.id, link2.id))
            o1.done = o2.done = True
            self.out.swap(link, link2, a1, b1, x2, y, o1, o2)

    def _moved(self) -> None:
        """Planned cables whose lower-tier end is plugged in somewhere else."""
        for link in self.missing:
            if link.id in self.used:
                continue
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            at_a = self._free_obs(a)
            if at_a is None:
                continue
            self.used.add(link.id)
            at_a.done = True
            self.out.moved(link, a, b, at_a)

    def _silent_ports(self) -> None:
        """Ports that are up without a neighbour (from the source's link states)."""
        if not self.states_up:
            return
        plan, rules = self.run.plan, self.rules
        any_obs = {o.a for o in self.run.observed} | {o.b for o in self.run.observed}
        for ep, ps in sorted(self.states_up.items()):
            if ep in any_obs or rules.ignored(ep) or rules.state_only_ep(ep):
                continue
            open_link = self.open_at.get(ep)
            if open_link is not None and open_link.id in self.used:
                continue
            if open_link is None and ep in plan.at:
                continue  # planned link out of scope or matched elsewhere
            if open_link is not None:
                self.used.add(open_link.id)
            self.out.silent_port(ep, open_link, ps.where, ps.speed_gbps)

    def _displaced(self) -> None:
        """Planned upper-tier ports that hold some other cable."""
        for link in self.missing:
            if link.id in self.used:
                continue
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            at_b = self._free_obs(b)
            if at_b is None:
                continue
            self.used.add(link.id)
            at_b.done = True
            self.out.displaced(link, a, b, at_b)


def compute_drift(
    plan: Sequence[Link] | PlanIndex,
    snapshot: Snapshot,
    ignore: IgnoreRules | None = None,
    networks: frozenset[str] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> DriftReport:
    """Compare the planned links with one source's snapshot. Pure.

    ``plan`` is the topology's link list or a :class:`PlanIndex` (build one with
    :meth:`PlanIndex.from_topology` to get exact port schemes and switch
    attributes, and reuse it across sources). ``networks`` limits the scope
    (``None``: what the source can see); ``min_coverage`` is the share of
    planned devices below which the report's coverage is low.
    """
    index = plan if isinstance(plan, PlanIndex) else PlanIndex(plan)
    run = _Comparison(index, snapshot, ignore, networks)
    findings = run.run()
    devices = {run.ident.device(n) for n in snapshot.devices}
    obs_count = len(run.observed)
    devices.update({o.a[0] for o in run.observed})
    devices.update({o.b[0] for o in run.observed})
    coverage = _coverage(run, devices, min_coverage)
    info = SourceInfo(
        source=snapshot.source,
        origin=snapshot.origin,
        links=obs_count,
        devices=len(devices),
        notes=[*snapshot.notes, *run.ident.notes()],
        coverage=coverage,
    )
    return DriftReport(
        summary=summarize(findings), coverage=coverage, sources=[info], findings=findings
    )


def _coverage(run: _Comparison, devices: set[str], min_coverage: float) -> CoverageReport:
    """Coverage of one run: the planned links of the networks (and planes) in scope."""
    planes = run.planes
    planned = (
        run.plan.links
        if planes is None
        else [link for link in run.plan.links if link.plane in planes]
    )
    unknown_obs = run.resolver.unknown_obs
    unmatched = [(o.a[0], o.b[0]) for o in run.observed if not o.hit]
    unmatched += [(o.a[0], o.b[0]) for o in unknown_obs.values()]
    seen_links = len(run.observed) + len(unknown_obs)
    scope = run.scope_why
    if scope == "--network":
        scope = "--network " + ",".join(sorted(run.scope))
    return compute_coverage(
        planned,
        devices,
        run.matched_by_network,
        unmatched,
        seen_links,
        run.scope,
        scope,
        min_coverage,
    )


def combine(reports: Sequence[DriftReport]) -> DriftReport:
    """One report of several sources (findings keep their source; sorted as one list)."""
    order = {k: i for i, k in enumerate(KINDS)}
    findings = sorted(
        (f for r in reports for f in r.findings),
        key=lambda f: (f.switch, order[f.kind], f.summary, f.source, f.id),
    )
    return DriftReport(
        summary=summarize(findings),
        coverage=merge_coverage([r.coverage for r in reports if r.coverage is not None]),
        sources=[s for r in reports for s in r.sources],
        findings=findings,
    )
