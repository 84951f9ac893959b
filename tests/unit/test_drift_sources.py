"""The drift-source registry: `drift` and `adopt` offer exactly its options, and every
entry's reader loads a small fixture (a new entry without one fails here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from fabric_stack.adapters.discovery import netbox_live
from fabric_stack.adapters.discovery.registry import (
    BY_NAME,
    EVERY_NETWORK,
    SHARED,
    SOURCES,
    SourceOptionError,
)
from fabric_stack.adapters.discovery.selection import (
    LAYOUTS,
    missing_error,
    options_of,
    select_sources,
    sources_of,
)
from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.cli.adopt import adopt_cmd
from fabric_stack.cli.drift import drift_cmd
from tests.ib_formats import iblinkinfo_of, lst_of

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "drift"
COMMANDS: dict[str, click.Command] = {"drift": drift_cmd, "adopt": adopt_cmd}


def _registry_names() -> set[str]:
    return {o.name for s in SOURCES for o in (s.option, *s.extras)} | {o.name for o in SHARED}


@pytest.mark.parametrize("command", sorted(LAYOUTS))
def test_the_command_offers_exactly_the_registry_options(command: str) -> None:
    cmd = COMMANDS[command]
    names = _registry_names()
    params = [p for p in cmd.params if isinstance(p, click.Option) and p.name in names]
    expected = options_of(command)
    assert [p.name for p in params] == [o.name for o in expected]
    short = LAYOUTS[command].short_help
    for param, option in zip(params, expected, strict=True):
        assert param.opts == [option.flag]
        assert param.metavar == option.shown_metavar
        assert param.help == option.help_for(short)
    # Nothing else on the command looks like a source flag the registry does not know.
    flags = {o for p in cmd.params for o in p.opts}
    assert not {f"--{s.name}" for s in SOURCES if command not in s.commands} & flags


def test_registry_entries_are_consistent() -> None:
    flags = [o.flag for s in SOURCES for o in (s.option, *s.extras)] + [o.flag for o in SHARED]
    assert len(flags) == len(set(flags)), flags
    assert len(BY_NAME) == len(SOURCES)
    keys = set(BY_NAME) | {o.key for o in SHARED}
    for layout in LAYOUTS.values():
        assert set(layout.order) <= keys and set(layout.named) <= set(BY_NAME)
    for s in SOURCES:
        assert s.networks and s.networks <= EVERY_NETWORK, s.name
        assert set(s.commands) <= set(LAYOUTS), s.name
        assert set(s.uses) <= {o.key for o in SHARED}, s.name
        assert set(s.borrows) <= {e.key for o in SOURCES for e in o.extras}, s.name
        assert s.formats, f"{s.name}: say what it accepts, with an example (README table)"


def test_the_errors_read_as_they_always_did() -> None:
    assert missing_error("drift") == (
        "give at least one source: --lldp, --eos, --nvue, --sonic, --ibnetdiscover, "
        "--iblinkinfo, --ibdiagnet, --netbox-csv, --netbox-json, --netbox, --inventory, "
        "--slurm-topology or --k8s-nodes"
    )
    assert missing_error("adopt") == (
        "give a source: --ibnetdiscover, --iblinkinfo, --ibdiagnet, --lldp, --eos, --nvue, "
        "--sonic, --netbox-csv, --netbox-json or --netbox"
    )
    with pytest.raises(SourceOptionError) as orphan:
        select_sources("adopt", {"node_name_map": Path("m")})
    assert orphan.value.message == (
        "--node-name-map needs --ibnetdiscover, --iblinkinfo or --ibdiagnet"
    )
    # Another InfiniBand source reads the map too: no orphan.
    chosen = select_sources("drift", {"node_name_map": Path("m"), "iblinkinfo": Path("f")})
    assert [c.source.name for c in chosen.chosen] == ["iblinkinfo"]
    with pytest.raises(SourceOptionError) as orphan:
        select_sources("drift", {"netbox_tag": "t", "lldp": Path("x")})
    assert orphan.value.message == (
        "--netbox-token-file/--netbox-branch/--netbox-site/--netbox-tag need --netbox URL"
    )


# --------------------------------------------------------------------------- fixtures


def _inventory(tmp_path: Path, _mp: pytest.MonkeyPatch) -> dict[str, Any]:
    url = f"sqlite:///{tmp_path}/inventory.db"
    records = json.loads((FIX / "ib" / "inventory-records.json").read_text(encoding="utf-8"))
    store = open_store(url)
    for kind in ("Cable", "Switch"):
        store.put_many("dev", kind, [(r["name"], r) for r in records[kind]], status="active")
    return {"inventory": url}


def _netbox_live(_tmp: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    doc = json.loads((FIX / "ib" / "netbox-cables.json").read_text(encoding="utf-8"))
    api = FakeNetBox()
    api.create("dcim/cables", doc["results"])
    mp.setattr(netbox_live, "NetBoxClient", lambda _base, _token, **_branch: api)
    mp.setenv("NETBOX_TOKEN", "t")
    return {"netbox_url": "http://netbox.example"}


def _ib_as(fmt: str) -> Callable[[Path, pytest.MonkeyPatch], dict[str, Any]]:
    """The IB fixture dump written in another tool's layout (tests/ib_formats.py)."""

    def make(tmp: Path, _mp: pytest.MonkeyPatch) -> dict[str, Any]:
        text = (FIX / "ib" / "ibnetdiscover.txt").read_text(encoding="utf-8")
        path = tmp / f"{fmt}.txt"
        path.write_text(iblinkinfo_of(text) if fmt == "iblinkinfo" else lst_of(text))
        return {fmt: path, "node_name_map": FIX / "ib" / "node-name-map"}

    return make


def _files(**values: str) -> Callable[[Path, pytest.MonkeyPatch], dict[str, Any]]:
    return lambda _tmp, _mp: {k: FIX / v for k, v in values.items()}


FIXTURES: dict[str, Callable[[Path, pytest.MonkeyPatch], dict[str, Any]]] = {
    "ibnetdiscover": _files(ibnetdiscover="ib/ibnetdiscover.txt", node_name_map="ib/node-name-map"),
    "iblinkinfo": _ib_as("iblinkinfo"),
    "ibdiagnet": _ib_as("ibdiagnet"),
    "lldp": _files(lldp="roce/lldp", mac_table="roce/mac-table.csv"),
    "eos": _files(eos="roce/eos"),
    "nvue": _files(nvue="../discovery-formats/nvue"),
    "sonic": _files(sonic="../discovery-formats/sonic"),
    "netbox-csv": _files(netbox_csv="ib/netbox-cables.csv"),
    "netbox-json": _files(netbox_json="ib/netbox-cables.json"),
    "inventory": _inventory,
    "netbox": _netbox_live,
    "slurm-topology": _files(slurm_topology="../scheduler/slurm/scontrol-show-topology.txt"),
    "k8s-nodes": _files(k8s_nodes="../scheduler/k8s/nodes-drifted.json"),
}
"""Per source: the options that point its reader at a fixture of tests/fixtures/drift."""


@pytest.mark.parametrize("name", [s.name for s in SOURCES])
def test_every_source_reader_loads_a_fixture(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert name in FIXTURES, f"drift source {name!r}: add a fixture to FIXTURES"
    source = BY_NAME[name]
    options = FIXTURES[name](tmp_path, monkeypatch)
    selection = select_sources(source.commands[0], options)
    assert [c.source.name for c in selection.chosen] == [name]
    (reader,) = selection.readers(stack="dev")
    snap = reader.load()
    # A scheduler's view (Slurm tree, Kubernetes labels) reports devices, not cables.
    assert (snap.links or snap.scheduler) and snap.devices, name
    # The networks the registry states are the ones the reader's snapshot is scoped to
    # (open, inferred from the devices, for a source that reports every network).
    assert snap.networks == (None if source.networks == EVERY_NETWORK else source.networks)
    if source.option.is_path:
        assert selection.input_bytes() > 0


def test_readers_run_in_the_command_order() -> None:
    options = {"ibnetdiscover": FIX / "ib/ibnetdiscover.txt", "lldp": FIX / "roce/lldp"}
    assert [s.name for s in sources_of("drift")][:5] == [
        "lldp",
        "eos",
        "nvue",
        "sonic",
        "ibnetdiscover",
    ]
    drift = select_sources("drift", dict(options))
    adopt = select_sources("adopt", dict(options))
    assert [c.source.name for c in drift.chosen] == ["lldp", "ibnetdiscover"]
    assert [c.source.name for c in adopt.chosen] == ["ibnetdiscover", "lldp"]
