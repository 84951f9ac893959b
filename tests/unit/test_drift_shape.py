"""Drift against the shape adopt inferred (issue 47): the plan mismatch is one finding, real
faults stay individual.

The NDR DGX dump (``../shared/realdata/ibnetdiscover/topograph-ndr-dgx-example.out``) is
cabled on rails 1, 2, 5, 6 with 9 spines and 2 cables per leaf–spine pair; the 1,152-GPU
plan drift compares with has 8 rails, 32 spines, 1 cable per pair. Counts read from the
text here (:func:`pairs_in`, a regex over the port lines, not the reader): 269 leaf–spine
pairs cabled, 263 of them with 2 cables, 6 with 1; 31 leaves × 9 spines − 269 = 10 pairs
with none. Faults are planted by editing the dump's text (both port lines of a cable).
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.cli import main
from fabric_stack.drift.shape_file import SiteShape, load_shape, shape_path, write_shape
from fabric_stack.drift.shape_fold import judge_uplinks
from fabric_stack.errors import InputFileError
from tests.ib_site_fabrics import Shape, site_fabric
from tests.unit.test_adopt import REAL
from tests.unit.test_adopt_unplanned import SHAPES, _adopt, _random_names, _spec

NDR = REAL / "ibnetdiscover" / "topograph-ndr-dgx-example.out"
SPEC = ["--gpus", "1152", "--su-nodes", "18"]

needs_real = pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")

_HEAD = re.compile(r'^(?:Switch|Ca)\s+\d+\s+"([SH]-[0-9a-f]+)"\s+#\s+"([^"]*)"')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"([SH]-[0-9a-f]+)"\[(\d+)\]')


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, args, catch_exceptions=False)


def cables(text: str) -> tuple[dict[tuple[str, int], tuple[int, str, int]], dict[str, str]]:
    """((node id, port) → (line index, peer id, peer port), node id → its description)."""
    out: dict[tuple[str, int], tuple[int, str, int]] = {}
    desc: dict[str, str] = {}
    node = ""
    for i, line in enumerate(text.splitlines()):
        if m := _HEAD.match(line):
            node = m.group(1)
            desc[node] = m.group(2)
        elif (m := _PORT.match(line)) and node:
            out[(node, int(m.group(1)))] = (i, m.group(2), int(m.group(3)))
    return out, desc


def _host(d: str) -> str:
    return d.removeprefix("MF0;").split(":")[0].lower()


def pairs_in(text: str) -> Counter[tuple[str, str]]:
    """Cables per (leaf, spine) pair, read from the leaves' port lines."""
    ports, desc = cables(text)
    out: Counter[tuple[str, str]] = Counter()
    for (node, _), (_, peer, _) in ports.items():
        if "IBLEAF" in desc[node] and "IBSPINE" in desc.get(peer, ""):
            out[(_host(desc[node]), _host(desc[peer]))] += 1
    return out


def uplink(text: str, leaf: str, spine: str, nth: int = 0) -> tuple[str, int, str, int]:
    """Cable ``nth`` of ``leaf`` ↔ ``spine``: (leaf id, leaf port, spine id, spine port)."""
    ports, desc = cables(text)
    found = [
        (node, p, peer, q)
        for (node, p), (_, peer, q) in sorted(ports.items())
        if _host(desc[node]) == leaf and _host(desc.get(peer, "")) == spine
    ]
    return found[nth]


def unplug(text: str, node: str, port: int) -> str:
    """``text`` without the cable on ``node`` port ``port`` (both its lines)."""
    ports, _ = cables(text)
    i, peer, q = ports[(node, port)]
    j = ports[(peer, q)][0]
    return "\n".join(x for k, x in enumerate(text.splitlines()) if k not in (i, j)) + "\n"


def slow(text: str, node: str, port: int, rate: str) -> str:
    """``text`` with the cable on ``node`` port ``port`` at ``rate`` (both ends)."""
    ports, _ = cables(text)
    i, peer, q = ports[(node, port)]
    lines = text.splitlines()
    for k in (i, ports[(peer, q)][0]):
        lines[k] = re.sub(r"\b4xNDR\b", rate, lines[k])
    return "\n".join(lines) + "\n"


def move(text: str, node: str, port: int, to: str, to_port: int) -> str:
    """``text`` with the cable of ``node`` port ``port`` moved to switch ``to`` port ``to_port``."""
    ports, desc = cables(text)
    assert (to, to_port) not in ports
    i, peer, q = ports[(node, port)]
    j = ports[(peer, q)][0]
    lines = text.splitlines()
    lines[i] = (
        lines[i].replace(f'"{peer}"[{q}]', f'"{to}"[{to_port}]').replace(desc[peer], desc[to])
    )
    head = next(k for k, x in enumerate(lines) if (m := _HEAD.match(x)) and m.group(1) == to)
    new = f'[{to_port}]\t"{node}"[{port}]\t\t# "{desc[node]}" lid 1 4xNDR'
    out = [*lines[:j], *lines[j + 1 :]]
    head -= head > j
    out.insert(head + 1, new)
    return "\n".join(out) + "\n"


def swap(text: str, a: tuple[str, int], b: tuple[str, int]) -> str:
    """``text`` with the far ends of the cables on ports ``a`` and ``b`` exchanged."""
    ports, desc = cables(text)
    (i, x, qx), (j, y, qy) = ports[a], ports[b]
    lines = text.splitlines()

    def point(k: int, old: tuple[str, int], new: tuple[str, int]) -> None:
        lines[k] = lines[k].replace(f'"{old[0]}"[{old[1]}]', f'"{new[0]}"[{new[1]}]')
        lines[k] = lines[k].replace(f'"{desc[old[0]]}"', f'"{desc[new[0]]}"')

    point(i, (x, qx), (y, qy))
    point(j, (y, qy), (x, qx))
    point(ports[(x, qx)][0], a, b)
    point(ports[(y, qy)][0], b, a)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """(the directory of adopt's files, the names file, drift's report on the real dump)."""
    d = tmp_path_factory.mktemp("shape")
    names = d / "names.csv"
    r = _run(["adopt", *SPEC, "--ibnetdiscover", str(NDR), "--out", str(names)])
    assert r.exit_code == 1, r.output
    return d, names, _drift(NDR, names)


def _drift(dump: Path, names: Path, *extra: str) -> dict[str, Any]:
    r = _run(["drift", *SPEC, "--ibnetdiscover", str(dump), "--names", str(names),
              "--format", "json", *extra])  # fmt: skip
    assert r.exit_code == 1, r.output
    out: dict[str, Any] = json.loads(r.output)
    return out


@needs_real
def test_adopt_writes_the_shape_it_read_with_its_evidence(
    site: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, names, _ = site
    shape = load_shape(shape_path(names))
    pairs = pairs_in(NDR.read_text(encoding="utf-8"))
    assert len(pairs) == 269 and Counter(pairs.values()) == {2: 263, 1: 6}
    assert shape.rails == [1, 2, 5, 6] and shape.spines == 9 and shape.cables_per_pair == 2
    assert shape.leaves_per_rail == {1: 8, 2: 8, 5: 7, 6: 8}  # no leaf 03-01 in the dump
    assert shape.link_rate == "4xNDR"
    assert (
        "of 269 cabled leaf–spine pairs, 263 have 2, 6 have 1" in shape.evidence["cables_per_pair"]
    )
    assert "10 pair(s) have none" in shape.evidence["cables_per_pair"]
    assert shape.plan["spines"] == "32" and shape.plan["rails"] == "1, 2, 3, 4, 5, 6, 7, 8"


@needs_real
def test_ndr_drift_folds_the_plan_mismatch_into_one_finding(
    site: tuple[Path, Path, dict[str, Any]],
) -> None:
    d, _, after = site
    # before: the same names and port map without the shape beside them
    bare = d / "bare"
    bare.mkdir(exist_ok=True)
    for f in d.glob("names.*"):
        if not f.name.endswith(".shape.json"):
            shutil.copy(f, bare / f.name)
    before = _drift(NDR, bare / "names.csv")
    assert before["summary"]["unexpected_link"] > 250 and before["summary"]["total"] > 300
    s = after["summary"]
    assert s["plan_mismatch"] == 1 and s["unexpected_link"] == 0
    (pm,) = [f for f in after["findings"] if f["kind"] == "plan_mismatch"]
    assert "rails: 1, 2, 3, 4, 5, 6, 7, 8 → 1, 2, 5, 6 (32 missing-leaf" in pm["changes"][0]
    assert "spines: 32 → 9 (23 missing-spine" in pm["changes"][1]
    assert "cables per leaf–spine pair: 1 → 2" in pm["changes"][2]
    folded = before["summary"]["total"] - (s["total"] - 1)
    # every folded finding counted, minus the per-pair findings that replace the plan's
    pair_findings = sum(1 for f in after["findings"] if "of 2 cable(s) seen" in f["summary"])
    assert pm["links"] == folded + pair_findings
    # the uplinks are judged per pair: exactly the 16 pairs the text shows short of 2
    short = {p for p, n in pairs_in(NDR.read_text(encoding="utf-8")).items() if n < 2}
    assert pair_findings == 16 == len(short) + 10
    # what is left names the real differences: the leaf the dump lacks, the servers the
    # plan has no site device for, the miswires and factory HCAs the plain drift reported
    left = {f["summary"].split(" [planned")[0] for f in after["findings"]}
    assert "su1-r5-leaf is planned but was not seen (50 planned links not seen)" in left
    assert any("b08-p1-dgx-08-c01" in x and "swapped" in x for x in left)
    assert s["total"] <= 40


@needs_real
@pytest.mark.parametrize("fault", ["uplink_down", "uplink_slow", "uplink_slow_2nd",
                                   "uplink_moved", "host_slow", "host_down"])  # fmt: skip
def test_a_planted_fault_is_still_reported_exactly(
    site: tuple[Path, Path, dict[str, Any]], fault: str, tmp_path: Path
) -> None:
    _, names, base = site
    text = NDR.read_text(encoding="utf-8")
    leaf, spine = "a09-p1-ibleaf-01-01", "a10-p1-ibspine-01"
    lid, lp, _, _ = uplink(text, leaf, spine)
    ports, desc = cables(text)
    want_too = ""
    if fault == "uplink_down":
        text, want = unplug(text, lid, lp), f"{leaf} ↔ {spine}: 1 of 2 cable(s) seen"
    elif fault == "uplink_slow":
        # the first cable of the pair is one the plan has (port 33 ↔ 1): the engine says it
        text, want = slow(text, lid, lp, "4xHDR"), "runs 4xHDR (200 Gb/s), planned 4xNDR"
    elif fault == "uplink_slow_2nd":
        # the second is one the plan numbers otherwise (its link finding folded): still
        # its speed finding, which says the cable is the site's
        lid, lp, _, _ = uplink(text, leaf, spine, 1)
        text, want = slow(text, lid, lp, "4xHDR"), "runs 4xHDR (200 Gb/s); a "
        want_too = "(an uplink of the site's shape the plan numbers otherwise)"
    elif fault == "uplink_moved":
        other = next(n for n, x in desc.items() if _host(x) == "a10-p1-ibspine-02")
        free = next(p for p in range(1, 65) if (other, p) not in ports)
        text = move(text, lid, lp, other, free)
        want = f"{leaf}: 1 cable(s) to {spine}, 3 to a10-p1-ibspine-02"
    else:
        # leaf 01-01 port 1: a05-p1-dgx-01-c01's HCA-1 (a named host, placed su1-node01)
        peer = ports[(lid, 1)][1]
        assert desc[peer] == "a05-p1-dgx-01-c01 HCA-1"
        if fault == "host_slow":
            text, want = slow(text, lid, 1, "4xHDR"), "runs 4xHDR (200 Gb/s), planned 4xNDR"
        else:
            text, want = unplug(text, lid, 1), "a05-p1-dgx-01-c01"
    dump = tmp_path / "fault.out"
    dump.write_text(text, encoding="utf-8")
    got = _drift(dump, names)
    new = {f["summary"] for f in got["findings"]} - {f["summary"] for f in base["findings"]}
    gone = {f["summary"] for f in base["findings"]} - {f["summary"] for f in got["findings"]}
    pm_new = {x for x in new if "not the plan's shape" in x}
    assert len(new - pm_new) == 1, sorted(new)  # the fault, once, individually
    (one,) = new - pm_new
    assert want in one and want_too in one, one
    if "uplink" in fault:
        assert leaf in one and spine in one  # both ends named
    assert len(gone - {x for x in gone if "not the plan's shape" in x}) == 0, sorted(gone)


def test_a_malformed_shape_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    good = SiteShape(rails=[1], spines=2, cables_per_pair=6, leaves_per_rail={1: 4},
                     hosts_per_leaf=24, link_rate="4xEDR")  # fmt: skip
    path = tmp_path / "names.shape.json"
    path.write_text(write_shape(good), encoding="utf-8")
    assert load_shape(path) == good
    for text, says in [
        ('{"version": 2}', "version 2 is not one this fabric-stack reads (valid: 1)"),
        ("{not json", "not JSON"),
        ('{"version": 1, "rails": "x", "spines": 1, "cables_per_pair": 1, '
         '"leaves_per_rail": {}, "hosts_per_leaf": 1}', "$.rails"),
        ('{"version": 1, "rails": [1], "spines": -1, "cables_per_pair": 1, '
         '"leaves_per_rail": {}, "hosts_per_leaf": 1}', "$.spines"),
    ]:  # fmt: skip
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputFileError, match=re.escape(says)):
            load_shape(path)
    r = CliRunner().invoke(main, ["drift", "--gpus", "128", "--shape", str(path),
                                  "--ibnetdiscover", str(NDR)])  # fmt: skip
    if NDR.is_file():
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert str(path) in r.output and "$.spines" in r.output
        assert len(r.output.strip().splitlines()) == 1


# ----------------------------------------------------------------------- synthetic families


def _family(name: str, seed: int, tmp: Path) -> tuple[Shape, Path]:
    shape = replace(SHAPES[name])
    hosts = shape.leaves * shape.hosts_per_leaf // shape.hcas_per_host
    shape.host_names = _random_names(hosts, random.Random(seed))
    text, _ = site_fabric(shape, seed)
    dump = tmp / "fabric.txt"
    dump.write_text(text, encoding="utf-8")
    return shape, dump


EIGHT_RAILS = (
    "gpus: {gpus}\ngpus_per_node: 8\nrails: 8\nsu_nodes: {su}\nnic_gbps: 400\n"
    "switch: generic-32x400\noversubscription: '16:16'\ninfiniband: {{sm_location: switch}}\n"
)
"""A DGX-style plan (8 rails) of the same hosts: not the shape the families are cabled in."""


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_familys_shape_is_the_one_it_was_built_in(name: str, tmp_path: Path) -> None:
    shape, dump = _family(name, 1, tmp_path)
    spec = _spec(shape, tmp_path)
    _adopt(dump, spec)
    got = load_shape(shape_path(dump.with_suffix(".names.csv")))
    assert got.rails == list(range(1, shape.hcas_per_host + 1))
    assert (got.spines, got.cables_per_pair) == (shape.spines, shape.uplinks)
    assert got.hosts_per_leaf == shape.hosts_per_leaf
    assert got.link_rate == f"4x{shape.generation}"
    # the plan states the same shape: nothing folded, nothing found (the shape file read)
    r = _run(["drift", *spec, "--ibnetdiscover", str(dump),
              "--names", str(dump.with_suffix(".names.csv")), "--format", "json"])  # fmt: skip
    assert json.loads(r.output)["findings"] == []


@pytest.mark.parametrize("name", ["two-rails-shuffled", "four-rails-hca-form"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("fault", ["none", "uplink_down", "uplinks_swapped"])
def test_a_family_against_a_plan_of_another_shape(
    name: str, seed: int, fault: str, tmp_path: Path
) -> None:
    shape, dump = _family(name, seed, tmp_path)
    cfg = tmp_path / "dgx.yaml"
    hosts = shape.leaves * shape.hosts_per_leaf // shape.hcas_per_host
    cfg.write_text(EIGHT_RAILS.format(gpus=hosts * 8, su=shape.hosts_per_leaf), encoding="utf-8")
    spec = ["--config", str(cfg)]
    _adopt(dump, spec)
    names = dump.with_suffix(".names.csv")
    text = dump.read_text(encoding="utf-8")
    want = ""
    if fault != "none":
        ports, desc = cables(text)
        sw = {
            x.rsplit(" ", 1)[-1].split(":")[0].removeprefix("MF0;ib-"): n for n, x in desc.items()
        }

        def first(leaf: str, spine: str) -> int:
            return min(p for (n, p), (_, x, _) in ports.items() if n == sw[leaf] and x == sw[spine])

        port = first("leaf1", "spine1")
        if fault == "uplink_down":
            text, want = (
                unplug(text, sw["leaf1"], port),
                f"{shape.uplinks - 1} of {shape.uplinks} cable",
            )
        else:  # leaf1's cable to spine1 and leaf2's to spine2 exchange their spine ends
            text = swap(text, (sw["leaf1"], port), (sw["leaf2"], first("leaf2", "spine2")))
            want = f"{shape.uplinks - 1} cable(s) to "
        dump.write_text(text, encoding="utf-8")
    r = _run(["drift", *spec, "--ibnetdiscover", str(dump), "--names", str(names),
              "--format", "json"])  # fmt: skip
    findings = json.loads(r.output)["findings"]
    kinds = Counter(f["kind"] for f in findings)
    assert kinds["plan_mismatch"] == 1
    (pm,) = [f for f in findings if f["kind"] == "plan_mismatch"]
    assert (
        f"rails: 1, 2, 3, 4, 5, 6, 7, 8 → {', '.join(map(str, range(1, shape.hcas_per_host + 1)))}"
        in pm["changes"][0]
    )
    rest = [f["summary"] for f in findings if f["kind"] != "plan_mismatch"]
    if fault == "none":
        assert rest == []
    elif fault == "uplink_down":
        assert len(rest) == 1 and want in rest[0], rest
    else:  # two moved cables, each named by its leaf: deficit on one spine, excess on the other
        assert len(rest) == 2 and all(want in x and "is on" in x for x in rest), rest
    # without the shape the same drift reports every consequence one by one
    shape_path(names).unlink()
    r = _run(["drift", *spec, "--ibnetdiscover", str(dump), "--names", str(names),
              "--format", "json"])  # fmt: skip
    assert json.loads(r.output)["summary"]["total"] >= pm["links"] > 10


@pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")
@pytest.mark.parametrize(
    "name", ["ltaulell-X5.topofile", "arthurtumanyan-small_topo_file.txt", "jabl-ibtopotool-1.topo"]
)
def test_a_fabric_with_no_rails_gets_no_shape_and_drift_is_unchanged(
    name: str, tmp_path: Path
) -> None:
    """The non-rail samples adopt tests use: no leaf's rail known, so no shape is claimed
    (before and after this change drift reports 130 / 36 / 35 findings on them)."""
    dump = REAL / "ibnetdiscover" / name
    names = tmp_path / "names.csv"
    _run(["adopt", "--ibnetdiscover", str(dump), "--out", str(names)])
    assert names.is_file() and not shape_path(names).exists()
    r = _run(["drift", "--ibnetdiscover", str(dump), "--names", str(names), "--format", "json"])
    assert json.loads(r.output)["summary"]["plan_mismatch"] == 0


# ----------------------------------------------------------------------- the per-pair judge


@settings(max_examples=150, deadline=None)
@given(
    k=st.integers(1, 4),
    counts=st.lists(st.integers(0, 6), min_size=6, max_size=6),
    full=st.booleans(),
)
def test_every_short_and_every_extra_pair_is_named_and_nothing_else(
    k: int, counts: list[int], full: bool
) -> None:
    """2 leaves × 3 spines with random cable counts: the deficit pairs are exactly the
    expected side of the missing / moved findings, the excess pairs exactly the actual
    side of the moved / unexpected ones, and a moved cable pairs one of each."""
    leaves, spines = ["l1", "l2"], ["s1", "s2", "s3"]
    pairs = [(lf, sp) for lf in leaves for sp in spines]
    cabled = [
        (lf, "p", sp, "q", "4xNDR")
        for (lf, sp), n in zip(pairs, counts, strict=True)
        for _ in range(n)
    ]
    reach = 3 if full else 2
    shape = SiteShape(rails=[1], spines=3, cables_per_pair=k, spines_per_leaf=reach,
                      leaves_per_rail={1: 2}, hosts_per_leaf=1)  # fmt: skip
    found = judge_uplinks(cabled, set(leaves), set(spines), shape, "ibnetdiscover")
    n = dict(zip(pairs, counts, strict=True))
    short = {p for p in pairs if n[p] < k and (full or n[p] > 0)}
    extra = {p for p in pairs if n[p] > k}
    side = lambda s: (s.a_device, s.b_device)  # noqa: E731
    assert {side(s) for f in found for s in f.expected} == short
    assert {side(s) for f in found for s in f.actual} == extra
    moved = [f for f in found if f.kind == "wrong_peer"]
    deficit = sum(k - n[p] for p in short)
    surplus = sum(n[p] - k for p in extra)
    assert len(moved) <= min(deficit, surplus)
    for f in moved:  # one end shared: the leaf, or the spine
        (e,), (a,) = f.expected, f.actual
        assert e.a_device == a.a_device or e.b_device == a.b_device
    if not short and not extra:
        assert found == []
