"""What the acceptance readers take out of a log: nccl-tests, perftest and iperf3 runs.

Plain records of what the tools printed, each with the line it came from, so a
judgement can always point back at the log. No interpretation here beyond units
(perftest's MB/sec and MiB/sec are converted to Gb/s, the unit the plan uses).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.errors import InputFileError

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class UnrecognisedResultError(InputFileError):
    """A file holds no nccl-tests, perftest or iperf3 output (a directory entry is skipped)."""


class NcclRow(BaseModel):
    """One row of the nccl-tests result table (out-of-place and in-place halves)."""

    model_config = _FROZEN

    bytes: int = Field(description="Message size in bytes (column 'size').")
    count: int = Field(description="Elements (column 'count').")
    type: str = Field(description="Data type (column 'type', e.g. float).")
    redop: str = Field(description="Reduction operation ('sum', 'none').")
    root: int = Field(description="Root rank (-1 when the collective has none).")
    time_us: float = Field(description="Out-of-place time per operation, µs.")
    algbw_gbs: float = Field(description="Out-of-place algorithm bandwidth, GB/s.")
    busbw_gbs: float = Field(description="Out-of-place bus bandwidth, GB/s.")
    wrong: int | None = Field(description="Out-of-place #wrong (None when 'N/A').")
    in_time_us: float | None = Field(description="In-place time, µs (None when absent).")
    in_busbw_gbs: float | None = Field(description="In-place bus bandwidth, GB/s.")
    in_wrong: int | None = Field(description="In-place #wrong (None when 'N/A').")
    line: int = Field(description="Line of the log (1-based).")


class RankLine(BaseModel):
    """One ``#  Rank  N Group G Pid P on HOST device D [BUS] GPU`` line."""

    model_config = _FROZEN

    rank: int = Field(description="Rank number.")
    host: str = Field(description="Host name as printed.")
    device: int = Field(description="CUDA device index on that host.")
    gpu: str = Field(description="GPU name as printed (e.g. 'NVIDIA H100 80GB HBM3').")
    line: int = Field(description="Line of the log.")


class NetDevice(BaseModel):
    """One device of ``NET/IB : Using [0]mlx5_0:1/IB [1]…``."""

    model_config = _FROZEN

    index: int = Field(description="NCCL's index of the device.")
    name: str = Field(description="RDMA device name (mlx5_0).")
    port: int = Field(description="Port number.")
    link_layer: str = Field(description="IB or RoCE.")


class HostNet(BaseModel):
    """What NCCL_DEBUG=INFO says one host's NCCL used for the network."""

    model_config = _FROZEN

    host: str = Field(description="Host name as printed in the INFO prefix.")
    devices: list[NetDevice] = Field(description="The devices NCCL opened (NET/IB : Using …).")
    line: int = Field(description="Line of the NET/IB : Using line.")


class NcclFailure(BaseModel):
    """A ``HOST: Test NCCL|CUDA failure FILE:LINE 'message'`` line."""

    model_config = _FROZEN

    host: str = Field(description="Host that printed it.")
    kind: str = Field(description="NCCL or CUDA.")
    where: str = Field(description="nccl-tests source location (common.cu:1204).")
    message: str = Field(description="The quoted message.")
    line: int = Field(description="Line of the log.")


class NcclRun(BaseModel):
    """One nccl-tests run: from its ``# nThread … nGpus …`` header to its end."""

    model_config = _FROZEN

    source: str = Field(description="The file it was read from.")
    run: int = Field(description="1-based number of the run in the file.")
    line: int = Field(description="Line of the '# nThread' header.")
    test: str | None = Field(description="nccl-tests binary (all_reduce_perf), None if unknown.")
    test_from: str = Field(description="How the test was named: a log line, the file name, …")
    n_gpus: int = Field(description="GPUs per process (-g).")
    ranks: list[RankLine] = Field(description="The '# Using devices' rank lines.")
    nranks: int = Field(description="Ranks of the job (INFO nranks, else the rank lines).")
    ranks_listed_complete: bool = Field(
        description="False when the table's busbw/algbw factor shows more ranks than listed."
    )
    nranks_range: tuple[int, int] | None = Field(
        description="Ranks consistent with every row's busbw/algbw (None: not derivable)."
    )
    rows: list[NcclRow] = Field(description="The result table, in order.")
    avg_busbw_gbs: float | None = Field(description="'# Avg bus bandwidth' (None: not reached).")
    nccl_version: str | None = Field(description="'NCCL version X' when printed.")
    nets: list[HostNet] = Field(description="Per host: the NICs NCCL opened (NCCL_DEBUG=INFO).")
    network: str | None = Field(description="'Using network IB|Socket|<plugin>' when printed.")
    ib_hca: dict[str, str] = Field(description="Host → NCCL_IB_HCA as NCCL echoed it.")
    ib_hca_line: int | None = Field(description="Line of the first NCCL_IB_HCA echo.")
    algo_env: str | None = Field(description="NCCL_ALGO when NCCL echoed it (RING, …).")
    gdr: bool | None = Field(description="GPUDirect RDMA used (GDR 1 / GDRDMA channels).")
    gdr_line: int | None = Field(description="Line the GDR reading comes from.")
    shared_nic: bool = Field(description="Channels via NET/…/Shared (GPUs sharing one NIC).")
    shared_line: int | None = Field(description="Line of the first such channel.")
    info_lines: int = Field(description="NCCL INFO/WARN lines seen (0: NCCL_DEBUG not INFO).")
    warnings: list[str] = Field(description="The first NCCL WARN lines ('line N: text').")
    failures: list[NcclFailure] = Field(description="'Test NCCL/CUDA failure' lines.")
    notes: list[str] = Field(description="What the reader noticed: cut lists, aborts, …")
    solo: str | None = Field(
        default=None,
        description="Why the ranks never met, when every communicator NCCL set up had one "
        "rank (nranks 1) though several processes ran; None otherwise.",
    )


class PerftestRow(BaseModel):
    """One perftest bandwidth result row, in Gb/s whatever the unit printed."""

    model_config = _FROZEN

    bytes: int = Field(description="Message size (#bytes).")
    iterations: int = Field(description="#iterations.")
    peak_gbps: float = Field(description="BW peak, Gb/s (0 in duration mode).")
    avg_gbps: float = Field(description="BW average, Gb/s.")
    line: int = Field(description="Line of the log.")


class PerftestRun(BaseModel):
    """One perftest run: title, header fields, result rows."""

    model_config = _FROZEN

    source: str = Field(description="The file it was read from.")
    run: int = Field(description="1-based number of the run in the file.")
    line: int = Field(description="Line of the title ('RDMA_Write BW Test').")
    test: str = Field(description="ib_write_bw, ib_read_bw, ib_send_bw, ib_send_lat, …")
    bandwidth: bool = Field(description="A bandwidth test (False: latency).")
    bidirectional: bool = Field(description="'Bidirectional' in the title (-b).")
    device: str | None = Field(description="'Device :' header field.")
    host: str | None = Field(description="The host that ran it (prompt or file name).")
    host_from: str = Field(description="Where the host name comes from.")
    peer: str | None = Field(description="The server named on the command line, if any.")
    qps: int | None = Field(description="'Number of qps'.")
    link_type: str | None = Field(description="'Link type' (IB, Ethernet).")
    mtu: int | None = Field(description="'Mtu' in bytes.")
    unit: str = Field(description="The unit printed (Gb/sec, MB/sec, MiB/sec, usec).")
    rows: list[PerftestRow] = Field(description="Bandwidth rows (empty for latency tests).")
    latency_typical_us: float | None = Field(description="t_typical of a latency test, µs.")
    notes: list[str] = Field(description="What the reader noticed (duration mode, noise).")


class Iperf3Run(BaseModel):
    """One ``iperf3 -J`` run: where it ran (addresses, file name) and what the receiver got."""

    model_config = _FROZEN

    source: str = Field(description="The file it was read from.")
    run: int = Field(description="1-based number of the JSON object in the file.")
    line: int = Field(description="Line where the object starts.")
    version: str | None = Field(description="start.version ('iperf 3.12').")
    local_host: str | None = Field(description="start.connected[0].local_host: the client.")
    remote_host: str | None = Field(description="start.connected[0].remote_host: the server.")
    host: str | None = Field(description="The client host from the file name, if named.")
    device: str | None = Field(description="The client's rail device from the file name.")
    peer: str | None = Field(description="The server host from the file name ('…_to_PEER').")
    protocol: str = Field(description="test_start.protocol (TCP, UDP).")
    streams: int = Field(description="test_start.num_streams (-P).")
    reverse: bool = Field(description="test_start.reverse (-R: the server sends).")
    bidirectional: bool = Field(description="test_start.bidir (--bidir).")
    target_gbps: float | None = Field(description="test_start.target_bitrate (-b), None: unpaced.")
    received_gbps: float | None = Field(description="end.sum_received.bits_per_second, Gb/s.")
    sent_gbps: float | None = Field(description="end.sum_sent.bits_per_second, Gb/s.")
    seconds: float | None = Field(description="end.sum_received.seconds.")
    retransmits: int | None = Field(description="end.sum_sent.retransmits.")
    error: str | None = Field(description="The 'error' iperf3 printed (the run did not finish).")
    notes: list[str] = Field(description="What the reader noticed.")


__all__ = [
    "HostNet",
    "Iperf3Run",
    "NcclFailure",
    "NcclRow",
    "NcclRun",
    "NetDevice",
    "PerftestRow",
    "PerftestRun",
    "RankLine",
    "UnrecognisedResultError",
]
