"""NetBox records of random shapes through every reader (issue #49): a property test.

Hypothesis generates NetBox objects whose fields have the right type, the wrong one or are
missing (ids as strings, a site as a bare string, a position as a list, custom fields as a
list, a GUID as a number, terminations of any shape), and a client whose every list page
holds them. Every reader of NetBox (the drift and adopt reader's cables and device
attributes, the inventory store's listing of every record kind) must then either return
or raise the one error family with one line, never a ``KeyError``, ``TypeError`` or
``ValueError`` from deep inside.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.adapters.inventory.netbox.mapping import ENDPOINT
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.errors import FabricStackError

BASE = "http://127.0.0.1:9"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "100"))
"""Examples per run (``make fuzz`` raises it; 1,500 found nothing when this was written)."""

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([2**64, 1.5, float("nan"), "", "7", "x", "1.0", [], [1], {}]),
    st.text(max_size=6),
)
REF = st.one_of(
    ODD,
    st.integers(1, 9),
    st.fixed_dictionaries(
        {"id": st.one_of(st.integers(1, 9), ODD)},
        optional={"name": st.one_of(st.text(max_size=6), ODD), "slug": ODD},
    ),
)
CUSTOM = st.one_of(
    ODD,
    st.fixed_dictionaries(
        {},
        optional={
            "fabric_kind": st.one_of(st.sampled_from([*ENDPOINT, "Server", "Endpoint"]), ODD),
            "fabric_name": st.one_of(st.text(max_size=6), ODD),
            "fabric_stack": st.one_of(st.just("dev"), ODD),
            "fabric_record": st.one_of(st.dictionaries(st.text(max_size=4), ODD, max_size=3), ODD),
            "ib_guid": st.one_of(st.just("0x1"), ODD),
            "fabric_asn": st.one_of(st.fixed_dictionaries({"asn": ODD}), ODD),
        },
    ),
)
TERMS = st.one_of(
    ODD,
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "object_id": st.one_of(st.integers(1, 9), ODD),
                "object": st.one_of(st.fixed_dictionaries({"name": ODD, "device": REF}), ODD),
            },
        ),
        max_size=2,
    ),
)
OBJECT = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.integers(1, 99), ODD),
        "name": st.one_of(st.text(max_size=6), ODD),
        "status": st.one_of(st.sampled_from(["active", {"value": "planned"}]), ODD),
        "custom_fields": CUSTOM,
        "site": REF,
        "rack": REF,
        "role": REF,
        "device_type": REF,
        "device": REF,
        "position": st.one_of(st.floats(allow_nan=True), ODD),
        "a_terminations": TERMS,
        "b_terminations": TERMS,
        "prefix": st.one_of(st.just("10.0.0.0/24"), ODD),
        "vid": ODD,
        "vlan": REF,
    },
)


class _Pages(NetBoxClient):
    """A client whose every GET answers one page of ``objs`` (no server, no socket)."""

    def __init__(self, objs: list[Any]) -> None:
        super().__init__(BASE, "nbt_key.SECRET")
        self.objs = objs

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        return {"count": len(self.objs), "next": None, "results": self.objs}


def _each_reader(client: _Pages) -> None:
    reader = NetboxApiReader(BASE, "nbt_key.SECRET", site="dev", api=client)
    for read in (reader.device_attrs, reader.load):
        try:
            read()
        except FabricStackError as exc:
            assert "\n" not in str(exc), str(exc)
    store = NetBoxStore(f"netbox+{BASE}", api=client, token="nbt_key.SECRET")
    for kind in ENDPOINT:
        try:
            store.list_records(kind)
        except FabricStackError as exc:
            assert "\n" not in str(exc), str(exc)


@settings(max_examples=max(EXAMPLES, 100), deadline=None)
@given(st.lists(OBJECT, min_size=1, max_size=3))
def test_every_reader_takes_records_of_any_shape_or_says_which_field(objs: list[Any]) -> None:
    _each_reader(_Pages(objs))
