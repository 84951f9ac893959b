"""What `fabric-stack accept` reports: one judged test per run, suspects, the rail matrix.

A test passes at :data:`ACCEPTANCE_SHARE` of the plan's expected figure: the
estimate is a model (docs/calibration.md), not a guarantee, and a larger shortfall
means a fault worth finding. The same share is what the rendered acceptance job
(``render kubernetes``) and the design report print.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

ACCEPTANCE_SHARE = 0.9
"""A test passes at this share of the expected figure or more."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def pass_floor(expected: float, digits: int = 1) -> float:
    """The figure a test must reach: :data:`ACCEPTANCE_SHARE` of ``expected``, to ``digits``
    decimals (1 for the GB/s and Gb/s of a real fabric; more for a figure of a few Gb/s)."""
    return round(expected * ACCEPTANCE_SHARE, digits)


class Suspect(BaseModel):
    """One thing that could cost the shortfall, where it is in the plan, and how to confirm."""

    model_config = _FROZEN

    what: str = Field(description="What is suspected (a cable, a leaf, a setting, the test).")
    where: str = Field(description="Where, in the plan's names (device:port, setting, hosts).")
    why: str = Field(description="The evidence, with the log lines it comes from.")
    check: str = Field(description="How to confirm it: the drift command, a tool to run.")
    cables: list[str] = Field(
        default_factory=list,
        description="The plan's cables involved, 'DEVICE:PORT <-> DEVICE:PORT'.",
    )


class TestResult(BaseModel):
    """One measurement judged against the plan."""

    model_config = _FROZEN

    file: str = Field(description="The result file.")
    run: int = Field(description="1-based run number inside the file.")
    line: int = Field(description="Line where the run starts.")
    tool: str = Field(description="nccl-tests, perftest or iperf3.")
    kind: str = Field(description="The binary: all_reduce_perf, ib_write_bw, …")
    hosts: list[str] = Field(description="Hosts as the log names them.")
    servers: list[str] = Field(description="The plan's servers they map to ([] if unmapped).")
    placement: str = Field(description="How the hosts were placed on the plan.")
    bytes: int | None = Field(description="Message size judged (the largest in the table).")
    measured: float | None = Field(description="Measured busbw GB/s (nccl) or BW Gb/s (perftest).")
    unit: str = Field(description="'GB/s busbw' or 'Gb/s'.")
    expected: float | None = Field(description="The plan's figure for this placement and size.")
    pass_at: float | None = Field(description="The floor: ACCEPTANCE_SHARE of expected.")
    shortfall_pct: float | None = Field(description="100 × (1 − measured/expected), ≥ 0.")
    passed: bool | None = Field(description="Pass/fail; None when not judged (latency).")
    fail_reason: str | None = Field(
        default=None,
        description="Why it failed: 'below the floor', 'crashed', 'wrong results', 'no result'.",
    )
    algorithm: str | None = Field(description="The estimate's algorithm at that size.")
    basis: list[str] = Field(description="What the expected figure rests on.")
    suspects: list[Suspect] = Field(description="What could cost the shortfall, or flatter it.")
    notes: list[str] = Field(description="What the reader noticed in the log.")


class MatrixCell(BaseModel):
    """One perftest or iperf3 measurement placed on the plan: a server's rail."""

    model_config = _FROZEN

    server: str = Field(description="The plan's server (site name).")
    su: int = Field(description="Its scalable unit.")
    rail: int = Field(description="Rail of the device.")
    plane: int = Field(description="Plane of the device.")
    device: str = Field(description="RDMA device (mlx5_2).")
    peer: str | None = Field(description="The plan's server on the other end, when named.")
    gbps: float = Field(description="Measured Gb/s.")
    passed: bool = Field(description="At or above the floor.")
    test: int = Field(description="Index of the test in AcceptReport.tests.")
    flow: str | None = Field(
        default=None,
        description="Which way the data ran: 'to peer' (the host sent), 'from peer', or None "
        "(both ways, or not known).",
    )


class AcceptReport(BaseModel):
    """Everything `fabric-stack accept` prints."""

    model_config = _FROZEN

    plan: str = Field(description="The plan judged against, in one line.")
    tests: list[TestResult] = Field(description="One per run, in file order.")
    matrix: list[MatrixCell] = Field(description="perftest and iperf3 runs by server and rail.")
    skipped: list[str] = Field(description="Directory entries that are not results, and why.")

    @property
    def failed(self) -> list[TestResult]:
        """Tests that failed."""
        return [t for t in self.tests if t.passed is False]

    @property
    def exit_code(self) -> int:
        """0 when every judged test passed, 1 when one failed."""
        return 1 if self.failed else 0


__all__ = [
    "ACCEPTANCE_SHARE",
    "AcceptReport",
    "MatrixCell",
    "Suspect",
    "TestResult",
    "pass_floor",
]
