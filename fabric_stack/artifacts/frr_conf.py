"""FRR integrated-config text of one switch: a serializer of its typed routing config.

``render frr`` writes it as is; ``render sonic`` writes it under SONiC's interface names.
Both serialize the same :class:`~fabric_stack.intent.switch_config.RoutingConfig`, so
neither renderer imports the other. The syntax and its sources are in :mod:`.frr`; the
comment marker (``!``, also FRR's section separator) and the defaults are FRR's
(:mod:`fabric_stack.nos.frr`).
"""

from __future__ import annotations

from fabric_stack.artifacts._base import GENERATED_BY
from fabric_stack.intent.switch_config import RoutingConfig, SwitchConfig
from fabric_stack.nos.frr import FRR, FRR_DEFAULTS

_SEP = FRR.comment_line("")
"""FRR's section separator: an empty comment line (``!``)."""


def frr_conf(cfg: SwitchConfig, target: str) -> str:
    """The FRR config of one routed switch, its header naming ``target`` as its generator."""
    r = cfg.routing
    if r is None:
        raise ValueError(f"{cfg.name}: no routing in its configuration")
    sw = cfg.switch
    d, rem = FRR_DEFAULTS, FRR.comment_line
    lines = [
        rem(f"FRR configuration: {sw.name} ({r.role}, plane {r.plane}, AS {r.asn})"),
        rem(GENERATED_BY.format(target=target)),
        rem(f"Fabric links: {r.fabric_links}; host addressing: {r.host_addressing}."),
        f"frr version {d.version}",
        f"frr defaults {d.profile}",
        f"hostname {sw.name}",
        "service integrated-vtysh-config",
        _SEP,
    ]
    lines += _interfaces(r)
    lines += [
        f"router bgp {r.asn}",
        f" bgp router-id {r.router_id}",
        " bgp bestpath as-path multipath-relax",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
    ]
    lines += _neighbours(r)
    lines += [f" {_SEP}", " address-family ipv4 unicast", f"  network {r.loopback}/32"]
    if r.p2p31_hosts and r.gateways:
        lines.append("  redistribute connected")
        lines += [f"  aggregate-address {g.subnet} summary-only" for g in r.gateways]
    else:
        lines += [f"  network {g.subnet}" for g in r.gateways]
    lines += [f"  maximum-paths {r.maximum_paths}", " exit-address-family", "exit", _SEP]
    return "\n".join(lines) + "\n"


def _interfaces(r: RoutingConfig) -> list[str]:
    out = ["interface lo", f" ip address {r.loopback}/32", "exit", _SEP]
    for i in r.interfaces:
        out.append(f"interface {i.name}")
        out.append(
            f" ip address {i.address}/31"
            if i.address
            else " " + FRR.comment_line("unnumbered: IPv6 link-local only")
        )
        out += ["exit", _SEP]
    for g in r.gateways:
        if r.p2p31_hosts:
            for h in g.hosts:
                out += [f"interface {h.port}", f" ip address {h.gateway}/31", "exit", _SEP]
        else:
            out.append(f"interface {g.interface}")
            # No `mtu` line: FRR has no interface mtu command (vtysh rejects it); the
            # NOS sets the SVI's MTU (NVUE `link mtu`, SONiC VLAN `mtu`, the twin's `ip`).
            out += [
                f" description rail {g.rail} gateway",
                f" ip address {g.gateway}/{g.prefixlen}",
                "exit",
                _SEP,
            ]
    return out


def _neighbours(r: RoutingConfig) -> list[str]:
    group = FRR_DEFAULTS.peer_group
    out = [f" neighbor {group} peer-group", f" neighbor {group} remote-as external"]
    if r.bfd:
        out.append(f" neighbor {group} bfd")
    for i in r.interfaces:
        if i.peer_address is None:
            out.append(f" neighbor {i.name} interface peer-group {group}")
        else:
            out.append(f" neighbor {i.peer_address} peer-group {group}")
        out.append(f" neighbor {i.neighbour} description {i.peer}")
    return out
