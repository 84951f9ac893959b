"""Identity resolution: the many spellings of one device or port, mapped onto the plan's.

Sources name things their own way. This module maps them onto the names the
plan uses (``su1-r3-leaf``, ``1/4/1``, ``mlx5_2``) before links are matched:

* **Devices.** FQDNs (``spine-01.dc1`` → ``spine-01``), quoted strings,
  MLNX-OS switch NodeDescs (``MF0;su1-r1-leaf:MQM9700/U1``), case.
* **Switch ports.** Every spelling of a cage and lane is turned into the
  1-based *logical* port number, then into the label the plan uses for that
  switch's OS (:func:`fabric_stack.naming.devices.switch_port_label`): ``swp4s1``
  (Cumulus), ``1/4/2`` (MLNX-OS), ``Ethernet4/2`` (EOS, ``Ethernet1/4/2`` on
  modular chassis), ``p8`` (generic) and a bare ``8`` (ibnetdiscover) are the
  same port on a 2-ports-per-cage switch.
* **Server ports.** HCA names (``mlx5_N``, the NIC index N), ``"host mlx5_N"``
  NodeDescs, the server profile's netdev names (``ibp64s0`` → ``mlx5_3`` on a DGX
  H100), interface aliases and MAC addresses from a MAC table.
* **Names that name no host**: an HCA's factory NodeDesc (``MT4129 ConnectX7   Mellanox
  Technologies``) or a default host name (``localhost``), :func:`is_factory_desc`; the
  resolver binds such a device to the host planned on its switch port (:meth:`Identity.bind`).
* **Unresolvable ports** (a MAC without a table) keep their raw spelling
  with ``port_type="mac"``; the engine may still complete them from the
  planned peer and says so in the report notes.
"""

from __future__ import annotations

import re
from typing import ClassVar

from fabric_stack.drift.model import Endpoint, PortType, Snapshot
from fabric_stack.drift.plan import PlanIndex, PortScheme
from fabric_stack.drift.ports import port_number
from fabric_stack.naming.nodedesc import mf0_host
from fabric_stack.nos.cumulus import CUMULUS
from fabric_stack.nos.eos import EOS
from fabric_stack.nos.generic import GENERIC
from fabric_stack.nos.mlnx_os import MLNX_OS
from fabric_stack.nos.nvos import NVOS

_HCA = re.compile(r"^(\S+?)[\s/:]+(mlx\d+_\d+)$")
_MLX = re.compile(r"^mlx(\d+)_(\d+)$", re.I)
_MAC = re.compile(r"^[0-9a-f]{2}([:.-]?[0-9a-f]{2}){5}$", re.I)


_FACTORY = re.compile(r"^MT\d{4,5}\s|Mellanox Technologies|\bConnectX|\bBlueField", re.I)
_GUID_TAIL = re.compile(r"\s+[0-9a-f]{16}$", re.I)


DEFAULT_HOSTNAMES = frozenset({"localhost", "localhost.localdomain", "ubuntu", "debian"})
"""Host names an OS install leaves until someone sets one (seen in real dumps: ``localhost
HCA-6``, ``ubuntu mlx5_1`` in topograph-ndr-dgx-example.out): a NodeDesc naming no host."""


def is_factory_desc(name: str) -> bool:
    """A device name that says nothing of which host it is: a factory or default NodeDesc.

    ``MT4129 ConnectX7   Mellanox Technologies`` (a ConnectX-7 whose host never set its
    NodeDesc: no ``rdma-ndd`` running), alone or as the ibnetdiscover reader's
    ``<description> <guid>`` name for one of many, or a default host name (``localhost``).
    """
    s = _GUID_TAIL.sub("", unquote(name))
    return s.lower() in DEFAULT_HOSTNAMES or bool(_FACTORY.search(s))


def unquote(text: str) -> str:
    """``"Ethernet3/1"`` with literal quotes (EOS ``interfaceId``) → ``Ethernet3/1``."""
    s = text.strip()
    while len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    return s


def normalize_mac(text: str) -> str:
    """Any MAC spelling (``0C42.A1B2.C3D4``, ``0c-42-…``) → ``0c:42:a1:b2:c3:d4``."""
    hexes = re.sub(r"[^0-9a-fA-F]", "", text).lower()
    return ":".join(hexes[i : i + 2] for i in range(0, 12, 2)) if len(hexes) == 12 else text.lower()


def is_mac(text: str) -> bool:
    """True for a MAC address in any of the usual spellings."""
    return bool(_MAC.match(text.strip()))


def normalize_guid(text: str) -> str:
    """``0xfc6a1c0300e4a1c0``, ``S-fc6a…`` or an unpadded ``(c42a…)`` → 16 lower-case hex digits."""
    s = text.strip().strip('()"')
    if len(s) > 2 and s[1] == "-" and s[0] in "SHRshr":
        s = s[2:]
    s = s.removeprefix("0x").removeprefix("0X")
    return f"{int(s, 16):016x}"


def split_hca(desc: str) -> tuple[str, str | None]:
    """``"gpu001 mlx5_3"`` → ``("gpu001", "mlx5_3")``; a plain hostname → ``(name, None)``."""
    s = unquote(desc)
    m = _HCA.match(s)
    if m:
        return m.group(1), m.group(2)
    return s, None


def hca_to_ibdev(hca: str) -> str | None:
    """``HCA-1`` → ``mlx5_0`` (MLNX_OFED counts adapters from 1, the mlx5 driver from 0).

    UNVERIFIED: both number the adapters in PCI probe order on the hosts we
    know of, but nothing guarantees the two orders agree; the drift report
    says so whenever it uses this mapping.
    """
    m = re.match(r"^HCA-(\d+)$", hca, re.I)
    if not m or int(m.group(1)) < 1:
        return None
    return f"mlx5_{int(m.group(1)) - 1}"


_CAGE_READERS = (CUMULUS.parse_port, EOS.parse_port, MLNX_OS.parse_port, NVOS.parse_port)
"""The switch OSes whose cage/lane spellings name a port here, in the order tried."""


def switch_port_number(raw: str, ports_per_cage: int) -> int | None:
    """Logical (1-based) port number of any switch-port spelling; ``None`` if unreadable.

    ``ports_per_cage`` is how many logical ports the switch makes of a cage at
    the planned speed; a lane beyond it is not a port of this switch. The spellings are
    the switch OS modules' (:mod:`fabric_stack.nos`): Cumulus, EOS, MLNX-OS, NVOS
    (``swNpM`` only), generic ``pN``, and a bare number.
    """
    s = unquote(raw)
    if s.isdigit():
        return int(s) or None
    ref = next((r for read in _CAGE_READERS if (r := read(s)) is not None), None)
    if ref is None or ref.spelling == "nvos-split":
        generic = GENERIC.parse_port(s) if ref is None else None
        return (generic.number or None) if generic is not None else None
    cage, lane = ref.cage, ref.lane
    if cage < 1 or lane < 1 or lane > ports_per_cage:
        return None
    return (cage - 1) * ports_per_cage + lane


class Identity:
    """Resolves one snapshot's names onto the plan's, with caches and notes.

    One instance per (plan, snapshot): it carries the snapshot's MAC table and
    interface aliases, and counts what it had to interpret so the report can
    say so (``notes``).
    """

    def __init__(self, plan: PlanIndex, snapshot: Snapshot | None = None) -> None:
        self.plan = plan
        self.macs = {normalize_mac(k): v for k, v in (snapshot.macs if snapshot else {}).items()}
        self.aliases = dict(snapshot.aliases) if snapshot else {}
        self._devices: dict[str, str] = {}
        # Raw names that need no interpretation: the plan's own device names.
        self.known_devices: dict[str, str] = {name: name for name in plan.devices}
        self._ports: dict[tuple[str, str], tuple[str, PortType]] = {}
        self._lower = {name.lower(): name for name in plan.devices}
        self._notes: dict[str, tuple[int, str]] = {}

    # ------------------------------------------------------------------ notes

    def note(self, key: str, example: str) -> None:
        """Count one interpretation of kind ``key`` (first example kept)."""
        n, first = self._notes.get(key, (0, example))
        self._notes[key] = (n + 1, first)

    _NOTE_TEXT: ClassVar[dict[str, str]] = {
        "fqdn": "{n} FQDN device name(s) read as plan names (e.g. {ex})",
        "mf0": "{n} MLNX-OS switch NodeDesc(s) read as hostnames (e.g. {ex})",
        "quoted": "{n} quoted port id(s) unquoted (e.g. {ex})",
        "alias": "{n} port alias(es) mapped via the MAC table / interface aliases (e.g. {ex})",
        "mac": "{n} port(s) resolved from MAC addresses (e.g. {ex})",
        "mac_unresolved": (
            "{n} port id(s) are MAC addresses with no MAC table entry (e.g. {ex}); "
            "give --mac-table to check them"
        ),
        "completed": (
            "{n} port(s) the source did not name were inferred from the plan and are not "
            "verified (e.g. {ex})"
        ),
        "unresolved": "{n} port name(s) could not be mapped onto the plan (e.g. {ex})",
        "case": "{n} device name(s) matched ignoring case (e.g. {ex})",
        "netdev": (
            "{n} server netdev name(s) read as the server profile's RDMA device (e.g. {ex})"
        ),
        "hca": (
            "{n} MLNX_OFED HCA-N port name(s) read as mlx5_(N-1) (e.g. {ex}); UNVERIFIED: "
            "both count adapters in probe order, nothing guarantees they agree"
        ),
        "factory": (
            "{n} device name(s) that name no host (a factory NodeDesc or a default host "
            "name) bound to the host planned on their switch ports (e.g. {ex})"
        ),
        "unknown": (
            "{n} port name(s) cannot exist on the planned switch model (e.g. {ex}); "
            "see the unknown_port findings"
        ),
    }

    def notes(self) -> list[str]:
        """Human lines describing what identity resolution interpreted."""
        out = []
        for key, (n, ex) in sorted(self._notes.items()):
            out.append(self._NOTE_TEXT.get(key, key + ": {n} (e.g. {ex})").format(n=n, ex=ex))
        return out

    # ------------------------------------------------------------------ devices

    def device(self, raw: str) -> str:
        """The plan's name for a device spelled ``raw`` (unknown devices: cleaned short name)."""
        hit = self._devices.get(raw)
        if hit is not None:
            return hit
        name = self._resolve_device(raw)
        self._devices[raw] = name
        return name

    def bind(self, raw: str, name: str) -> None:
        """From now on, the device spelled ``raw`` is the plan's ``name`` (a bound HCA)."""
        self._devices[raw] = name
        self.note("factory", f"{unquote(raw)} → {name}")

    def _resolve_device(self, raw: str) -> str:
        s = unquote(raw)
        devices = self.plan.devices
        if s in devices:
            return s
        if (host := mf0_host(s)) is not None:
            s = host.strip()
            self.note("mf0", f"{raw} → {s}")
            if s in devices:
                return s
        if s.lower() in self._lower:
            self.note("case", f"{raw} → {self._lower[s.lower()]}")
            return self._lower[s.lower()]
        if "." in s and not is_mac(s):
            short = s.split(".", 1)[0]
            if short and not short.isdigit():
                target = self._lower.get(short.lower(), short)
                if target in devices:
                    self.note("fqdn", f"{raw} → {target}")
                return target
        return s

    # ------------------------------------------------------------------ ports

    def scheme(self, device: str) -> PortScheme | None:
        """Port scheme of a planned switch."""
        return self.plan.schemes.get(device)

    def port(self, device: str, raw: str) -> tuple[str, PortType]:
        """The plan's spelling of port ``raw`` on (resolved) ``device``, and how it was read."""
        key = (device, raw)
        hit = self._ports.get(key)
        if hit is not None:
            return hit
        out = self._resolve_port(device, raw)
        self._ports[key] = out
        return out

    def _resolve_port(self, device: str, raw: str) -> tuple[str, PortType]:
        scheme = self.plan.schemes.get(device)
        if scheme is not None and raw.isdigit() and int(raw):
            # ibnetdiscover's bare logical numbers: the common case of a big dump.
            n = port_number(raw, scheme)
            label = scheme.label(n) if n is not None else None
            if label is None:
                self.note("unknown", f"{device} {raw}")
                return raw, "unknown"
            return label, "name"
        s = unquote(raw)
        if s != raw.strip():
            self.note("quoted", f"{raw} → {s}")
        alias = self.aliases.get((device, s))
        if alias is not None:
            self.note("alias", f"{device} {s} → {alias}")
            return alias, "name"
        if scheme is not None:
            n = port_number(s, scheme)
            label = scheme.label(n) if n is not None else None
            if label is None:
                self.note("unknown", f"{device} {s}")
                return s, "unknown"
            return label, "name"
        ports = self.plan.server_ports.get(device)
        if ports is not None:
            if s in ports:
                return s, "name"
            rdma = self.plan.netdevs.get(s)
            if rdma is not None and rdma in ports:
                self.note("netdev", f"{device} {s} → {rdma}")
                return rdma, "name"
            if m := _MLX.match(s):
                return f"mlx{m.group(1)}_{int(m.group(2))}", "name"
            ibdev = hca_to_ibdev(s)
            if ibdev is not None and ibdev in ports:
                self.note("hca", f"{device} {s} → {ibdev}")
                return ibdev, "name"
            lowered = s.lower()
            if lowered in ports:
                return lowered, "name"
            return s, "unresolved"
        return s, "name"

    def endpoint(self, ep: Endpoint) -> Endpoint:
        """Resolve a raw endpoint; unresolvable ports keep their spelling and port_type."""
        if ep.port_type == "mac":
            mac = normalize_mac(ep.port)
            hit = self.macs.get(mac)
            if hit is not None:
                device = self.device(hit.device)
                port, ptype = self.port(device, hit.port)
                self.note("mac", f"{mac} → {device} {port}")
                return Endpoint(device, port, ptype)
            device = self.device(ep.device)
            if ep.hint:
                port, ptype = self.port(device, ep.hint)
                if ptype == "name" and (device, port) in self.plan.at:
                    return Endpoint(device, port, ptype)
            return Endpoint(device, mac, "mac")
        device = self.device(ep.device)
        port, ptype = self.port(device, ep.port)
        if ptype == "unresolved" and ep.hint:
            port2, ptype2 = self.port(device, ep.hint)
            if ptype2 == "name":
                return Endpoint(device, port2, ptype2)
        return Endpoint(device, port, ptype)

    def port_text(self, device: str, port: str) -> str:
        """``1/4/1 (port 7)`` for a switch port whose label is not its number, else the port."""
        scheme = self.plan.schemes.get(device)
        if scheme is None:
            return port
        n = self.plan.planned_number((device, port))
        if n is None:
            n = port_number(port, scheme)
        if n is None or port == str(n):
            return port
        return f"{port} (port {n})"
