"""Benchmark: render gate, kubernetes target and design report for a large plan (prints figures).

Run: ``.venv/bin/python bench/render_document.py [GPUS]`` (default 8,192 GPUs, InfiniBand QM9700).
The design report's document sections and the nccl-tests job share one all-reduce
estimate per render context (``RenderContext.acceptance_estimate``).
"""

from __future__ import annotations

import sys
import time

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext, render_artifacts
from fabric_stack.artifacts import report_document as doc
from fabric_stack.policy import evaluate


def main() -> None:
    """Time each stage once and print one line per stage."""
    gpus = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    t0 = time.perf_counter()
    ctx = RenderContext.from_topology(build_topology(size_fabric(validate_spec({"gpus": gpus}))))
    t1 = time.perf_counter()
    report = evaluate(ctx.intent)
    t2 = time.perf_counter()
    k8s = render_artifacts("kubernetes", ctx)
    t3 = time.perf_counter()
    for section in (doc.scope, doc.assumptions, doc.software_baseline, doc.acceptance_tests,
                    doc.risks, doc.overbuild):  # fmt: skip
        section(ctx)
    t4 = time.perf_counter()
    (html,) = render_artifacts("report", ctx)
    t5 = time.perf_counter()
    print(f"{gpus:,} GPUs InfiniBand QM9700: {len(ctx.intent.switches):,} switches")
    print(f"  pipeline (spec→topology→intent): {t1 - t0:6.2f} s")
    print(f"  render gate (policy evaluate):   {t2 - t1:6.2f} s ({report.status})")
    print(f"  render kubernetes ({len(k8s)} files):  {t3 - t2:6.2f} s (incl. the estimate)")
    print(f"  design-document sections:       {t4 - t3:6.2f} s")
    print(
        f"  render report ({len(html.content) / 1e6:.1f} MB HTML):  {t5 - t4:6.2f} s (whole report)"
    )


if __name__ == "__main__":
    main()
