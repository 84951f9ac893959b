"""Planted acceptance results on the seed plan, in the tools' own layouts.

perftest files in the ``ib_write_bw --report_gbits`` layout of
``../shared/realdata/perftest/cx7-…`` (title, header fields, result header, one row
between dashed lines), one per server and rail, named ``<host>_<device>.txt``, each the
client of a run to the next server on the same rail. Healthy runs reach 392.34 Gb/s (the
real NDR result); a planted fault runs at 60 % of it. ``nccl_log`` writes an
``all_reduce_perf`` run with ``NCCL_DEBUG=INFO`` in the layout of the real NCCL 2.26 logs.
:func:`write_results` puts the acceptance page's results on disk
(``python -m tests.docs_examples results DIR``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology

HEALTHY = 392.34
SLOW = round(HEALTHY * 0.6, 2)


def seed() -> FabricTopology:
    return build_topology(size_fabric(validate_spec({})))


def perftest(host: str, device: str, peer: str | None, gbps: float) -> str:
    """One ``ib_write_bw --report_gbits`` client run as perftest prints it."""
    rate = gbps * 1e9 / 8 / 65536 / 1e6
    cmd = f"ib_write_bw -d {device} --report_gbits" + (f" {peer}" if peer else "")
    return "\n".join(
        [
            f"ops@{host}:~$ {cmd}",
            "-" * 87,
            "                    RDMA_Write BW Test",
            f" Dual-port       : OFF\t\tDevice         : {device}",
            " Number of qps   : 1\t\tTransport type : IB",
            " Connection type : RC\t\tUsing SRQ      : OFF",
            " TX depth        : 128",
            " Mtu             : 4096[B]",
            " Link type       : IB",
            "-" * 87,
            " local address: LID 0x01 QPN 0x004a PSN 0xbe352e RKey 0x1fff00 VAddr 0x007e6f4ed11000",
            " remote address: LID 0x02 QPN 0x0049 PSN 0x4601da RKey 0x1fff00 VAddr 0x0077e64eb000",
            "-" * 87,
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
            f" 65536      5000             {gbps + 0.04:.2f}             {gbps:.2f} \t\t     "
            f"{rate:.6f}",
            "-" * 87,
            "",
        ]
    )


def sweep(
    topo: FabricTopology, slow: set[tuple[str, str]], *, peers: bool = True
) -> list[tuple[str, str]]:
    """(file, text) per server and rail: a run from each server to the next one (a ring) on
    the same rail; a run is slow when either end's (server, device) is in ``slow``."""
    servers = [d.name for d in topo.devices if d.role == "server"]
    out = []
    for i, host in enumerate(servers):
        peer = servers[(i + 1) % len(servers)]
        for nic in (n for n in topo.nics if n.node == host):
            hit = (host, nic.name) in slow or (peers and (peer, nic.name) in slow)
            text = perftest(host, nic.name, peer if peers else None, SLOW if hit else HEALTHY)
            out.append((f"{host}_{nic.name}.txt", text))
    return out


def nccl_log(
    topo: FabricTopology, hcas: list[str], busbw: float, servers: list[str] | None = None
) -> str:
    """An all_reduce_perf run on ``servers`` (every server of ``topo`` when None) with
    NCCL_DEBUG=INFO, in the layout of the real NCCL 2.26 logs
    (``../shared/realdata/nccl-tests/moc-…``)."""
    servers = servers or [d.name for d in topo.devices if d.role == "server"]
    gpn = topo.plan.spec.gpus_per_node
    n = len(servers) * gpn
    ranks = [
        f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on {servers[r // gpn]} device {r % gpn:2d} "
        f"[0000:19:00] NVIDIA H100 80GB HBM3"
        for r in range(n)
    ]
    info = f"{servers[0]}:1000:1010 [0] NCCL INFO "
    using = " ".join(f"[{i}]{h}:1/IB" for i, h in enumerate(hcas))
    size = 8 << 30
    algbw = busbw / (2 * (n - 1) / n)
    us = size / algbw / 1e3
    return "\n".join(
        [
            "# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) "
            "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#",
            "# Using devices",
            *ranks,
            f"{servers[0]}:1000:1000 [0] NCCL INFO NCCL version 2.26.2+cuda12.8",
            info + f"NCCL_IB_HCA set to {','.join(hcas)}",
            info + f"NET/IB : Using {using} [RO]; OOB mgmt1:10.0.0.1<0>",
            info + "Using network IB",
            info + f"comm 0x55d0 rank 0 nRanks {n} nNodes {len(servers)} localRanks {gpn} "
            "localRank 0 MNNVL 0",
            "#",
            "#       size         count      type   redop    root     time   algbw   busbw "
            "#wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
            "            (us)  (GB/s)  (GB/s)",
            f"  {size}    {size // 4}     float     sum      -1   {us:.0f}  {algbw:.2f}  "
            f"{busbw:.2f}      0   {us:.0f}  {algbw:.2f}  {busbw:.2f}      0",
            "# Out of bounds values : 0 OK",
            f"# Avg bus bandwidth    : {busbw:g}",
            "#",
            "",
        ]
    )


def write_results(out: Path) -> Path:
    """The acceptance page's run: a rail sweep of the seed plan with su1-node05's rail 3 at
    60 % (``perftest/``), an all-reduce whose job had ``NCCL_IB_HCA`` = 4 of the 8 rail
    HCAs (``nccl/``), and a README that is not a result."""
    topo = seed()
    (out / "perftest").mkdir(parents=True, exist_ok=True)
    (out / "nccl").mkdir(exist_ok=True)
    for name, text in sweep(topo, {("su1-node05", "mlx5_2")}):
        (out / "perftest" / name).write_text(text, encoding="utf-8")
    log = nccl_log(topo, [f"mlx5_{i}" for i in range(4)], 187.1)
    (out / "nccl" / "all_reduce_8g.log").write_text(log, encoding="utf-8")
    (out / "README.md").write_text("perftest sweep and nccl-tests logs, site X\n", "utf-8")
    return out


# ------------------------------------------------------------------ iperf3

IPERF3 = Path(__file__).parent / "fixtures" / "accept" / "iperf3"
"""Real ``iperf3 -J`` outputs (iperf3 3.12 in a RoCE twin; provenance in SOURCES.md there)."""


def iperf3_json(src: str, dst: str, gbps: float, *, pace: float | None = 0.5) -> str:
    """The real paced run (``su1-node01_mlx5_0_to_su1-node02.json``) from ``src`` to ``dst``
    (rail addresses) with ``gbps`` received, paced at ``pace`` Gb/s (None: unpaced)."""
    doc = json.loads((IPERF3 / "su1-node01_mlx5_0_to_su1-node02.json").read_text("utf-8"))
    doc["start"]["connected"][0].update(local_host=src, remote_host=dst)
    doc["start"]["connecting_to"]["host"] = dst
    target = int(pace * 1e9) if pace else 0
    doc["start"]["target_bitrate"] = doc["start"]["test_start"]["target_bitrate"] = target
    for key in ("sum_sent", "sum_received"):
        doc["end"][key]["bits_per_second"] = gbps * 1e9
    return json.dumps(doc, indent="\t")


def roce_seed(gpus: int = 32) -> FabricTopology:
    """The seed's servers (8 × H100, 8 rails) on RoCE (SN5600), ``gpus`` of them: the twin's."""
    return build_topology(size_fabric(validate_spec({"fabric": "roce", "switch": "sn5600",
                                                     "gpus": gpus})))  # fmt: skip


def iperf3_sweep(
    topo: FabricTopology,
    slow_into: Collection[tuple[str, str]] = (),
    slow_out_of: Collection[tuple[str, str]] = (),
    *,
    healthy: float = 0.498,
    slow: float = 0.096,
    pace: float | None = 0.5,
) -> list[tuple[str, str]]:
    """(file, text) per run of `twin traffic`'s sweep (the same pairs): a run is slow when
    its receiver's (server, device) is in ``slow_into`` or its sender's in ``slow_out_of``."""
    from fabric_stack.twin.ops_traffic import sweep_pairs
    from fabric_stack.underlay.plan import plan_underlay

    out = []
    for pairs in sweep_pairs(list(plan_underlay(topo).hosts)):
        for src, dst in pairs:
            hit = (dst.server, dst.nic) in slow_into or (src.server, src.nic) in slow_out_of
            text = iperf3_json(src.address, dst.address, slow if hit else healthy, pace=pace)
            out.append((f"{src.server}_{src.nic}_to_{dst.server}.json", text))
    return out
