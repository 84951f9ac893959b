"""One record per switch model: every per-model fact lives in the catalog entry.

Each entry must declare what its protocol and operating systems need (SONiC: HwSKU per
speed and lanes per cage; InfiniBand: an ibdm system type; NetBox: a library device type
or an explicit None with the reason), no other module may keep a table keyed by catalog
key, and a copy of a record under a new key keeps every fact (a cloned SN5600 used to
lose ``sonic/`` silently: the lane table was keyed by ``"sn5600"``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.adapters.inventory.netbox.mapping import library_type, model_of, type_slug
from fabric_stack.artifacts import RenderContext, applies, render_artifacts
from fabric_stack.drift.plan import PortScheme
from fabric_stack.drift.ports import port_number, sonic_lanes_per_cage
from fabric_stack.hardware.switches import (
    CATALOG,
    OsFamily,
    SwitchModel,
    generic_switch,
    lookup_switch,
    port_mode,
    radix_at,
)
from fabric_stack.naming.devices import PORT_LABEL_TEMPLATES, switch_port_label
from fabric_stack.views.exports import ib_system_type
from fabric_stack.views.registry_tables import switch_models_table

PKG = Path(__file__).resolve().parents[2] / "fabric_stack"
MODELS = list(CATALOG.values())
"""Every catalog entry (the parametrisations below come from the registry)."""

OS_OF_FAMILY = {"mlnx-os": "mlnx-os", "nvos": "nvos", "cumulus": "cumulus"}
"""Port-label family → the operating system that labels ports that way."""


@pytest.mark.parametrize("model", MODELS, ids=[m.key for m in MODELS])
def test_every_entry_declares_what_its_protocol_and_os_need(model: SwitchModel) -> None:
    if model.protocol == "infiniband":
        assert model.ib_system_type, f"{model.key}: an InfiniBand switch needs an ib system type"
        assert model.sonic is None and "sonic" not in model.operating_systems
    else:
        assert model.ib_system_type is None, model.key
    assert model.operating_systems, f"{model.key}: name the operating systems it is planned for"
    assert OS_OF_FAMILY[model.os_family] in model.operating_systems, model.key
    if "sonic" in model.operating_systems:
        assert model.protocol == "ethernet"
        sonic = model.sonic
        assert sonic is not None and sonic.platform and sonic.source
        for mode in model.modes:
            assert sonic.hwsku(mode.speed_gbps), f"{model.key}: no HwSKU at {mode.speed_gbps}G"
            # A port starts on a lane boundary at every split the model supports.
            assert sonic.lanes_per_cage % mode.ports_per_cage == 0, (model.key, mode)
        assert {s.speed_gbps for s in sonic.hwskus} <= set(model.speeds())
    else:
        assert model.sonic is None, model.key
    lib = model.netbox_device_type
    if lib is None:
        assert model.netbox_note, f"{model.key}: say why there is no NetBox device type"
    else:
        assert lib.manufacturer and lib.model and lib.slug and "devicetype-library" in lib.source


def test_generic_switches_declare_their_gaps() -> None:
    for protocol in ("ethernet", "infiniband"):
        g = generic_switch(64, 400, protocol)  # type: ignore[arg-type]
        assert g.sonic is None and g.ib_system_type is None and g.operating_systems == ()
        assert g.netbox_device_type is None and g.netbox_note
        assert g.os_family == "generic"


def test_every_port_label_family_has_one_template() -> None:
    assert set(PORT_LABEL_TEMPLATES) == set(get_args(OsFamily))
    assert {m.os_family for m in MODELS} <= set(PORT_LABEL_TEMPLATES)
    assert switch_port_label("mlnx-os", 33, 2) == "1/17/1"
    assert switch_port_label("mlnx-os", 5, 1) == "1/5"
    assert switch_port_label("cumulus", 34, 2) == "swp17s1"
    assert switch_port_label("cumulus", 5, 1) == "swp5"
    assert switch_port_label("nvos", 74, 2) == "sw37p2"
    assert switch_port_label("generic", 7, 2) == "p7" == switch_port_label("other", 7, 1)


def test_netbox_device_types_come_from_the_record() -> None:
    slugs = [m.netbox_device_type.slug for m in MODELS if m.netbox_device_type]
    assert len(slugs) == len(set(slugs)), "two models share a NetBox device-type slug"
    for m in MODELS:
        assert library_type(m.key) == m.netbox_device_type
        assert model_of(type_slug(m.key)) == m.key
    assert type_slug("generic-64x400") == "generic-64x400" == model_of("generic-64x400")
    assert type_slug("q3400") == "nvidia-q3400-ra"


def test_ib_system_type_comes_from_the_record() -> None:
    for key in [m.key for m in MODELS if m.protocol == "infiniband"]:
        speed = CATALOG[key].native_speed_gbps
        topo = build_topology(size_fabric(validate_spec({"switch": key, "nic_gbps": speed})))
        assert ib_system_type(topo) == CATALOG[key].ib_system_type
    generic = build_topology(size_fabric(validate_spec({"switch": "generic-64x400"})))
    assert ib_system_type(generic) == "SW_64"


def test_drift_reads_sonic_names_with_the_records_lane_table() -> None:
    for m in MODELS:
        assert sonic_lanes_per_cage(m.key) == (m.sonic.lanes_per_cage if m.sonic else 0)
    assert sonic_lanes_per_cage("generic-64x400") == 0 == sonic_lanes_per_cage("")
    scheme = PortScheme("cumulus", 2, radix=128, cages=64, model="sn5600")
    assert port_number("Ethernet184", scheme) == 47


def _clone_context(original: RenderContext, clone: SwitchModel) -> RenderContext:
    plan = original.plan.model_copy(update={"switch_model": clone})
    return RenderContext.from_topology(build_topology(plan))


def test_a_cloned_model_keeps_its_sonic_facts() -> None:
    sn5600 = CATALOG["sn5600"]
    clone = sn5600.model_copy(update={"key": "sn5600-lab", "name": "Lab SN5600"})
    assert clone.sonic == sn5600.sonic and clone.netbox_device_type == sn5600.netbox_device_type
    assert radix_at(clone, 400) == radix_at(sn5600, 400)
    assert port_mode(clone, 400) == port_mode(sn5600, 400)
    spec = validate_spec({"fabric": "roce", "switch": "sn5600"})
    original = RenderContext.from_topology(build_topology(size_fabric(spec)))
    cloned = _clone_context(original, clone)
    assert applies("sonic", cloned)
    assert "sonic" in {a.target for a in render_artifacts("all", cloned)}
    assert {a.path: a.content for a in render_artifacts("sonic", cloned)} == {
        a.path: a.content for a in render_artifacts("sonic", original)
    }
    # The clone without SONiC facts is a model without a SONiC platform: skipped, with why.
    bare = clone.model_copy(update={"sonic": None, "operating_systems": ("cumulus",)})
    assert not applies("sonic", _clone_context(original, bare))


def _keyed_by_model(node: ast.expr | None) -> bool:
    """A dict key naming a catalog model: ``"sn5600"`` or ``("sn5600", 400)``."""
    if isinstance(node, ast.Tuple) and node.elts:
        node = node.elts[0]
    return isinstance(node, ast.Constant) and node.value in CATALOG


def test_no_per_model_table_outside_the_catalog() -> None:
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "hardware" / "switches.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and any(_keyed_by_model(k) for k in node.keys):
                found.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert found == [], "per-model tables outside hardware/switches.py: " + ", ".join(found)


def test_lookup_is_still_by_catalog_key() -> None:
    for m in MODELS:
        assert lookup_switch(m.key.upper()) is m


def test_switch_models_table_lists_the_catalog() -> None:
    lines = switch_models_table().splitlines()
    assert lines[0] == "| key | model | protocol | ports | speeds | OS |"
    assert [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]] == [
        f"`{m.key}`" for m in MODELS
    ]
    assert "| 64 × 800G, 128 × 400G, 256 × 200G, 256 × 100G | cumulus, sonic |" in lines[4]
