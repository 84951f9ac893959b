"""The InfiniBand twin's per-switch route check (ibroutes) on small synthetic fat trees.

The fabrics are built directly (``ibnet.Fabric`` and LFT tables), no ibsim: a correct
2-tier and 3-tier tree, then broken tables (a loop, a missing entry, a down-up-down path,
a down-up turn). Every case also runs the pairwise cross-check over all pairs, which must
agree with the per-switch verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric_stack.twin import ibroutes
from fabric_stack.twin.ibnet import Fabric
from fabric_stack.twin.lfts import NO_ENTRY, Lfts, lft_port, parse_lfts, set_lft


@dataclass
class Tree:
    """A synthetic fabric: names → GUIDs, links, LIDs, and routes set by name."""

    kind: dict[str, str] = field(default_factory=dict)
    lid: dict[str, int] = field(default_factory=dict)
    peer: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    next_port: dict[str, int] = field(default_factory=dict)
    lfts: Lfts = field(default_factory=dict)

    def node(self, name: str, kind: str) -> str:
        self.kind[name] = kind
        self.lid[name] = len(self.lid) + 1
        self.next_port[name] = 1
        return name

    def link(self, a: str, b: str) -> None:
        pa, pb = self.next_port[a], self.next_port[b]
        self.next_port[a] += 1
        self.next_port[b] += 1
        self.peer[(a, pa)] = (b, pb)
        self.peer[(b, pb)] = (a, pa)

    def port_to(self, sw: str, other: str, nth: int = 0) -> int:
        ports = sorted(p for (s, p), (o, _) in self.peer.items() if s == sw and o == other)
        return ports[nth]

    def route(self, sw: str, dst: str, via: str) -> None:
        set_lft(self.lfts, sw, self.lid[dst], self.port_to(sw, via))

    def fabric(self) -> Fabric:
        desc = {n: n for n in self.kind}
        return Fabric(dict(self.kind), desc, dict(self.lid), dict(self.peer))

    def hosts(self) -> list[str]:
        return sorted(n for n, k in self.kind.items() if k == "Ca")


def two_tier() -> tuple[Tree, dict[str, str]]:
    """3 leaves × 2 hosts, 2 spines, every leaf on both spines; ftree-like routes."""
    t = Tree()
    spines = [t.node(f"s{j}", "Switch") for j in range(2)]
    leaf_of = {}
    for i in range(3):
        leaf = t.node(f"l{i}", "Switch")
        for h in range(2):
            host = t.node(f"h{i}{h}", "Ca")
            t.link(leaf, host)
            leaf_of[host] = leaf
        for s in spines:
            t.link(leaf, s)
    for dst, leaf in leaf_of.items():
        for other in {*leaf_of.values()}:
            t.route(other, dst, dst if other == leaf else spines[t.lid[dst] % 2])
        for s in spines:
            t.route(s, dst, leaf)
    return t, leaf_of


def three_tier() -> tuple[Tree, dict[str, str]]:
    """2 pods × (2 leaves × 2 hosts, 2 spines), 2 cores: core j on spine j of each pod."""
    t = Tree()
    cores = [t.node(f"c{j}", "Switch") for j in range(2)]
    leaf_of: dict[str, str] = {}
    pod_of: dict[str, int] = {}
    spines = {}
    for p in range(2):
        spines[p] = [t.node(f"p{p}s{j}", "Switch") for j in range(2)]
        for j, s in enumerate(spines[p]):
            t.link(s, cores[j])
        for i in range(2):
            leaf = t.node(f"p{p}l{i}", "Switch")
            pod_of[leaf] = p
            for h in range(2):
                host = t.node(f"p{p}l{i}h{h}", "Ca")
                t.link(leaf, host)
                leaf_of[host] = leaf
            for s in spines[p]:
                t.link(leaf, s)
    for dst, leaf in leaf_of.items():
        j = t.lid[dst] % 2  # the spine/core plane this destination is spread to
        pod = pod_of[leaf]
        for other in {*leaf_of.values()}:
            t.route(other, dst, dst if other == leaf else spines[pod_of[other]][j])
        for p in range(2):
            for s in spines[p]:
                t.route(s, dst, leaf if p == pod else cores[spines[p].index(s)])
        for k, c in enumerate(cores):
            t.route(c, dst, spines[pod][k])
    return t, leaf_of


def test_a_correct_two_tier_tree_passes_with_exact_hop_counts() -> None:
    t, _ = two_tier()
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=2)
    assert (r["pairs"], r["ok"], r["all"]) == (30, 30, True)
    assert r["hops"] == {"1": 6, "3": 24}  # a same-leaf peer each; 4 hosts through a spine
    assert (r["switches"], r["destinations"], r["failed"]) == (5, 6, [])
    assert r["sample"] == {"pairs": 30, "seed": ibroutes.SAMPLE_SEED, "agree": 30, "differ": []}


def test_a_correct_three_tier_tree_passes_with_exact_hop_counts() -> None:
    t, _ = three_tier()
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=3)
    assert (r["pairs"], r["ok"], r["all"]) == (56, 56, True)
    assert r["hops"] == {"1": 8, "3": 16, "5": 32}
    assert r["sample"]["agree"] == 56


def test_a_loop_is_found_at_the_switch_that_sends_back_down() -> None:
    t, _ = two_tier()
    dst = "h00"  # on l0; s0 sends it down to l1, which sends it back up to s0
    t.route("s0", dst, "l1")
    t.route("l1", dst, "s0")
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=2)
    assert r["all"] is False and r["failed_destinations"] == 1
    f = r["failed"][0]
    assert (f["hca"], f["switch"]) == ("h00", "s0")
    assert f["reason"] == "goes down where the destination is not (down, then up again)"
    assert {w["result"] for w in f["walk"]} == {"loop"}
    assert f["pairs_failed"] == 4  # l1's and l2's hosts both climb to s0 (h00's lid is even)
    assert r["ok"] == 30 - 4
    assert r["sample"]["agree"] == r["sample"]["pairs"] == 30


def test_a_missing_entry_is_a_dead_end() -> None:
    t, _ = two_tier()
    t.lfts["s1"][t.lid["h21"]] = NO_ENTRY
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=2)
    f = r["failed"][0]
    assert (f["hca"], f["switch"]) == ("h21", "s1")
    assert f["reason"].startswith("dead end")
    assert r["all"] is False and r["ok"] < r["pairs"]
    assert r["sample"]["agree"] == 30


def test_a_down_up_down_path_fails_although_it_delivers() -> None:
    t, _ = three_tier()
    dst = "p0l0h0"  # lid parity routes it over spine/core plane j
    j = t.lid[dst] % 2
    other = f"p0s{1 - j}"
    t.route(f"p0s{j}", dst, "p0l1")  # the pod's spine j goes down to the wrong leaf …
    t.route("p0l1", dst, other)  # … which climbs to the other spine, down to p0l0
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=3)
    assert r["ok"] == r["pairs"] == 56  # every pair still arrives …
    assert r["all"] is False  # … but not along up/down paths, and too long
    assert "7" in r["hops"] and 7 not in r["expected_hops"]
    f = r["failed"][0]
    assert (f["hca"], f["switch"]) == (dst, f"p0s{j}")
    assert "down where the destination is not" in f["reason"]
    assert r["sample"]["agree"] == 56


def test_going_up_from_above_the_destination_is_a_down_up_turn() -> None:
    t, _ = three_tier()
    dst = "p1l0h1"
    j = t.lid[dst] % 2
    t.route(f"p1s{j}", dst, f"c{j}")  # the spine above dst's leaf sends it up again
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=3)
    reasons = {f["reason"] for f in r["failed"]}
    assert reasons == {"goes up although the destination is below (a down-up turn)"}
    assert {w["result"] for w in r["failed"][0]["walk"]} == {"loop"}  # core sends it back
    assert r["sample"]["agree"] == 56


def test_a_longer_than_shortest_climb_is_too_long() -> None:
    t, _ = three_tier()
    dst = "p0l1h0"
    t.route("p0l0", dst, "p0s0")
    t.route("p0s0", dst, "c0")  # p0l0 → p0s0 → c0 → p0s0 …: the spine had it below
    r = ibroutes.verify_routes(t.fabric(), t.lfts, tiers=3)
    assert r["all"] is False and r["failed"][0]["switch"] == "p0s0"


def test_parse_lfts_reads_runs_and_gaps_into_tables() -> None:
    text = (
        "Unicast lids [0x0-0x8] of switch DR path slid 0; dlid 0; 0 guid 0x000000000000000a (x):\n"
        "0x0001 001 : (Switch portguid 0x1: 'x')\n"
        "0x0002 003 : (Channel Adapter portguid 0x2: 'a')\n"
        "0x0003 004 : (Channel Adapter portguid 0x3: 'b')\n"
        "Unicast lids [0x0-0x8] of switch DR path slid 0; dlid 0; 0,1 guid "
        "0x000000000000000b (y):\n"
        "0x0002 010 : (Channel Adapter portguid 0x2: 'a')\n"
        "0x0007 012 : (Channel Adapter portguid 0x7: 'c')\n"
    )
    text += (  # `dump_fts -n` (what twin check runs): no destination after the port
        "Unicast lids [0x0-0x3] of switch DR path slid 0; dlid 0; 0,2 guid "
        "0x000000000000000c (z):\n"
        "  Lid  Out   Destination\n       Port     Info \n0x0001 002 \n0x0003 017 \n"
    )
    text += (  # contiguous `-n` rows: decoded by position, without splitting
        "Unicast lids [0x0-0x4] of switch DR path slid 0; dlid 0; 0,3 guid "
        "0x000000000000000d (w):\n  Lid  Out   Destination\n       Port     Info \n"
        "0x0001 001 \n0x0002 064 \n0x0003 255 \n0x0004 010 \n4 valid lids dumped \n"
    )
    lfts = parse_lfts(text)
    assert list(lfts["000000000000000c"]) == [255, 2, 255, 17]
    assert list(lfts["000000000000000d"]) == [255, 1, 64, 255, 10]
    a, b = lfts["000000000000000a"], lfts["000000000000000b"]
    assert [lft_port(lfts, "000000000000000a", i) for i in range(5)] == [
        None,
        1,
        3,
        4,
        None,
    ]
    assert (b[2], b[7], b[3]) == (10, 12, NO_ENTRY) and len(a) == len(b) == 9


def test_the_sample_is_fixed_by_its_seed() -> None:
    hosts = [f"h{i:03d}" for i in range(100)]
    one = ibroutes.sample_pairs(hosts, 50, 7)
    assert one == ibroutes.sample_pairs(list(reversed(hosts)), 50, 7)
    assert one != ibroutes.sample_pairs(hosts, 50, 8)
    assert all(a != b for a, b in one) and len(one) == 50
