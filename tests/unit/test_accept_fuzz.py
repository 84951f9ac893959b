"""`fabric-stack accept` under the bad-input contract (tests/contract.py): lines of nccl-tests
and perftest output shuffled, cut, doubled and mixed with noise, and a real iperf3 -J run cut
and spliced with junk: never a traceback, exit 0/1/2, one line on 2.

``FUZZ_EXAMPLES`` sets the examples per test, as for tests/unit/test_fuzz_contract.py.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.accept_fixtures import IPERF3
from tests.contract import run_checked

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FRAGMENTS = [
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5",
    "# nThread 1 nGpus 0 minBytes 0 maxBytes 0",
    "#  Rank  0 Group  0 Pid  29262 on su1-node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid  29263 on su1-node02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3",
    "#  Rank  9 Group  0 Pid  1 on su1-node99 device 12 [0x0] X",
    "#  Rank  2 Group  0 Pid  1 on Elsewhere device  0 [0x0] X",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
    "   algbw   busbw #wrong",
    "#       size         count      type   redop     time   algbw   busbw  error",
    "#       size   count",
    "  17179869184    4294967296     float     sum      -1    68652  250.24  469.21      0    68668"
    "  250.19  469.10      0",
    "  8589934592     134217728     float    none      -1    24724  347.44  325.72      0    24214"
    "  354.75  332.58    N/A",
    "  1024   16   float   none   -1   0   0   0   0   0   0   0   0",
    "  1 2 3",
    "  99999999999999999999999999999999999999999999 1 float sum -1 1 1 1 0 1 1 1 0",
    "  8 2 float sum -1 nan inf -inf 0 1 1 1 0",
    "# Avg bus bandwidth    : 139.56",
    "# Avg bus bandwidth    : nan",
    "# Collective test starting: alltoall_perf",
    "# Collective test starting: hypercube_perf",
    "NCCL version 2.26.2+cuda12.8",
    "su1-node01:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_9:1/RoCE; OOB x",
    "su1-node01:1:2 [0] NCCL INFO NET/IB : No device found.",
    "su1-node01:1:2 [0] NCCL INFO NCCL_IB_HCA set to ^mlx5_3",
    "su1-node01:1:2 [0] NCCL INFO NCCL_IB_HCA set to mlx5",
    "su1-node01:1:2 [0] NCCL INFO NCCL_ALGO set by environment to ^Tree,PAT",
    "su1-node01:1:2 [0] NCCL INFO NCCL_ALGO set by environment to nonsense",
    "su1-node01:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 0 nNodes 2",
    "su1-node01:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0",
    "su1-node01:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] via NET/IB/1(2)/GDRDMA/Shared",
    "su1-node01:1:2 [0] NCCL WARN NET/IB : Got completion with error 12",
    "su1-node02: Test NCCL failure common.cu:1204 'unhandled cuda error / '",
    "mpirun detected that one or more processes exited with non-zero status",
    "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 8",
    "ops@su1-node01:~$ ib_write_bw -d mlx5_0 --report_gbits su1-node02",
    "ib_read_bw -d mlx5_9 -q",
    "                    RDMA_Write BW Test",
    "                    Send Bidirectional BW Test",
    "                    Send Latency Test",
    " Dual-port       : OFF\t\tDevice         : mlx5_0",
    " Number of qps   : x\t\tTransport type : IB",
    " Mtu             : 4096[B]",
    " Link type       : Ethernet",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    " #bytes    #sl      #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]",
    " 65536      5000             392.38             392.34 \t\t     0.748336",
    " 65536      5000             0.00               1e309              0.1",
    " 2       1000          1.24           5.19         1.27",
    "-" * 87,
    "Conflicting CPU frequency values detected: 1 != 2. CPU Frequency is not max.",
    "",
    "\t",
    "é",
]


@contextmanager
def workdir() -> Iterator[Path]:
    old = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="fuzz-accept-") as d:
        os.chdir(d)
        try:
            yield Path(d)
        finally:
            os.chdir(old)


@FUZZ
@given(
    lines=st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=40), max_size=40),
    name=st.sampled_from(["r.log", "su1-node01_mlx5_0.txt", "allgather.log", "x_y_z.txt"]),
    fmt=st.sampled_from(["table", "json", "markdown"]),
)
def test_accept_keeps_the_contract(lines: list[str], name: str, fmt: str) -> None:
    with workdir() as root:
        (root / name).write_text("\n".join(lines), encoding="utf-8")
        run = run_checked(["accept", "--format", fmt, name], root)
        event(f"exit {run.code}")


@FUZZ
@given(data=st.binary(max_size=400))
def test_accept_on_bytes(data: bytes) -> None:
    with workdir() as root:
        (root / "d").mkdir()
        (root / "d" / "r.log").write_bytes(data)
        run_checked(["accept", "d"], root)


IPERF3_RUN = (IPERF3 / "su1-node01_mlx5_0_to_su1-node02.json").read_text(encoding="utf-8")
JUNK = ["", "x", "NaN", "Infinity", "1e999", "-1", "null", "[]", "{}", '"', "}", ",", "\x00"]


@FUZZ
@given(
    at=st.integers(0, len(IPERF3_RUN)),
    cut=st.integers(1, len(IPERF3_RUN) + 20),
    junk=st.sampled_from(JUNK) | st.text(max_size=8),
    twice=st.booleans(),
    fmt=st.sampled_from(["table", "json"]),
)
def test_accept_keeps_the_contract_on_iperf3_json(
    at: int, cut: int, junk: str, twice: bool, fmt: str
) -> None:
    # The real run cut, spliced with junk (NaN, an infinite rate, a stray brace), doubled.
    text = (IPERF3_RUN[:at] + junk + IPERF3_RUN[at:])[:cut]
    with workdir() as root:
        name = "su1-node01_mlx5_0_to_su1-node02.json"
        (root / name).write_text(text + ("\n" + text if twice else ""), encoding="utf-8")
        args = ["accept", "--fabric", "roce", "--switch", "sn5600", "--gpus", "32"]
        run = run_checked([*args, "--format", fmt, name], root)
        event(f"exit {run.code}")
