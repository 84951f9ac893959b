"""`fabric-stack whatif` and `fabric-stack estimate`: failures and collective performance."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from fabric_stack.cli import progress
from fabric_stack.cli.common import (
    MAX_NVLINK_GBS,
    NVLINK_GBS_HELP,
    SIZES_HELP,
    SPEC_FLAG_NAMES,
    console,
    echo_json,
    emit_formatted,
    format_option,
    handle_errors,
    load_spec,
    out_file_option,
    sharp_option,
    spec_options,
)
from fabric_stack.cli.params import FiniteFloat, NonEmptyPath
from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.inputs import MAX_CONFIG_BYTES, lines, read_text
from fabric_stack.hardware.server_profiles import default_profile
from fabric_stack.spec.model import FabricSpec, validate_spec

DEFAULT_MAX_SECONDS = 600.0
"""`whatif --max-seconds`: N−1 over everything at 16,384 GPUs takes ~2 min on one core."""


def failure_options(fn: Any) -> Any:
    """``--fail``, ``--drain``, ``--fail-random N``, ``--seed S``."""
    opts = [
        click.option(
            "--fail",
            "fail",
            multiple=True,
            metavar="DEVICE[:PORT]",
            help="Fail a device (every cable) or one cable by its DEVICE:PORT end. Repeat.",
        ),
        click.option(
            "--drain",
            "drain",
            multiple=True,
            metavar="DEVICE",
            help="Take a device out of service on purpose (an upgrade). Repeat.",
        ),
        click.option(
            "--fail-random",
            type=int,
            default=0,
            metavar="N",
            help="Also fail N compute cables picked at random (see --seed).",
        ),
        click.option(
            "--seed",
            type=int,
            default=0,
            show_default=True,
            help="Seed for --fail-random (the same seed picks the same cables).",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _failures(
    index: Any, fail: Sequence[str], drain: Sequence[str], n: int, seed: int
) -> list[Any]:
    from fabric_stack.analysis.whatif import parse_failure, random_failures

    out = [parse_failure(t, "fail") for t in fail] + [parse_failure(t, "drain") for t in drain]
    if n:
        out += random_failures(index, n, seed)
    return out


def _topology(spec: FabricSpec) -> Any:
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.sizing.size import size_fabric
    from fabric_stack.topology.build import build_topology

    with paused_gc():
        return build_topology(size_fabric(spec))


@click.command("whatif")
@spec_options
@failure_options
@click.option(
    "--n-minus-1",
    "nm1",
    type=click.Choice(["switch", "link", "all"]),
    is_flag=False,
    flag_value="switch",
    default=None,
    help="Fail each switch (or cable, or both) alone and rank them, worst first.",
)
@progress.max_seconds_option(DEFAULT_MAX_SECONDS)
@format_option
@handle_errors
def whatif_cmd(
    fail: tuple[str, ...],
    drain: tuple[str, ...],
    fail_random: int,
    seed: int,
    nm1: str | None,
    max_seconds: float,
    fmt: str,
    **kwargs: Any,
) -> None:
    """What failures or drains do to the fabric.

    After the failures: bisection over the same cut `size` and `verify` use,
    GPUs and servers isolated (per rail and plane), rails that lose their leaf,
    ECMP width between every two same-rail leaves (across SUs, and inside an SU
    with several leaves per rail), capacity lost per
    tier. `--n-minus-1` ranks every single failure. JSON keys: failed,
    bisection_tbps {before, after}, isolated {gpus, servers, by_rail},
    ecmp {min, median}, capacity_lost_pct {leaf_spine, spine_core}, n_minus_1.

    \b
    Examples:
      fabric-stack whatif --gpus 1024 --fail spine-01
      fabric-stack whatif --gpus 1024 --drain spine-01 --drain spine-02 --format json
      fabric-stack whatif --fail su1-r1-leaf:1/17/1          # one uplink cable
      fabric-stack whatif --gpus 4096 --n-minus-1 switch     # ranked N−1 table
      fabric-stack whatif --fail-random 20 --seed 7 --stack prod
    """
    from fabric_stack.analysis.whatif import FabricIndex, analyze_failures
    from fabric_stack.views.whatif import render_whatif, whatif_json, whatif_markdown

    topo = _topology(load_spec(kwargs))
    index = FabricIndex(topo)
    failures = _failures(index, fail, drain, fail_random, seed)
    bound = bounded(f"--n-minus-1 {nm1}", max_seconds)
    result = analyze_failures(topo, failures, n_minus_1_scope=nm1 or "", index=index, on_step=bound)
    if fmt == "json":
        echo_json(whatif_json(result))
    elif fmt == "markdown":
        click.echo(whatif_markdown(result), nl=False)
    else:
        console().print(render_whatif(result))


def bounded(what: str, max_seconds: float) -> Callable[[int, int], None]:
    """An ``on_step(done, total)`` that shows progress on a terminal's stderr (rewritten in
    place, so a pipe or a log gets no noise) and raises :class:`BudgetError` past
    ``max_seconds`` (:func:`fabric_stack.cli.progress.bounded`)."""
    step = progress.bounded(
        what, max_seconds, "failures", "raise --max-seconds, or rank fewer: --n-minus-1 switch"
    )
    return lambda done, total: step(done, total, "")


MAX_HOST_CHARS = 1024
"""Longest line of a ``--job-hosts`` file: a host name (at most 253 characters) and a comment."""


def read_hosts(path: Path, servers: set[str]) -> list[str]:
    """Server names from ``path``, one a line ('#' comments); each must be a planned server."""
    text = read_text(path, MAX_CONFIG_BYTES)  # the input layer: bounded, UTF-8, one-line errors
    out: dict[str, None] = {}  # ordered, and a set's lookup: a long list stays linear
    for no, raw in lines(text, path, MAX_HOST_CHARS):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        if name not in servers:
            raise InputFileError(
                str(path), f"{name!r} is not a server of the plan (names like su1-node01)", no
            )
        if name in out:
            raise InputFileError(str(path), f"{name!r} is listed twice", no)
        out[name] = None
    if not out:
        raise InputFileError(str(path), "lists no server (one name a line, e.g. su1-node01)")
    return list(out)


def _scenarios(spec: FabricSpec, compare: str | None) -> list[tuple[str, FabricSpec, str]]:
    """(label, spec, failures) per scenario of ``--compare``: failures is 'given' (the
    --fail flags), 'worst' (those, else the worst single failure) or 'none'."""
    if not compare:
        return [("", spec, "given")]
    if "=" not in compare:
        labels = [c.strip() for c in compare.split(",")]
        if sorted(labels) != ["failed", "healthy"]:
            raise SpecError(
                "--compare",
                f"{compare!r} is not a comparison",
                "FIELD=v1,v2 (e.g. oversubscription=1:1,2:1) or healthy,failed",
            )
        return [(lab, spec, "worst" if lab == "failed" else "none") for lab in labels]
    field, _, values = compare.partition("=")
    key = field.strip().replace("-", "_")
    if key not in SPEC_FLAG_NAMES:
        raise SpecError("--compare", f"{field!r} is not a spec flag", ", ".join(SPEC_FLAG_NAMES))
    base = spec.model_dump(mode="json")
    out = []
    for v in (x.strip() for x in values.split(",")):
        data = {**base, key: v}
        # re-derive what depends on the changed field (rails and profile follow GPUs per node)
        for dep in {"gpus_per_node": ("rails", "node_profile"), "rails": ("node_profile",)}.get(
            key, ()
        ):
            data.pop(dep, None)
        # A default profile follows the NIC speed (ConnectX-7 to 400G, ConnectX-8 above).
        if key == "nic_gbps" and spec.node_profile == default_profile(
            spec.gpus_per_node, spec.rails, spec.nic_gbps
        ):
            data.pop("node_profile", None)
        if key == "fabric":
            data["switch"] = switch_following(spec, v)
        out.append((f"{key}={v}", validate_spec(data), "given"))
    return out


def switch_following(spec: FabricSpec, fabric: str) -> str:
    """The switch a scenario on ``fabric`` runs: the spec's when it speaks that fabric's
    protocol, else the catalog default for the fabric at the link speed (the switch follows
    the fabric: QM9700 for InfiniBand at 400G, SN5600 for RoCEv2)."""
    from fabric_stack.hardware.switches import (
        FABRIC_KINDS,
        Protocol,
        default_switch_for,
        lookup_switch,
    )

    if fabric not in FABRIC_KINDS:
        return spec.switch  # validation names the bad fabric
    proto: Protocol = "infiniband" if fabric == "infiniband" else "ethernet"
    if lookup_switch(spec.switch, proto).protocol == proto:
        return spec.switch
    return default_switch_for(fabric, spec.link_gbps).key


@click.command("estimate")
@spec_options
@click.option(
    "--job-gpus",
    type=int,
    help="GPUs of the job, placed on contiguous servers in SU order. [default: the whole cluster]",
)
@click.option(
    "--job-hosts",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="File with the job's servers, one name a line (e.g. su1-node01).",
)
@click.option(
    "--collective",
    type=click.Choice(["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]),
    default="all_reduce",
    show_default=True,
    help="The collective, as nccl-tests names it.",
)
@click.option("--sizes", default=None, metavar="LIST", help=SIZES_HELP)
@click.option(
    "--algorithm",
    "algorithms",
    multiple=True,
    type=click.Choice(["ring", "tree", "nvls", "nvls_tree", "collnet", "p2p"]),
    help="Force algorithm(s), like NCCL_ALGO (repeat). [default: fastest per size]",
)
@click.option(
    "--nvlink-gbs",
    type=FiniteFloat(min=0, min_open=True, max=MAX_NVLINK_GBS),
    metavar="GB/S",
    help=NVLINK_GBS_HELP,
)
@sharp_option
@failure_options
@click.option(
    "--with-failures",
    is_flag=True,
    help="Apply the --fail/--drain flags; alone, the worst single failure.",
)
@click.option(
    "--compare",
    metavar="SPEC",
    help="Scenarios side by side: FIELD=v1,v2 (e.g. oversubscription=1:1,2:1) or healthy,failed.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "svg"]),
    default="table",
    show_default=True,
    help="svg plots busbw against size.",
)
@out_file_option("Write to FILE (atomically) instead of stdout.")
@handle_errors
def estimate_cmd(
    job_gpus: int | None,
    job_hosts: Path | None,
    collective: str,
    sizes: str | None,
    algorithms: tuple[str, ...],
    nvlink_gbs: float | None,
    sharp: bool | None,
    fail: tuple[str, ...],
    drain: tuple[str, ...],
    fail_random: int,
    seed: int,
    with_failures: bool,
    compare: str | None,
    fmt: str,
    out: Path | None,
    **kwargs: Any,
) -> None:
    """Estimate a collective's bus bandwidth on the fabric, per message size.

    Columns as nccl-tests prints them (busbw = algbw × 2(n−1)/n for
    all_reduce, × (n−1)/n for all_gather, reduce_scatter and alltoall). The
    model: NVLink from the server profile (NVLS where the GPU has it), each
    server's live rails, NCCL's ring/tree/NVLS/NVLSTree/CollNet, the cut a job
    crosses between SUs and pods, failed cables, per-hop latency, and
    efficiencies calibrated against published nccl-tests figures
    (docs/calibration.md). Estimates, not measurements.

    \b
    Examples:
      fabric-stack estimate --gpus 1024
      fabric-stack estimate --gpus 1024 --collective alltoall --compare oversubscription=1:1,2:1
      fabric-stack estimate --gpus 1024 --fail su1-r1-leaf --compare healthy,failed \
          --format svg --out f.svg
      fabric-stack estimate --gpus 32768 --job-gpus 4096 --sizes 1G,16G --format json
      fabric-stack estimate --job-hosts hosts.txt --algorithm ring
    """
    from fabric_stack.analysis.estimate import (
        DEFAULT_SIZES,
        ModelParams,
        estimate_collective,
        parse_sizes,
        worst_single_failure,
    )
    from fabric_stack.analysis.whatif import FabricIndex
    from fabric_stack.views.whatif import (
        estimate_json,
        estimate_markdown,
        estimate_svg,
        render_estimate,
    )

    spec = load_spec(kwargs)
    byte_sizes = parse_sizes(sizes or DEFAULT_SIZES)
    if job_gpus is not None and job_hosts is not None:
        raise SpecError("--job-gpus/--job-hosts", "give one of them, not both")
    results = []
    for label, sspec, mode in _scenarios(spec, compare):
        topo = _topology(sspec)
        index = FabricIndex(topo)
        hosts = (
            read_hosts(job_hosts, {d.name for d in topo.devices if d.role == "server"})
            if job_hosts
            else None
        )
        failures = _failures(index, fail, drain, fail_random, seed) if mode != "none" else []
        if not failures and (mode == "worst" or (mode == "given" and with_failures)):
            worst, _ = worst_single_failure(topo, collective, job_gpus=job_gpus, index=index)
            failures = [worst] if worst else []
        if failures and not label:
            label = "failed: " + ", ".join(f.target for f in failures[:3])
        elif failures:
            label += " (" + ", ".join(f.target for f in failures[:3]) + ")"
        est = estimate_collective(
            topo,
            collective,
            byte_sizes,
            job_gpus=job_gpus,
            job_hosts=hosts,
            failures=failures,
            algorithms=list(algorithms) or None,
            params=ModelParams(nvlink_gbs=nvlink_gbs, sharp=sharp),
            index=index,
        )
        results.append((label or "healthy", est))
    emit_formatted(
        results, fmt, out, (estimate_json, estimate_markdown, estimate_svg, render_estimate)
    )
