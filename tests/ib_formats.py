"""The same InfiniBand fabric in the other tools' layouts, from an ``ibnetdiscover`` dump.

Tests and benchmarks get an ``iblinkinfo`` or ``ibdiagnet2.lst`` text of a fabric whose
``ibnetdiscover`` dump they already have (a plan's fixture, the 32k-GPU bench
snapshot), so every InfiniBand reader can be held to the same answer. The layouts are
the ones the readers document (real samples in ``../shared/realdata/iblinkinfo`` and
``ibdiagnet``); LIDs are assigned one per node in dump order.
"""

from __future__ import annotations

from fabric_stack.adapters.discovery._infiniband import LANE_NAMES
from fabric_stack.adapters.discovery.ibdiagnet import SPD_NAMES
from fabric_stack.adapters.discovery.ibnetdiscover import _parse_lines
from fabric_stack.naming.ib_nodes import IbNode

_LANE = {name: gbps for gbps, name in LANE_NAMES.items()}
_SPD = {name: spd for spd, name in SPD_NAMES.items()}


def _parsed(
    text: str,
) -> tuple[dict[str, IbNode], list[tuple[str, int, str, int, tuple[str, str] | None, int]]]:
    nodes, ports, _refs, _warn = _parse_lines("<dump>", text, None)
    return nodes, ports


def iblinkinfo_of(text: str, down: dict[str, list[int]] | None = None) -> str:
    """``iblinkinfo`` output of the fabric of an ``ibnetdiscover`` dump (``down``: GUID →
    port numbers to print as ``Down/ Polling``)."""
    nodes, ports = _parsed(text)
    lid = {guid: i for i, guid in enumerate(nodes, 1)}
    by_node: dict[str, list[str]] = {}
    for guid, port, rguid, rport, rate, _line in ports:
        width, name = rate if rate is not None else ("4", "NDR")
        far = nodes[rguid]
        link = f"{width}X {_LANE[name]:>13} Gbps Active/  LinkUp"
        body = (
            f"{lid[guid]:6d} {port:4d}[  ] ==( {link})==> "
            f'{lid[rguid]:6d} {rport:4d}[  ] "{far.desc}" ( )'
        )
        lead = f"      0x{guid} " if nodes[guid].kind != "Switch" else "     "
        by_node.setdefault(guid, []).append(lead + body)
    for guid, numbers in (down or {}).items():
        for port in numbers:
            by_node.setdefault(guid, []).append(
                f"     {lid[guid]:6d} {port:4d}[  ] ==(                Down/ Polling)==>"
                '             [  ] "" ( )'
            )
    out: list[str] = []
    for guid, node in nodes.items():
        if node.kind == "Switch":
            out.append(f"Switch: 0x{guid} {node.desc}:")
        else:
            out.append(f"CA: {node.desc}:")
        out.extend(by_node.get(guid, []))
    return "\n".join(out) + "\n"


def iblinkinfo_line_of(text: str) -> str:
    """``iblinkinfo --line`` output of the fabric of an ``ibnetdiscover`` dump: one line per
    connected port, both ends' GUIDs, the own description padded to 30 (``"%30s"``)."""
    nodes, ports = _parsed(text)
    lid = {guid: i for i, guid in enumerate(nodes, 1)}
    out: list[str] = []
    for guid, port, rguid, rport, rate, _line in ports:
        width, name = rate if rate is not None else ("4", "NDR")
        link = f"{width}X {_LANE[name]:>13} Gbps Active/  LinkUp"
        out.append(
            f'0x{guid} "{nodes[guid].desc:>30}" {lid[guid]:6d} {port:4d}[  ] ==( {link})==>  '
            f'0x{rguid} {lid[rguid]:6d} {rport:4d}[  ] "{nodes[rguid].desc}" ( )'
        )
    return "\n".join(out) + "\n"


def lst_of(text: str) -> str:
    """``ibdiagnet2.lst`` of the fabric of an ``ibnetdiscover`` dump (one line per cable end)."""
    nodes, ports = _parsed(text)
    lid = {guid: i for i, guid in enumerate(nodes, 1)}

    def end(guid: str, port: int) -> str:
        n = nodes[guid]
        kind = "SW" if n.kind == "Switch" else "CA"
        system = n.sysimg or guid
        return (
            f"{{ {kind} Ports:{64 if kind == 'SW' else 1:02X} SystemGUID:{system} "
            f"NodeGUID:{guid} PortGUID:{guid} VenID:000002C9 DevID:D2F0 Rev:000000A0 "
            f"{{{n.desc}}} LID:{lid[guid]:04X} PN:{port:02X} }}"
        )

    lines = []
    for guid, port, rguid, rport, rate, _line in ports:
        width, name = rate if rate is not None else ("4", "NDR")
        lines.append(f"{end(guid, port)} {end(rguid, rport)} PHY={width}x LOG=ACT SPD={_SPD[name]}")
    return "\n".join(lines) + "\n"


__all__ = ["iblinkinfo_line_of", "iblinkinfo_of", "lst_of"]
