"""Reading acceptance results: files and directories of nccl-tests, perftest and iperf3 output.

Through the input layer (:mod:`fabric_stack.files.inputs`: size cap, UTF-8, one-line
errors naming the file). A file given by name must be a result (else an error, exit 2);
a directory is read with its subdirectories (hidden entries left out); entries that are
not results (a README, a binary) are skipped and listed, so a results folder can be passed
whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fabric_stack.acceptance import looks_like_result
from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs

MAX_RESULT_BYTES = 256 << 20
"""One result file: an NCCL_DEBUG=INFO log of a 1,024-rank job is a few MB per run;
the cap leaves room for hundreds of runs in one file."""


def load_results(paths: Iterable[str | Path]) -> tuple[list[tuple[str, str]], list[str]]:
    """((source, text) per result file, skipped directory entries with the reason)."""
    files: list[tuple[str, str]] = []
    skipped: list[str] = []
    for path in paths:
        p = Path(path)
        if not p.is_dir():
            files.append((str(p), inputs.read_text(p, MAX_RESULT_BYTES)))
            continue
        entries = [
            e
            for e in inputs.list_files(p, "**/*")
            if not any(part.startswith(".") for part in e.relative_to(p).parts)
        ]
        if not entries:
            raise InputFileError(str(p), "directory holds no files (expected result files)")
        for e in entries:
            try:
                text = inputs.read_text(e, MAX_RESULT_BYTES)
            except InputFileError as exc:
                skipped.append(f"{e}: {exc.problem}")
                continue
            if looks_like_result(text):
                files.append((str(e), text))
            else:
                skipped.append(f"{e}: not nccl-tests, perftest or iperf3 output")
    return files, skipped


__all__ = ["MAX_RESULT_BYTES", "load_results"]
