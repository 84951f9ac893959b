"""`render report --pdf`: print the design report's HTML to PDF with headless Chromium.

A real browser engine lays out the same self-contained HTML a reviewer opens, so the
PDF and the page agree. Debian's ``chromium`` package provides it
(``scripts/pdf-deps.sh`` installs it; CI runs that script). ``--no-sandbox`` because
Chromium refuses to run its sandbox as root, which CI containers are; the page has
no scripts and loads nothing from outside. Chromium prints into its own temporary
directory; the PDF then goes through the output layer like every file (atomic, never
through a symlink at the target, no staging file left by a signal).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from fabric_stack.errors import SpecError
from fabric_stack.files.outputs import write_file

PDF_TIMEOUT_S = 180
"""Seconds Chromium may take to print (the 32k-GPU report is a few MB of HTML)."""


def chromium() -> str | None:
    """Path of a Chromium executable on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def print_pdf(html: Path) -> Path:
    """Write ``html`` as ``<same name>.pdf`` beside it (atomically); returns the PDF's path."""
    exe = chromium()
    if exe is None:
        raise SpecError(
            "--pdf",
            "chromium is not installed",
            "run scripts/pdf-deps.sh (apt-get install chromium)",
        )
    pdf = html.with_suffix(".pdf")
    with tempfile.TemporaryDirectory(prefix="fabric-stack-pdf-") as profile:
        tmp = Path(profile) / "print.pdf"
        cmd = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={tmp}",
            html.resolve().as_uri(),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=PDF_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise SpecError("--pdf", f"chromium did not finish in {PDF_TIMEOUT_S} s") from None
        data = tmp.read_bytes() if tmp.is_file() else b""
    if proc.returncode != 0 or data[:4] != b"%PDF":
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise SpecError("--pdf", f"chromium failed (exit {proc.returncode}): {tail[0][:200]}")
    return write_file(pdf, data)


__all__ = ["chromium", "print_pdf"]
