"""Acceptance results read back: measured nccl-tests and perftest against the plan.

Pure (layer 3): text in, judged results out; files are read by the CLI through
:mod:`fabric_stack.files.inputs`. The curated API:

* :func:`read_nccl_tests`, :func:`read_perftest`: the readers;
* :func:`judge_results`: every file of an acceptance run judged against a plan
  (:class:`AcceptContext`), localised, in one :class:`AcceptReport`.
"""

from fabric_stack.acceptance.judge import (
    judge_results,
    looks_like_result,
    plan_line,
    read_results,
)
from fabric_stack.acceptance.model import NcclRun, PerftestRun, UnrecognisedResultError
from fabric_stack.acceptance.nccl_tests import read_nccl_tests
from fabric_stack.acceptance.perftest import read_perftest
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import (
    ACCEPTANCE_SHARE,
    AcceptReport,
    MatrixCell,
    Suspect,
    TestResult,
    pass_floor,
)

__all__ = [
    "ACCEPTANCE_SHARE",
    "AcceptContext",
    "AcceptReport",
    "MatrixCell",
    "NcclRun",
    "PerftestRun",
    "Suspect",
    "TestResult",
    "UnrecognisedResultError",
    "judge_results",
    "looks_like_result",
    "pass_floor",
    "plan_line",
    "read_nccl_tests",
    "read_perftest",
    "read_results",
]
