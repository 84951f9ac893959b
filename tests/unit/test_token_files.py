"""Issue 35: token files go through the input layer (regular file, size cap, UTF-8, one line).

Each bad file is one line and exit 2 before anything connects (the NetBox URL is a
closed loopback port); a FIFO or /dev/zero must not hang or fill memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric_stack.errors import InputFileError
from fabric_stack.files.inputs import MAX_SECRET_BYTES, read_secret
from tests.contract import run_checked


def _bad(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    if name == "fifo":
        os.mkfifo(p)
    elif name == "latin1":
        p.write_bytes(b"nbt_caf\xe9\n")
    elif name == "big":
        p.write_bytes(b"x" * (MAX_SECRET_BYTES + 1))
    elif name == "two-lines":
        p.write_text("nbt_a\nnbt_b\n")
    elif name == "empty":
        p.write_text("\n\n")
    elif name == "control":
        p.write_text("nbt_\x1b[2Ja\n")
    elif name == "dir":
        p.mkdir()
    else:
        return Path(name)
    return p


CASES = ["fifo", "latin1", "big", "two-lines", "empty", "control", "dir", "/dev/zero", "/none"]


@pytest.mark.parametrize("name", CASES)
def test_read_secret_refuses_in_one_line(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputFileError) as info:
        read_secret(_bad(tmp_path, name), "--netbox-token-file")
    line = str(info.value)
    assert line.startswith("--netbox-token-file ") and "\n" not in line, line
    assert "caf" not in line and "nbt_" not in line  # never a byte of the secret


def test_read_secret_takes_the_one_line(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("  nbt_0123.abcd  \n")
    assert read_secret(tmp_path / "t", "--x") == "nbt_0123.abcd"


@pytest.mark.parametrize("name", ["fifo", "latin1", "/dev/zero"])
def test_commands_refuse_a_bad_token_file(tmp_path: Path, name: str) -> None:
    path = _bad(tmp_path, name)
    args = ["drift", "--netbox", "http://127.0.0.1:9", "--netbox-token-file", str(path)]
    run = run_checked(args, tmp_path)
    assert run.code == 2, run.stderr
    assert run.stderr.startswith(f"error: --netbox-token-file {path}"), run.stderr
