"""Tables that degrade well at 80 columns (issue 32): names whole, never cut to ``su1-…``;
long drift output limited by --max-rows with an "N more" line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from fabric_stack.adapters.inventory import open_store
from fabric_stack.cli import main
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import build_topology
from fabric_stack.views.drift import FINDING_MIN_WIDTH
from tests.drift_fixtures import SEED_IB, inventory_records

NARROW = {"COLUMNS": "80", "NO_COLOR": "1"}


def _fs(*args: str, env: dict[str, str] = NARROW) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), env=env)
    return r.exit_code, r.stdout


@pytest.fixture
def seed_store(tmp_path: Path) -> str:
    """An inventory holding the seed cluster's records (as `pulumi up` writes them)."""
    url = f"sqlite:///{tmp_path}/inventory.db"
    store = open_store(url)
    recs = inventory_records(build_topology(size_fabric(validate_spec(SEED_IB))))
    for kind in ("Cable", "Switch"):
        store.put_many("demo", kind, [(r["name"], r) for r in recs[kind]], status="active")
    return url


def _fits(text: str, width: int = 80) -> None:
    wide = [line for line in text.splitlines() if cell_len(line) > width]
    assert not wide, wide[:3]


def test_drift_at_80_columns_keeps_the_finding_readable_and_stops_at_max_rows(
    seed_store: str,
) -> None:
    # The 512-GPU plan against the 128-GPU inventory: hundreds of findings.
    code, out = _fs("drift", "--gpus", "512", "--inventory", seed_store)
    assert code == 1
    _fits(out)
    more = re.search(r"… ([\d,]+) more findings \(--max-rows 0 shows all; --format json", out)
    assert more, out[-400:]
    total = int(re.search(r"^(\d+) findings:", out, re.M).group(1))  # type: ignore[union-attr]
    assert int(more.group(1).replace(",", "")) == total - 50
    header = next(line for line in out.splitlines() if "Finding and fix" in line)
    finding = header.split("┃")[-2]
    assert len(finding) >= FINDING_MIN_WIDTH  # not squeezed to four letters
    _, few = _fs("drift", "--gpus", "512", "--inventory", seed_store, "--max-rows", "5")
    assert f"… {total - 5:,} more findings" in few
    _, every = _fs("drift", "--gpus", "512", "--inventory", seed_store, "--max-rows", "0")
    assert "more findings" not in every
    _, md = _fs("drift", "--gpus", "512", "--inventory", seed_store, "--format", "markdown")
    assert md.count("- [ ] **") == 50 and f"_… {total - 50:,} more findings" in md


@pytest.mark.parametrize("kind", ["switch", "cable"])
def test_inventory_at_80_columns_shows_whole_names(seed_store: str, kind: str) -> None:
    code, out = _fs("inventory", "--inventory", seed_store, "--kind", kind)
    assert code == 0, out
    _fits(out)
    assert "…" not in out.split("left out at")[0]  # no cell cut with an ellipsis
    code, csv = _fs("inventory", "--inventory", seed_store, "--kind", kind, "--format", "csv")
    names = [line.split(",")[1] for line in csv.splitlines()[1:]]
    shown = set(re.findall(r"│ (\S+)\s", out))
    assert set(names) <= shown, sorted(set(names) - shown)[:5]
    if kind == "cable":  # ten columns do not fit: the ones left out are named
        assert re.search(
            r"left out at 80 columns: .*\(--format csv or json has every", " ".join(out.split())
        )
    wide = _fs("inventory", "--inventory", seed_store, "--kind", kind, env={"COLUMNS": "200"})
    assert "left out" not in wide[1]
