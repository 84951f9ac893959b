"""The Pulumi wire format of intent records: record text, bundle encode/decode.

Every fabric resource carries its record as one property, ``record``, holding the
record's canonical JSON text (:func:`record_text`, :func:`record_of`); a
``CableBundle`` or ``RdmaNicGroup`` lists its members compactly (:func:`encode_cables`,
:func:`decode_cables`, :func:`encode_nics`, :func:`decode_nics`), stating the fields all
members share once (:data:`CABLE_SHARED`, :data:`NIC_SHARED`). The Pulumi components
write this format, the providers and the CrossGuard pack read it, and
:mod:`fabric_stack.adapters.pulumi.changes` reads it back from the engine's steps.

Pure: plain JSON in, plain dicts out; nothing here imports Pulumi.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# --------------------------------------------------------------------------- bundles
#
# A CableBundle / RdmaNicGroup resource carries many records. Every value of a
# resource's props goes through the SDK's recursive (per-value) serializer
# several times per preview, so bundles list each member as one line and keep
# the fields shared by all members once. Lines read well in `pulumi preview
# --diff` ("su1-r1-leaf 1/19/1 -> spine-05 1/1/1"). A member whose shared fields
# differ (e.g. an inventory edit) is kept as a full dict instead.

CABLE_SHARED: tuple[str, ...] = (
    "role",
    "network",
    "a_speed_gbps",
    "b_speed_gbps",
    "rail",
    "plane",
    "su",
    "pod",
    "medium",
    "a_optic",
    "b_optic",
    "cable_type",
)
"""CableIntent fields a bundle states once."""

NIC_SHARED: tuple[str, ...] = ("node", "su", "speed_gbps", "network")
"""RdmaNicIntent fields a NIC group states once."""


def cable_line(c: Mapping[str, Any]) -> str:
    """``"a_device a_port -> b_device b_port"``: one cable of a bundle."""
    return f"{c['a_device']} {c['a_port']} -> {c['b_device']} {c['b_port']}"


def encode_cables(cables: list[dict[str, Any]]) -> dict[str, Any]:
    """Bundle props for ``cables`` (CableIntent props): ``shared`` + one line per cable."""
    shared = {k: cables[0][k] for k in CABLE_SHARED} if cables else {}
    items: list[Any] = []
    for c in cables:
        same = all(c[k] == shared[k] for k in CABLE_SHARED)
        items.append(cable_line(c) if same else dict(c))
    return {"shared": shared, "cables": items}


def decode_cables(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """CableIntent props of every cable in bundle ``props`` (compact or full items)."""
    shared = dict(props.get("shared") or {})
    out: list[dict[str, Any]] = []
    for item in props.get("cables") or []:
        if isinstance(item, str):
            left, _, right = item.partition(" -> ")
            a_dev, _, a_port = left.partition(" ")
            b_dev, _, b_port = right.partition(" ")
            if not (a_port and b_port):
                raise ValueError(f"cable line {item!r} is not 'a_device a_port -> b_device b_port'")
            out.append(
                {
                    **shared,
                    "name": f"{a_dev}:{a_port}",
                    "a_device": a_dev,
                    "a_port": a_port,
                    "b_device": b_dev,
                    "b_port": b_port,
                }
            )
        else:
            out.append({**shared, **dict(item)})
    return out


def nic_line(n: Mapping[str, Any]) -> str:
    """``"mlx5_3 r4 p1 pcie1/0 gpu 3@pcie1/0 -> su1-r4-leaf 1/7/1"``: one NIC of a group.

    NIC, rail, plane, its PCIe switch/NUMA node, each served GPU with its PCIe
    switch/NUMA node, and the leaf port it is cabled to.
    """
    gpus = ",".join(
        f"{g}@{s}/{u}"
        for g, s, u in zip(n["gpus"], n["gpu_pcie_switches"], n["gpu_numas"], strict=True)
    )
    return (
        f"{n['nic']} r{n['rail']} p{n['plane']} {n['pcie_switch']}/{n['numa']} "
        f"gpu {gpus or '-'} -> {n['leaf']} {n['leaf_port']}"
    )


def encode_nics(nics: list[dict[str, Any]]) -> dict[str, Any]:
    """NIC-group props for ``nics`` (RdmaNicIntent props): ``shared`` + one line per NIC."""
    shared = {k: nics[0][k] for k in NIC_SHARED} if nics else {}
    items: list[Any] = []
    for n in nics:
        same = all(n[k] == shared[k] for k in NIC_SHARED) and n["name"] == f"{n['node']}:{n['nic']}"
        items.append(nic_line(n) if same else dict(n))
    return {"shared": shared, "nics": items}


def decode_nics(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """RdmaNicIntent props of every NIC in group ``props`` (compact or full items)."""
    shared = dict(props.get("shared") or {})
    out: list[dict[str, Any]] = []
    for item in props.get("nics") or []:
        if not isinstance(item, str):
            out.append({**shared, **dict(item)})
            continue
        try:
            left, _, right = item.partition(" -> ")
            nic, rail, plane, pcie, _gpu, gpus = left.split(" ")
            sw, _, numa = pcie.rpartition("/")
            leaf, _, leaf_port = right.partition(" ")
            triples = [] if gpus == "-" else [g.split("@") for g in gpus.split(",")]
            out.append(
                {
                    **shared,
                    "name": f"{shared.get('node')}:{nic}",
                    "nic": nic,
                    "rail": int(rail[1:]),
                    "plane": int(plane[1:]),
                    "pcie_switch": sw,
                    "numa": int(numa),
                    "gpus": [int(g) for g, _ in triples],
                    "gpu_pcie_switches": [loc.rpartition("/")[0] for _, loc in triples],
                    "gpu_numas": [int(loc.rpartition("/")[2]) for _, loc in triples],
                    "leaf": leaf,
                    "leaf_port": leaf_port,
                }
            )
        except ValueError as exc:
            raise ValueError(f"NIC line {item!r} is malformed ({exc})") from None
    return out


# --------------------------------------------------------------------------- wire format
#
# Why one JSON text property per record and not one property per field: the
# Python SDK turns every top-level input into an Output it tracks until the
# program ends (and waits on all of them, repeatedly), and the engine marshals,
# copies and logs every value of every resource several times per preview. A
# 1,226-resource preview (1,024 -> 4,096 GPUs) took 12-15 s with flat records
# and 2x the time of the same number of one-property resources; see
# bench/README.md. A string is one value for both. Pulumi's diff display
# decodes JSON text, so `pulumi preview --diff` still shows the record field by
# field ("~ record: (json) { ~ ports_up: 16 => 32 }").

RECORD_KEY = "record"
"""Resource input holding the record's JSON text."""


def record_text(fields: Mapping[str, Any]) -> str:
    """Canonical JSON of a record's fields (sorted keys, compact): equal records, equal text.

    Canonical so that a record read back from the inventory (``pulumi refresh``)
    is the same text the program sent, and the state does not churn.
    """
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_of(props: Mapping[str, Any]) -> dict[str, Any]:
    """The record fields of resource ``props`` (the inverse of :func:`record_text`).

    Props without a ``record`` key are taken to be the fields themselves.
    Raises ValueError when ``record`` is not the JSON text of an object.
    """
    raw = props.get(RECORD_KEY)
    if raw is None:
        return dict(props)
    if not isinstance(raw, str):
        raise ValueError(f"{RECORD_KEY}: expected JSON text, got {type(raw).__name__}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{RECORD_KEY}: not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{RECORD_KEY}: expected a JSON object, got {type(value).__name__}")
    return value
