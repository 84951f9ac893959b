"""The FRR family: FRR's own parser rejects a planted defect in roce-128's configs with its
own message, in both tools (vtysh --dryrun, frr-reload.py --test); `make validate` judges
every rendered file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.validate.conftest import judge, rendered, require
from validate.frr import FRR
from validate.registry import VALIDATORS

pytestmark = pytest.mark.validate

LEAF = "frr/su1-r1-leaf.conf"
SPINE = "frr/spine-01.conf"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """roce-128 rendered once for the module (the tools only read it)."""
    require(FRR)
    return rendered(tmp_path_factory.mktemp("frr"), "roce-128")


def plant(root: Path, rel: str, after: str, line: str) -> str:
    """A copy of ``rel`` with ``line`` inserted after the first line starting with ``after``."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(after))
    lines.insert(at + 1, line)
    out = f"{rel.removesuffix('.conf')}-planted.conf"
    (root / out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def messages(root: Path, rel: str, tool: str) -> list[str]:
    """What ``tool`` (``vtysh`` or ``frr-reload.py``) said about ``rel``."""
    return [p.message for p in judge(FRR, root, rel) if p.message.startswith(f"{tool}: ")]


def test_registered() -> None:
    """`python -m validate --only frr` runs this validator."""
    assert VALIDATORS["frr"] is FRR


def test_leaf_and_spine_selected(root: Path) -> None:
    """`make validate` judges a rendered leaf and spine (it selects them)."""
    assert {root / LEAF, root / SPINE} <= set(FRR.select(root))


@pytest.mark.parametrize("tool", ["vtysh", "frr-reload.py"])
def test_interface_mtu_rejected(root: Path, tool: str) -> None:
    """The defect of #26 (``mtu 9000`` under an interface) is refused with FRR's words."""
    bad = plant(root, LEAF, " ip address 10.64.0.1/", " mtu 9000")
    got = messages(root, bad, tool)
    assert any("% Unknown command" in m and "mtu 9000" in m for m in got), got
    assert all(m.startswith(f"{tool}: line ") for m in got), got


def test_misspelled_neighbor_rejected_by_vtysh(root: Path) -> None:
    """A misspelled ``neighbor`` in ``router bgp`` is one more line vtysh names."""
    bad = plant(root, SPINE, " neighbor FABRIC remote-as external", " neighbr FABRIC bfd")
    got = messages(root, bad, "vtysh")
    assert any("% Unknown command" in m and "neighbr FABRIC bfd" in m for m in got), got


def test_misspelled_neighbor_rejected_by_frr_reload(root: Path) -> None:
    """frr-reload.py refuses the same file (it quotes vtysh's first complaint)."""
    bad = plant(root, SPINE, " neighbor FABRIC remote-as external", " neighbr FABRIC bfd")
    got = messages(root, bad, "frr-reload.py")
    assert any("% Unknown command" in m and "neighbr FABRIC bfd" in m for m in got), got
