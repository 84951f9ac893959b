"""Reader of nccl-tests stdout (``all_reduce_perf`` and friends), NCCL_DEBUG=INFO included.

The layout is nccl-tests' own ``printf`` output (``src/common.cu``): a
``# nThread N nGpus G minBytes … maxBytes …`` header, ``#  Rank  R Group G Pid P on
HOST device D [BUS] GPU`` lines, a three-line column header, one row per size
(``size count type redop root`` then time/algbw/busbw/#wrong out of place and in
place), ``# Out of bounds values`` and ``# Avg bus bandwidth``. nccl-tests 2.18
adds ``# nccl-tests version …`` and ``# Collective test starting: NAME``; the
columns are read from the header line, so every layout parses: 2017's first one
(``nThread`` without ``#``, no ``Pid``, ``bytes N type op … res``, time in ms:
:data:`LEGACY_NAMES`), 2019's (``size count type redop … error``) and 2022's
(``root``, ``#wrong``), also concatenated in one file.

Tolerated, because real logs have them (``../shared/realdata/nccl-tests``):
launcher prefixes (:mod:`.lines`), Open MPI help blocks, ``NCCL INFO``/``WARN``
lines anywhere (also between table rows), several runs in one file, a rank list
cut by the poster, a crash after the last row (``Test NCCL failure`` lines, an
mpirun abort) and a last row cut mid-line. Refused, one line naming the line: a
row of the table whose fields do not match the column header.

Pure: text in, :class:`~fabric_stack.acceptance.model.NcclRun` out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from fabric_stack.acceptance.lines import is_int, numbered, to_float
from fabric_stack.acceptance.model import NcclFailure, NcclRow, NcclRun, RankLine
from fabric_stack.acceptance.nccl_info import InfoState, read_info
from fabric_stack.errors import InputFileError

# '#' optional and no 'Pid' before nccl-tests' 2019 resync (b188a15, 2017-08-08:
# printf("nThread %d …"), "#   Rank %2d on %10s device %2d …", " Avg bus bandwidth …").
HEADER = re.compile(r"^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
RANK = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+device\s+(\d+)"
    r"\s+\[[^\]]*\]\s*(.*)$"
)
COLUMNS = re.compile(r"^#\s+(?:size\s+count|bytes\s+N\s+type\s+op)\s+")
AVG = re.compile(r"^#?\s*Avg bus bandwidth\s*:\s*(\S+)")
LEGACY_NAMES = {"bytes": "size", "N": "count", "op": "redop", "res": "error"}
"""nccl-tests' first column names (b188a15, 2017-08-08, ``src/all_reduce.cu``
print_header: ``bytes N type op time algbw busbw res``) → today's. That layout printed
``time`` in milliseconds (``PRINT("  %7.3f …", deltaSec * 1.0E3, …)``, ``src/common.cu``)
and ``res`` as the largest error (``%7.0le``); from cbe7f65 (2019-03-06, "Resync all tests
with test code from NCCL 2.4") ``size count type redop`` and microseconds."""
STARTING = re.compile(r"^#\s*Collective test starting:\s*(\w+)")
REDUCING = re.compile(r"^#\s*Reducing maxBytes to (\d+) due to memory limitation")
FAILURE = re.compile(r"^(\S+?):\s+Test (NCCL|CUDA) failure (\S+) '(.*?)'?\s*$")
MPI_ABORT = re.compile(
    r"(mpirun|prterun) (detected that one or more processes exited|noticed that)"
)
COMMAND = re.compile(
    r"\b(all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast|reduce|gather"
    r"|scatter|hypercube)_perf\b"
)

TESTS: dict[str, str] = {
    "allreduce": "all_reduce_perf",
    "allgather": "all_gather_perf",
    "reducescatter": "reduce_scatter_perf",
    "alltoall": "alltoall_perf",
    "sendrecv": "sendrecv_perf",
    "broadcast": "broadcast_perf",
}
"""File-name token (lower case, no separators) → the nccl-tests binary it names."""

COLLECTIVE_OF = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "alltoall",
    "broadcast_perf": "broadcast",
}
"""nccl-tests binary → the collective of :mod:`fabric_stack.analysis.estimate`."""

ELEMENT_BYTES = {
    "int8": 1, "uint8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "bfloat16": 2, "float16": 2,
    "int32": 4, "uint32": 4, "float": 4, "float32": 4,
    "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}  # fmt: skip
"""Bytes per element of nccl-tests' ``-d`` types (``src/common.cu`` test_typenames)."""


def busbw_factor(test: str, n: int) -> float | None:
    """nccl-tests' busbw/algbw factor for ``test`` on ``n`` ranks (doc/PERFORMANCE.md;
    sendrecv and broadcast: 1, ``src/sendrecv.cu``, ``src/broadcast.cu``)."""
    if n < 1:
        return None
    if test == "all_reduce_perf":
        return 2 * (n - 1) / n
    if test in ("all_gather_perf", "reduce_scatter_perf", "alltoall_perf"):
        return (n - 1) / n
    if test in ("sendrecv_perf", "broadcast_perf", "reduce_perf"):
        return 1.0
    return None


@dataclass
class _Run:
    """A run being read (mutable while scanning; frozen into an NcclRun at the end)."""

    line: int
    n_gpus: int
    preamble_test: tuple[str, str] | None
    ranks: list[RankLine] = field(default_factory=list)
    rows: list[NcclRow] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    columns_line: int = 0
    avg: float | None = None
    version: str | None = None
    info: InfoState = field(default_factory=InfoState)
    failures: list[NcclFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    starting: tuple[str, int] | None = None
    ended: bool = False
    time_scale: float = 1.0
    """Microseconds per unit of the table's ``time`` column (1000: the 2017 layout)."""


def read_nccl_tests(text: str, source: str) -> list[NcclRun]:
    """Every nccl-tests run in ``text`` (``source`` names the file in errors and results)."""
    lines = list(numbered(text))
    last = max((no for no, s in lines if s.strip()), default=0)
    runs: list[_Run] = []
    pending_info = InfoState()  # INFO lines before a header belong to the run that follows
    preamble: tuple[str, str] | None = None
    starting: tuple[str, int] | None = None
    for no, s in lines:
        cur = runs[-1] if runs and not runs[-1].ended else None
        m = HEADER.match(s)
        if m:
            runs.append(_Run(no, int(m.group(2)), preamble, info=pending_info, starting=starting))
            pending_info, preamble, starting = InfoState(), None, None
            continue
        m = STARTING.match(s)
        if m:
            starting = (m.group(1), no)
            continue
        if cur is None and table_line(s):
            # The log starts (or a run restarts) after nccl-tests' header: the poster cut
            # it, or the launcher lost it. The rows still say what ran.
            cur = _Run(no, 0, preamble, info=pending_info, starting=starting)
            cur.notes.append(
                f"no '# nThread … nGpus …' header before line {no} (cut from the log): "
                "judged from the rows and the NCCL INFO lines"
            )
            runs.append(cur)
            pending_info, preamble, starting = InfoState(), None, None
        if cur is None:
            preamble = _command_test(s, no) or preamble
            if read_info(pending_info, s, no) is None and runs:
                _after(runs[-1], s, no)
            continue
        _line(cur, s, no, no == last, source)
    solo = _solo(runs)
    return [_freeze(r, i, source, solo) for i, r in enumerate(runs, start=1)]


DEFAULT_COLUMNS = {
    12: [
        *("size", "count", "type", "redop"),
        *("time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"),
    ],
    13: [
        *("size", "count", "type", "redop", "root"),
        *("time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
    ],
}
"""nccl-tests' table columns by field count, for a table whose column header was cut. 13:
the layout every real sample prints (``moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log``
line 47, ``nccl-tests-issue309-hgx-h100-ib-ndr-2node-allreduce.txt`` line 35), nccl-tests
since 51af557 (2022-08-19, "Resync with NCCL 2.13"); 12: cbe7f65 (2019-03-06) to then, no
``root``, ``error`` columns, microseconds (the 2017 layout has 12 fields too but counts
milliseconds: without its header a cut 2017 table is read as 2019's)."""


def table_line(s: str) -> bool:
    """A column header, or a table row in nccl-tests' default layout (size, count, type)."""
    if COLUMNS.match(s):
        return True
    tokens = s.split()
    return (
        len(tokens) in DEFAULT_COLUMNS
        and is_int(tokens[0])
        and is_int(tokens[1])
        and tokens[2] in ELEMENT_BYTES
    )


def _solo(runs: list[_Run]) -> str | None:
    """Why the ranks never met, when every communicator the log shows had one rank.

    nccl-tests built without MPI (``make MPI=0``, the default) and launched N times by
    srun/mpirun runs N independent one-rank jobs: each prints ``nranks 1`` and a bus
    bandwidth of 0 (busbw = algbw × 2(n−1)/n for all_reduce, 0 at n = 1: nccl-tests
    doc/PERFORMANCE.md). Nothing crossed the fabric, so no figure can be judged."""
    said = set().union(*(r.info.ranks_said for r in runs)) if runs else set()
    if said != {1}:
        return None
    procs = set().union(*(r.info.init_processes for r in runs))
    hosts = {h for h, _ in procs} | {k.host for r in runs for k in r.ranks}
    zero = any(r.avg == 0 for r in runs) or all(x.busbw_gbs == 0 for r in runs for x in r.rows)
    if len(procs) < 2 and not zero:
        return None
    first = min((r.info.init_line for r in runs if r.info.init_line), default=0)
    return (
        f"every rank ran alone: {len(procs)} process(es) on {len(hosts)} host(s) each set up "
        f"a one-rank communicator ('nranks 1', first on line {first})"
        + (", bus bandwidth 0" if zero else "")
        + ": the ranks never met (nccl-tests built without MPI, or launched without "
        "MPI/PMI wiring); rebuild with 'make MPI=1' and launch with mpirun, or srun with "
        "its PMIx plugin"
    )


def _command_test(s: str, no: int) -> tuple[str, str] | None:
    m = COMMAND.search(s)
    return (f"{m.group(1)}_perf", f"named on line {no}") if m else None


def _after(run: _Run, s: str, no: int) -> None:
    """Lines after a run's last table line: crash reports and MPI's abort."""
    m = FAILURE.match(s)
    if m:
        run.failures.append(NcclFailure(host=m[1], kind=m[2], where=m[3], message=m[4], line=no))
    elif MPI_ABORT.search(s) and not any(n.startswith("mpirun") for n in run.notes):
        run.notes.append(f"mpirun aborted the job (line {no})")


def _line(run: _Run, s: str, no: int, is_last: bool, source: str) -> None:
    """One line inside a run."""
    if read_info(run.info, s, no) is not None:
        return
    m = RANK.match(s)
    if m:
        run.ranks.append(
            RankLine(rank=int(m[1]), host=m[2], device=int(m[3]), gpu=m[4].strip(), line=no)
        )
        return
    if COLUMNS.match(s):
        cols = s.lstrip("#").split()
        run.columns, run.columns_line = [LEGACY_NAMES.get(c, c) for c in cols], no
        if cols[0] == "bytes":
            run.time_scale = 1000.0
            run.notes.append(
                f"nccl-tests' 2017 table layout (line {no}: 'bytes N type op … res'): "
                "time read in milliseconds"
            )
        return
    m = AVG.match(s)
    if m:
        run.avg = to_float(m[1])
        run.ended = True
        return
    m = REDUCING.match(s)
    if m:
        run.notes.append(f"nccl-tests reduced maxBytes to {int(m[1]):,} (line {no})")
        return
    vm = re.search(r"^NCCL version (\d+\.\d+\.\d+\S*)", s)
    if vm:
        run.version = vm.group(1)
        return
    tokens = s.split()
    if not run.columns and table_line(s):
        run.columns = DEFAULT_COLUMNS[len(tokens)]
        run.columns_line = no
        run.notes.append(f"no column header before line {no}: read in nccl-tests' default layout")
    if run.columns and len(tokens) > 1 and is_int(tokens[0]) and is_int(tokens[1]):
        row = _row(run, tokens, no)
        if row is not None:
            run.rows.append(row)
        elif is_last:
            run.notes.append(f"the last row was cut short (line {no}): the log ends there")
        else:
            raise InputFileError(source, _row_problem(run, tokens), no)
        return
    _after(run, s, no)


def _row_problem(run: _Run, tokens: list[str]) -> str:
    return (
        f"nccl-tests row with {len(tokens)} fields where the column header (line "
        f"{run.columns_line}) has {len(run.columns)}: {' '.join(run.columns)}"
    )


def _row(run: _Run, tokens: list[str], no: int) -> NcclRow | None:
    """The row, or None when its fields do not fit the column header."""
    cols = run.columns
    if len(tokens) != len(cols):
        return None
    idx = {name: [i for i, c in enumerate(cols) if c == name] for name in set(cols)}
    wrong_col = "#wrong" if "#wrong" in idx else "error"

    def num(name: str, k: int = 0) -> float | None:
        at = idx.get(name, [])
        return to_float(tokens[at[k]]) if len(at) > k else None

    def wrong(k: int) -> int | None:
        at = idx.get(wrong_col, [])
        v = to_float(tokens[at[k]]) if len(at) > k else None
        if v is None or wrong_col == "#wrong":
            return None if v is None else int(v)
        return int(v > _tolerance(run, tokens[idx["type"][0]] if "type" in idx else ""))

    time, alg, bus = num("time"), num("algbw"), num("busbw")
    if time is None or alg is None or bus is None:
        return None
    in_time = num("time", 1)
    time, in_time = time * run.time_scale, None if in_time is None else in_time * run.time_scale
    root = num("root")
    return NcclRow(
        bytes=int(tokens[idx["size"][0]]),
        count=int(tokens[idx["count"][0]]),
        type=tokens[idx["type"][0]] if "type" in idx else "",
        redop=tokens[idx["redop"][0]] if "redop" in idx else "",
        root=int(root) if root is not None else -1,
        time_us=time,
        algbw_gbs=alg,
        busbw_gbs=bus,
        wrong=wrong(0),
        in_time_us=in_time,
        in_busbw_gbs=num("busbw", 1),
        in_wrong=wrong(1),
        line=no,
    )


DELTA_MAX = {"half": 1e-2, "float16": 1e-2, "float": 1e-5, "float32": 1e-5, "double": 1e-12}
"""Largest error per element nccl-tests accepts, by type, before its ``#wrong`` column
(``DeltaMaxValue``, ``src/common.cu`` in b188a15 and cbe7f65; integer types 1e-200);
a row is wrong when its ``error`` (``res``) exceeds it × (nranks − 1), as nccl-tests
counted ``Out of bounds values``."""


def _tolerance(run: _Run, dtype: str) -> float:
    """nccl-tests' error bound for a row of ``dtype`` in ``run`` (see :data:`DELTA_MAX`)."""
    n = run.info.nranks or len({k.rank for k in run.ranks}) or 2
    return DELTA_MAX.get(dtype, 1e-200) * max(n - 1, 1)


def _freeze(r: _Run, number: int, source: str, solo: str | None = None) -> NcclRun:
    test, how = infer_test(r, source)
    listed = len({x.rank for x in r.ranks})
    nranks = r.info.nranks or listed
    rng = ranks_range(test, r.rows) if test else None
    complete = rng is None or r.info.nranks is not None or rng[0] <= listed <= rng[1]
    notes = list(r.notes)
    if not complete and rng is not None:
        notes.append(
            f"the rank list stops at {listed} ranks but the table's busbw/algbw implies "
            f"{rng[0]:,}–{rng[1]:,} ranks: the list was cut"
        )
    if r.rows and not r.ended:
        notes.append("no '# Avg bus bandwidth' line: the run did not finish")
    if test and r.rows:
        notes += _factor_check(test, nranks, r.rows) if complete else []
    info = r.info
    return NcclRun(
        source=source,
        run=number,
        line=r.line,
        test=test,
        test_from=how,
        n_gpus=r.n_gpus,
        ranks=r.ranks,
        nranks=nranks,
        ranks_listed_complete=complete,
        nranks_range=rng,
        rows=r.rows,
        avg_busbw_gbs=r.avg,
        nccl_version=r.version or info.version,
        nets=info.host_nets(),
        network=info.network,
        ib_hca=dict(info.ib_hca),
        ib_hca_line=info.ib_hca_line,
        algo_env=info.algo,
        gdr=info.gdr,
        gdr_line=info.gdr_line,
        shared_nic=info.shared,
        shared_line=info.shared_line,
        info_lines=info.lines,
        warnings=info.warnings,
        failures=r.failures,
        notes=notes,
        solo=solo,
    )


def infer_test(r: _Run, source: str) -> tuple[str | None, str]:
    """The nccl-tests binary of the run and how it was told (the log, the file name, the
    table); None with the reason when the table fits two tests and nothing names it."""
    if r.starting:
        return r.starting[0], f"named by '# Collective test starting' on line {r.starting[1]}"
    if r.preamble_test:
        return r.preamble_test
    stem = re.sub(r"[^a-z]", "", PurePath(source).name.lower())
    named = [t for k, t in TESTS.items() if k in stem]
    if len(named) == 1:
        return named[0], "named by the file name"
    return _from_table(r)


def _from_table(r: _Run) -> tuple[str | None, str]:
    rows = [x for x in r.rows if x.algbw_gbs >= 1.0]
    if not rows:
        return None, "no row large enough to tell the collective from the table"
    x = rows[-1]
    n = r.info.nranks or len({k.rank for k in r.ranks})
    elt = ELEMENT_BYTES.get(x.type, 0)
    ratio = x.busbw_gbs / x.algbw_gbs
    full = elt and x.count * elt == x.bytes
    if x.root >= 0:
        return ("broadcast_perf" if x.redop == "none" else "reduce_perf"), "told by the table"
    if x.redop == "none":
        return None, "all_gather_perf and alltoall_perf print the same table"
    if not full:
        return "reduce_scatter_perf", "told by the table (count per rank, a reduction)"
    fits = [
        t
        for t in ("all_reduce_perf", "sendrecv_perf")
        if abs(ratio - (busbw_factor(t, n) or 0)) <= 0.03 * ratio
    ]
    if len(fits) == 1:
        return fits[0], f"told by the table (busbw/algbw {ratio:.3f} on {n} ranks)"
    return None, "all_reduce_perf and sendrecv_perf print the same table on 2 ranks"


def ranks_range(test: str, rows: list[NcclRow]) -> tuple[int, int] | None:
    """Rank counts consistent with every row's busbw/algbw, read to its 2 printed
    decimals; None when the factor does not depend on the rank count."""
    if test == "all_reduce_perf":
        top = 2.0
    elif test in ("all_gather_perf", "reduce_scatter_perf", "alltoall_perf"):
        top = 1.0
    else:
        return None
    lo, hi = 1.0, math.inf
    for x in rows:
        if x.algbw_gbs < 1.0 or not (math.isfinite(x.algbw_gbs) and math.isfinite(x.busbw_gbs)):
            continue  # an 'inf' / 'nan' field says nothing of the rank count
        r_lo = (x.busbw_gbs - 0.005) / (x.algbw_gbs + 0.005)
        r_hi = (x.busbw_gbs + 0.005) / (x.algbw_gbs - 0.005)
        lo = max(lo, top / (top - r_lo) if r_lo < top else math.inf)
        hi = min(hi, top / (top - r_hi) if r_hi < top else math.inf)
    if (lo == 1.0 and hi == math.inf) or lo > hi or not math.isfinite(lo):
        return None
    return math.ceil(lo - 1e-9), (math.floor(hi + 1e-9) if math.isfinite(hi) else 10**9)


def _factor_check(test: str, n: int, rows: list[NcclRow]) -> list[str]:
    f = busbw_factor(test, n)
    if not f:
        return []
    bad = [x for x in rows if x.algbw_gbs >= 1.0 and abs(x.busbw_gbs / x.algbw_gbs - f) > 0.03]
    if not bad:
        return []
    x = bad[0]
    return [
        f"line {x.line}: busbw/algbw {x.busbw_gbs / x.algbw_gbs:.3f} is not {test}'s factor "
        f"{f:.3f} on {n} ranks: is the test named right?"
    ]


__all__ = [
    "COLLECTIVE_OF",
    "busbw_factor",
    "infer_test",
    "ranks_range",
    "read_nccl_tests",
    "table_line",
]
