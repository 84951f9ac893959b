"""Issue 20's seventeen causes, one fixed example (or more) each, run in-process.

Each example must end in one clear ``error:`` line and exit 2 with nothing
written (or, where the input is valid, be accepted with correct output). The
contract itself (exit codes, one line, no traceback, no file left behind,
bounded time and memory) is asserted by :func:`tests.contract.run_checked`.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from fabric_stack.errors import OutputFileError, SpecError
from fabric_stack.files import outputs
from fabric_stack.files.config import spec_from_stack_config
from tests.contract import Run, run_checked


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory (the issue ran every example from one)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def bad(cwd: Path, *args: str) -> str:
    """Run and expect exit 2; returns the one error line (contract checked)."""
    run = run_checked(args, cwd)
    assert run.code == 2, f"exit {run.code}: {run.stderr or run.stdout[:500]}"
    return run.stderr.strip()


def ok(cwd: Path, *args: str) -> Run:
    run = run_checked(args, cwd)
    assert run.code == 0, run.stderr
    return run


# 1. Unwritable --out for cabling/bom/diagram.
def test_1_unwritable_out(cwd: Path) -> None:
    assert bad(cwd, "cabling", "--format", "json", "--out", "/proc/plan.json").startswith(
        "error: /proc/plan.json: cannot write:"
    )
    (cwd / "afile").write_text("x\n")
    line = bad(cwd, "bom", "--format", "json", "--out", "afile/bom.json")
    assert line == "error: afile: cannot write: is a file, not a directory"
    assert "--out: empty path" in bad(cwd, "cabling", "--out", "")
    assert "file name too long" in bad(cwd, "cabling", "--out", "x" * 300)
    assert "is a directory" in bad(cwd, "diagram", "--out", ".")


def test_1_full_disk_leaves_nothing(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC on the second of two files: neither is written, the staged one is removed.

    (A real full filesystem needs a mount; the write failure is injected here.)
    """
    real = os.fdopen
    calls = {"n": 0}

    class Full:
        def __init__(self, fh: object) -> None:
            self.fh = fh

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()  # type: ignore[attr-defined]

        def fileno(self) -> int:
            return int(self.fh.fileno())  # type: ignore[attr-defined]

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd: int, mode: str = "r") -> object:
        calls["n"] += 1
        return Full(real(fd, mode)) if calls["n"] == 2 else real(fd, mode)

    monkeypatch.setattr(outputs.os, "fdopen", fdopen)
    with pytest.raises(OutputFileError, match=r"^out/b\.txt: cannot write: no space left"):
        outputs.write_files([(cwd / "out" / "a.txt", "a"), (Path("out/b.txt"), "b")])
    assert list(cwd.iterdir()) == []


# 2. `render all` leaves earlier targets' files behind when a later write fails.
def test_2_render_all_is_all_or_nothing(cwd: Path) -> None:
    (cwd / "b").mkdir()
    (cwd / "b" / "nccl").write_text("x\n")
    line = bad(cwd, "render", "all", "--out", "b")
    assert line == "error: b/nccl: cannot write: is a file, not a directory"
    assert sorted(p.name for p in (cwd / "b").iterdir()) == ["nccl"]
    long_name = "a" * 300
    (cwd / "long.yaml").write_text(f"name: {long_name}\n")
    assert "name: 'aaaa" in bad(cwd, "render", "all", "--out", "c", "--config", "long.yaml")
    assert not (cwd / "c").exists()


# 3. Huge --rails / --gpus-per-node burn CPU before the bounds check.
@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [("--gpus-per-node", "20000", "gpus_per_node"), ("--rails", "98304", "rails")],
)
def test_3_bounds_before_work(cwd: Path, flag: str, value: str, field: str) -> None:
    line = bad(cwd, "size", flag, value)
    assert line.startswith(f"error: {field}:") and "64" in line


# 4. Non-UTF-8 input in --config, stack files, --policy-config, --ignore, --node-name-map.
LATIN1 = b"gpus: 128\nname: caf\xe9\n"


def test_4_non_utf8_config(cwd: Path) -> None:
    (cwd / "l.yaml").write_bytes(LATIN1)
    line = bad(cwd, "size", "--config", "l.yaml")
    assert line == (
        "error: l.yaml:2: not UTF-8 text: byte 0xe9 at offset 19 (save the file as UTF-8)"
    )


def test_4_non_utf8_stack_file(cwd: Path) -> None:
    (cwd / "Pulumi.yaml").write_text("name: fabric\nruntime: python\n")
    (cwd / "Pulumi.lab.yaml").write_bytes(b"config:\n  fabric:name: caf\xe9\n")
    assert "Pulumi.lab.yaml:2: not UTF-8" in bad(cwd, "size", "--config", "Pulumi.lab.yaml")


def test_4_non_utf8_policy_ignore_and_node_map(cwd: Path) -> None:
    (cwd / "p.yaml").write_bytes(b"rules:\n  x: caf\xe9\n")
    assert "p.yaml:2: not UTF-8" in bad(cwd, "check", "--policy-config", "p.yaml")
    (cwd / "i.yaml").write_bytes(b"devices: [caf\xe9]\n")
    (cwd / "ib.txt").write_text("")
    assert "i.yaml:1: not UTF-8" in bad(
        cwd, "drift", "--ibnetdiscover", "ib.txt", "--ignore", "i.yaml"
    )
    (cwd / "map").write_bytes(b'0x0002c90300a1b2c3 "caf\xe9"\n')
    (cwd / "ib2.txt").write_text("vendid=0x2c9\n")
    assert "map:1: not UTF-8" in bad(
        cwd, "drift", "--ibnetdiscover", "ib2.txt", "--node-name-map", "map"
    )


# 5. YAML alias bombs (450 bytes took 20 s and 1.2 GB).
def test_5_alias_bomb(cwd: Path) -> None:
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    (cwd / "bomb.yaml").write_text("\n".join(rows) + "\n")
    assert len((cwd / "bomb.yaml").read_bytes()) < 600
    assert "expands to more than" in bad(cwd, "size", "--config", "bomb.yaml")


# 6. Read-only commands create databases.
def test_6_drift_never_creates_a_database(cwd: Path) -> None:
    line = bad(cwd, "drift", "--inventory", "sqlite:///typo/inventroy.db")
    assert line.startswith("error: inventory typo/inventroy.db: does not exist")
    assert not (cwd / "typo").exists()


def test_6_inventory_empty_url_creates_nothing(cwd: Path) -> None:
    (cwd / "Pulumi.yaml").write_text("name: fabric\nruntime: python\n")
    assert "inventory URL ''" in bad(cwd, "inventory", "--inventory", "")
    assert "does not exist" in bad(cwd, "inventory")
    assert not (cwd / ".state").exists()


def test_6_wrong_schema_is_not_switched_to_wal(cwd: Path) -> None:
    with sqlite3.connect(cwd / "other.db") as db:
        db.execute("CREATE TABLE t (x)")
    line = bad(cwd, "inventory", "--inventory", "sqlite:///other.db")
    assert line == (
        "error: inventory other.db: not a fabric-stack inventory (no fabric_inventory table)"
    )
    with sqlite3.connect(cwd / "other.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


# 7. `inventory` on a file that is not a database.
def test_7_not_a_database(cwd: Path) -> None:
    (cwd / "notdb.db").write_text("not a database\n" * 100)
    for cmd in ("inventory", "drift"):
        line = bad(cwd, cmd, "--inventory", "sqlite:///notdb.db")
        assert line.startswith("error: inventory notdb.db: not an SQLite database")


# 8. Numeric fields as strings (Pulumi stack config always passes strings).
def test_8_string_numbers_read_as_the_cli_reads_them(cwd: Path) -> None:
    (cwd / "r.yaml").write_text("rails: '0'\ngpus: '256'\n")
    from_file = ok(cwd, "size", "--config", "r.yaml", "--format", "json").stdout
    from_flags = ok(cwd, "size", "--rails", "0", "--gpus", "256", "--format", "json").stdout
    assert from_file == from_flags
    spec = spec_from_stack_config({"fabric:rails": "0", "fabric:gpusPerNode": "8"})
    assert spec.rails == 8
    with pytest.raises(SpecError, match=r"^fabric:rails: "):
        spec_from_stack_config({"fabric:rails": "3"})


# 9. RoCE per-switch overrides are not validated.
@pytest.mark.parametrize(
    ("override", "cmd", "expect"),
    [
        ("{mtu: big}", "size", "roce.overrides.spine.mtu: "),
        ("{mtu: big}", "render", "roce.overrides.spine.mtu: "),
        ("{mtu: [1, 2]}", "check", "roce.overrides.spine.mtu: "),
        ("{pfc_priorities: [99]}", "render", "priority 99 is outside 0-7"),
        ("{mtu: 100}", "size", "1500-9216"),
    ],
)
def test_9_roce_overrides(cwd: Path, override: str, cmd: str, expect: str) -> None:
    (cwd / "r.yaml").write_text(
        f"fabric: roce\nswitch: sn5600\nroce:\n  overrides:\n    spine: {override}\n"
    )
    args = [cmd, "--config", "r.yaml"]
    if cmd == "render":
        args = ["render", "cumulus", "--out", "out", "--config", "r.yaml"]
    assert expect in bad(cwd, *args)


def test_9_valid_override_still_renders(cwd: Path) -> None:
    (cwd / "r.yaml").write_text(
        "fabric: roce\nswitch: sn5600\nroce:\n  overrides:\n    spine: {mtu: '1500'}\n"
    )
    # MTU 1500 on the spines fails roce-lossless-consistency: the render gate needs
    # --allow-violations, and every file then says why.
    ok(cwd, "render", "roce-qos", "--out", "out", "--config", "r.yaml", "--allow-violations")
    texts = [p.read_text() for p in (cwd / "out").rglob("*") if p.is_file()]
    assert texts and any("mtu: 1500" in t for t in texts)
    assert all(t.startswith("# POLICY VIOLATIONS") for t in texts)


# 10. Deep nesting: RecursionError in YAML and in LLDP/NetBox JSON.
def test_10_deep_nesting(cwd: Path) -> None:
    (cwd / "deep.yaml").write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested deeper than 64" in bad(cwd, "size", "--config", "deep.yaml")
    (cwd / "lldp").mkdir()
    (cwd / "lldp" / "h.json").write_text('{"lldp": ' + "[" * 100000 + "]" * 100000 + "}")
    assert "h.json: JSON nested deeper" in bad(cwd, "drift", "--lldp", "lldp")
    (cwd / "nb.json").write_text('{"results": ' + "[" * 200 + "]" * 200 + "}")
    assert "nested deeper than 64 levels" in bad(cwd, "drift", "--netbox-json", "nb.json")


# 11. No upper bound on generic switches / GPU count.
def test_11_gpu_count_bound(cwd: Path) -> None:
    line = bad(cwd, "bom", "--switch", "generic-1024x400", "--gpus", "268435456")
    assert line.startswith("error: gpus:") and "262144" in line


# 12. Dangling symlink or symlink loop in --lldp / --eos directories.
@pytest.mark.parametrize("flag", ["--lldp", "--eos"])
def test_12_symlinks(cwd: Path, flag: str) -> None:
    (cwd / "d").mkdir()
    (cwd / "d" / "x.json").symlink_to("nowhere.json")
    assert "x.json: cannot read: dangling symlink" in bad(cwd, "drift", flag, "d")
    (cwd / "d" / "x.json").unlink()
    (cwd / "d" / "x.json").symlink_to("y.json")
    (cwd / "d" / "y.json").symlink_to("x.json")
    assert "symlink loop" in bad(cwd, "drift", flag, "d")


# 13. Inputs read whole with no size limit.
def test_13_size_limit(cwd: Path) -> None:
    assert "/dev/zero: is a device" in bad(cwd, "size", "--config", "/dev/zero")
    with open(cwd / "big.yaml", "wb") as fh:  # sparse: no disk used
        fh.truncate(9 << 20)
    assert "larger than 8 MiB" in bad(cwd, "size", "--config", "big.yaml")
    os.mkfifo(cwd / "fifo")
    assert "is a pipe" in bad(cwd, "size", "--config", "fifo")


# 14. Integers over 4,300 digits; CSV fields over 131,072 characters.
def test_14_long_integers_and_fields(cwd: Path) -> None:
    (cwd / "i.yaml").write_text("gpus: 1" + "0" * 5000 + "\n")
    assert "integer with 5,001 digits (at most 40)" in bad(cwd, "size", "--config", "i.yaml")
    (cwd / "nb.json").write_text('{"results": [{"id": 1' + "0" * 5000 + "}]}")
    assert "integer with 5,001 digits" in bad(cwd, "drift", "--netbox-json", "nb.json")
    line = bad(cwd, "size", "--switch", "generic-1" + "0" * 5000 + "x400")
    assert "unknown switch model" in line and len(line) < 400
    (cwd / "g.csv").write_text("name,guid\n" + "a" * 140_000 + ",0x1\n")
    line = bad(cwd, "render", "infiniband", "--out", "o", "--guids", "g.csv")
    assert line.startswith("error: g.csv:2: invalid CSV: a field longer than")


# 15. Written files are always 0600; overwriting a 0644 file makes it 0600.
def test_15_modes_follow_umask_and_existing_file(cwd: Path) -> None:
    old = os.umask(0o022)
    try:
        ok(cwd, "cabling", "--out", "plan.csv")
        assert stat.S_IMODE((cwd / "plan.csv").stat().st_mode) == 0o644
        (cwd / "plan.csv").chmod(0o640)
        ok(cwd, "cabling", "--out", "plan.csv")
        assert stat.S_IMODE((cwd / "plan.csv").stat().st_mode) == 0o640
        os.umask(0o077)
        ok(cwd, "render", "nccl", "--out", "r")
        assert {stat.S_IMODE(p.stat().st_mode) for p in (cwd / "r").rglob("*") if p.is_file()} == {
            0o600
        }
    finally:
        os.umask(old)


# 16. Accepted without complaint.
@pytest.mark.parametrize(
    ("yaml_text", "expect"),
    [
        ("gpus: 128\ngpus: 256\n", "duplicate key 'gpus' (first on line 1)"),
        ("name: ''\n", "name: '' is not usable in Kubernetes"),
        ("name: My Cluster\n", "is not usable in Kubernetes"),
        ("networks:\n  storage:\n    switch: qm9999\n", "networks.storage.switch: unknown"),
        ("networks:\n  storage:\n    subnet: 10.200.0.0/30\n", "at most /27"),
        ("networks:\n  inband:\n    subnet: 10.200.0.0/24\n", "overlaps storage.subnet"),
    ],
)
def test_16_spec_refuses(cwd: Path, yaml_text: str, expect: str) -> None:
    (cwd / "c.yaml").write_text(yaml_text)
    assert expect in bad(cwd, "size", "--config", "c.yaml")


def test_16_flags_refused(cwd: Path) -> None:
    assert "--stack: '' is not a stack name" in bad(cwd, "size", "--stack", "")
    assert "--max-rows: -1 is not in the range" in bad(cwd, "check", "--max-rows", "-1")


# 17. Unclear messages.
def test_17_capacity_error_names_the_binding_field(cwd: Path) -> None:
    line = bad(cwd, "size", "--gpus", "16384", "--su-nodes", "1")
    assert line.startswith("error: su_nodes: ") and "use su_nodes 8-32" in line


def test_17_no_suggestion_of_the_switch_in_use(cwd: Path) -> None:
    line = bad(
        cwd,
        "size",
        "--gpus",
        "262144",
        "--fabric",
        "roce",
        "--switch",
        "sn5600",
        "--nic-gbps",
        "800",
    )
    # q3400 is InfiniBand and sn5600 is the switch in use: neither is a fix here.
    assert "e.g. generic-<radix>x800" in line and "q3400" not in line


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (("--oversubscription", "64:1"), "A + B ≤ 64"),
        (("--gpus", "4"), "(try 8)"),
        (("--config", ""), "--config: empty path"),
        (("--gpus", "x"), "--gpus: 'x' is not a valid integer (see fabric-stack size --help)"),
        (("--bogus",), "No such option '--bogus'"),
    ],
)
def test_17_messages(cwd: Path, args: tuple[str, ...], expect: str) -> None:
    assert expect in bad(cwd, "size", *args)


def test_17_nul_and_newline_stay_on_one_line(cwd: Path) -> None:
    (cwd / "nul.yaml").write_bytes(b"a\x00: 1\n")
    assert "control character #x0000" in bad(cwd, "size", "--config", "nul.yaml")
    (cwd / "nl.yaml").write_text('"a\\nb": 1\n')
    assert "unknown key 'a\\nb'" in bad(cwd, "size", "--config", "nl.yaml")


def test_17_sizing_errors_name_the_config_file(cwd: Path) -> None:
    # (su_nodes above a leaf's downlinks was the sizing error here; since #43 it gives
    # several leaves per rail, so a rail grouping that needs a core stands in.)
    (cwd / "su.yaml").write_text("gpus: 32768\nspine_grouping: rail\n")
    assert bad(cwd, "size", "--config", "su.yaml").startswith("error: su.yaml: spine_grouping: ")


# Found while fuzzing: targets that are not regular files, symlinks, NUL bytes.
def test_out_never_replaces_a_device_or_pipe(cwd: Path) -> None:
    os.mkfifo(cwd / "pipe")
    line = bad(cwd, "cabling", "--out", "pipe")
    assert line == (
        "error: pipe: cannot write: is a device or pipe, not a regular file "
        "(leave out --out for stdout)"
    )
    assert stat.S_ISFIFO((cwd / "pipe").lstat().st_mode)


def test_out_never_writes_through_a_symlink(cwd: Path) -> None:
    """Issue 35: a link at the target is refused (it was followed before, which let a
    planted link overwrite any file); tests/unit/test_write_safety.py covers every writer."""
    (cwd / "real.csv").write_text("old\n")
    (cwd / "link.csv").symlink_to("real.csv")
    line = bad(cwd, "cabling", "--out", "link.csv")
    assert line.startswith("error: link.csv: cannot write: is a symbolic link"), line
    assert (cwd / "real.csv").read_text() == "old\n"


@pytest.mark.parametrize("flag", ["--config", "--out"])
def test_nul_byte_in_a_path(cwd: Path, flag: str) -> None:
    cmd = "size" if flag == "--config" else "cabling"
    assert "a path cannot contain a NUL byte" in bad(cwd, cmd, flag, "a\x00b")
