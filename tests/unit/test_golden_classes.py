"""Goldens by symmetry class (``tests/golden/classes.py``): the equivalence check has teeth.

A member's golden is its representative plus a row of substitutions; these tests show the
row rebuilds the member byte for byte and that any other change to a non-representative
member (one MTU, one address) fails the same check the golden test runs.
"""

from __future__ import annotations

import pytest

from tests.golden.classes import (
    TABLE,
    build_table,
    derive_substitutions,
    dump_table,
    expand_directory,
    fold_directory,
    group_classes,
    load_table,
    member_mismatch,
    substitute,
)
from tests.golden_artifacts import seed_artifacts
from tests.regenerate import GOLDEN_DIR

_LEAF = (
    "hostname {name}\n"
    "interface lo\n ip address {lo}/32\n"
    "interface swp1\n mtu 9216\n description rail {rail} to {peer}\n"
    "router bgp {asn}\n bgp router-id {lo}\n neighbor swp1 remote-as external\n"
    "! plane 1, rail {rail}\n"
)


def _leaf(name: str, lo: str, rail: int, peer: str, asn: int) -> str:
    return _LEAF.format(name=name, lo=lo, rail=rail, peer=peer, asn=asn)


_FILES = {
    "r1-leaf.conf": _leaf("r1-leaf", "10.255.0.65", 1, "node01", 4200000002),
    "r2-leaf.conf": _leaf("r2-leaf", "10.255.0.66", 2, "node01", 4200000003),
    "r3-leaf.conf": _leaf("r3-leaf", "10.255.0.67", 3, "node01", 4200000004),
    "spine-01.conf": "hostname spine-01\nrouter bgp 4200000001\n",
}


def test_classes_group_by_shape_with_the_first_name_as_representative() -> None:
    assert group_classes(_FILES) == [
        ["r1-leaf.conf", "r2-leaf.conf", "r3-leaf.conf"],
        ["spine-01.conf"],
    ]


def test_a_row_rebuilds_its_member_byte_for_byte() -> None:
    rep, member = _FILES["r1-leaf.conf"], _FILES["r2-leaf.conf"]
    subs = derive_substitutions(rep, member)
    assert substitute(rep, subs) == member
    # "1" stays "1" in "plane 1" but becomes "2" in "rail 1": keyed by line, not globally.
    assert "1" not in subs
    assert {k for k in subs if k.startswith("1@")} == {"1@6", "1@10:2"}


def test_fold_keeps_representatives_and_a_table_that_expands_back() -> None:
    stored = fold_directory(_FILES)
    assert set(stored) == {"r1-leaf.conf", "spine-01.conf", TABLE}
    assert expand_directory(stored) == _FILES
    assert load_table(stored[TABLE]) == build_table(_FILES)
    assert dump_table(load_table(stored[TABLE])) == stored[TABLE]


@pytest.mark.parametrize(
    ("old", "new"),
    [(" mtu 9216", " mtu 9100"), ("remote-as external", "remote-as internal")],
)
def test_a_changed_member_fails_the_check(old: str, new: str) -> None:
    stored = fold_directory(_FILES)
    row = load_table(stored[TABLE])["r1-leaf.conf"]["r3-leaf.conf"]
    mutated = _FILES["r3-leaf.conf"].replace(old, new)
    assert member_mismatch(_FILES["r3-leaf.conf"], stored["r1-leaf.conf"], row) is None
    assert member_mismatch(mutated, stored["r1-leaf.conf"], row) is not None


def test_files_of_different_shapes_are_not_one_class() -> None:
    with pytest.raises(ValueError, match="shapes"):
        derive_substitutions(_FILES["r1-leaf.conf"], _FILES["spine-01.conf"])
    with pytest.raises(ValueError, match="digit-free"):
        derive_substitutions("mtu 9216\n", "mtu jumbo\n")


def _stored(directory: str, rel: str) -> str:
    return (GOLDEN_DIR / "artifacts" / directory / rel).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("target", "member", "old", "new"),
    [
        ("sonic", "su1-r2-leaf/config_db.json", '"mtu": "9216"', '"mtu": "9100"'),
        ("frr", "su1-r2-leaf.conf", "10.255.0.66/32", "10.255.0.99/32"),
        ("cumulus", "spine-02.nvue.sh", "swp33s1", "swp33s2"),
    ],
)
def test_the_stored_goldens_catch_one_changed_member(
    target: str, member: str, old: str, new: str
) -> None:
    """The real tables on disk: one edit in one non-representative member is caught."""
    directory = f"roce/{target}"
    table = load_table(_stored(directory, TABLE))
    rep = next(r for r, rows in table.items() if member in rows)
    assert rep != member
    rendered = seed_artifacts("roce")[f"{target}/{member}"]
    assert old in rendered
    mutated = rendered.replace(old, new, 1)
    row = table[rep][member]
    assert member_mismatch(rendered, _stored(directory, rep), row) is None
    mismatch = member_mismatch(mutated, _stored(directory, rep), row)
    assert mismatch is not None
    assert new in mismatch
