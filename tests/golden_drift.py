"""Goldens: JSON and Markdown drift reports of the seed fixtures, and the malformed-input errors.

Paths in the reports are made relative to the repository so the goldens do not
depend on where the checkout lives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache

from fabric_stack.adapters.discovery import (
    EosReader,
    IbnetdiscoverReader,
    InventoryReader,
    LldpReader,
    NetboxCsvReader,
    NetboxJsonReader,
)
from fabric_stack.drift import DriftReport, PlanIndex, compute_drift, load_ignore
from fabric_stack.errors import FabricStackError
from fabric_stack.views.drift import render_markdown
from tests.drift_fixtures import FIXTURES, REPO, SEED_IB, SEED_ROCE, FakeStore, topology


@cache
def plan_ib() -> PlanIndex:
    """The IB seed cluster's plan index."""
    return PlanIndex.from_topology(topology(SEED_IB))


@cache
def plan_roce() -> PlanIndex:
    """The RoCE seed cluster's plan index."""
    return PlanIndex.from_topology(topology(SEED_ROCE))


def _rel(text: str) -> str:
    return text.replace(str(REPO) + "/", "")


def seed_reports() -> dict[str, DriftReport]:
    """The drift report of every seed fixture, by scenario name."""
    f = FIXTURES
    inv = json.loads((f / "ib" / "inventory-records.json").read_text(encoding="utf-8"))
    return {
        "ib-ibnetdiscover": compute_drift(
            plan_ib(),
            IbnetdiscoverReader(f / "ib/ibnetdiscover.txt", f / "ib/node-name-map").load(),
        ),
        "ib-netbox-csv": compute_drift(
            plan_ib(), NetboxCsvReader(f / "ib/netbox-cables.csv").load()
        ),
        "ib-netbox-json": compute_drift(
            plan_ib(), NetboxJsonReader(f / "ib/netbox-cables.json").load()
        ),
        "ib-inventory": compute_drift(plan_ib(), InventoryReader(FakeStore(inv)).load()),
        "roce-lldp": compute_drift(
            plan_roce(), LldpReader(f / "roce/lldp", f / "roce/mac-table.csv").load()
        ),
        "roce-eos": compute_drift(
            plan_roce(), EosReader(f / "roce/eos", f / "roce/mac-table.csv").load()
        ),
    }


MALFORMED: dict[str, Callable[[], object]] = {
    "lldp-truncated": lambda: LldpReader(FIXTURES / "malformed/lldp-truncated").load(),
    "eos-bad-shape": lambda: EosReader(FIXTURES / "malformed/eos-bad-shape").load(),
    "ibnetdiscover-bad-line": lambda: IbnetdiscoverReader(
        FIXTURES / "malformed/ibnetdiscover-bad-line.txt"
    ).load(),
    "ibnetdiscover-truncated": lambda: IbnetdiscoverReader(
        FIXTURES / "malformed/ibnetdiscover-truncated.txt"
    ).load(),
    "node-name-map-bad": lambda: IbnetdiscoverReader(
        FIXTURES / "ib/ibnetdiscover.txt", FIXTURES / "malformed/node-name-map-bad"
    ).load(),
    "netbox-missing-column": lambda: NetboxCsvReader(
        FIXTURES / "malformed/netbox-missing-column.csv"
    ).load(),
    "netbox-truncated": lambda: NetboxCsvReader(FIXTURES / "malformed/netbox-truncated.csv").load(),
    "ignore-bad-mode": lambda: load_ignore(FIXTURES / "malformed/ignore-bad-mode.yaml"),
}
"""Negative scenarios: each must fail with one error line naming the file and line/path."""


def malformed_errors() -> dict[str, str]:
    """Scenario → the exact error line (relative paths)."""
    out = {}
    for name, load in MALFORMED.items():
        try:
            load()
        except FabricStackError as exc:
            out[name] = _rel(exc.message)
        else:
            out[name] = "NO ERROR"
    return out


def generate() -> dict[str, str]:
    """Golden files: ``<scenario>.json`` and ``<scenario>.md`` per seed fixture, ``errors.txt``."""
    files: dict[str, str] = {}
    for name, report in seed_reports().items():
        files[f"{name}.json"] = (
            _rel(json.dumps(report.to_json(), indent=2, ensure_ascii=False)) + "\n"
        )
        files[f"{name}.md"] = _rel(render_markdown(report))
    files["errors.txt"] = "".join(f"{k}: {v}\n" for k, v in malformed_errors().items())
    return files
