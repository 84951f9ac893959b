"""Hostile ``ibnetdiscover`` dumps for ``adopt`` and ``render slurm --ibnetdiscover`` (issue 47):
binary, truncated mid-record, 2 GB, a cycle in the switch graph. A bad dump is one line,
exit 2, before anything is read into memory past the size limit; a cycle is no hang."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.unit.test_adopt import REAL

NDR = REAL / "ibnetdiscover" / "topograph-ndr-dgx-example.out"
COMMANDS = [["adopt"], ["render", "slurm", "--out-dir", "out"]]


def _ring(n: int) -> str:
    """``n`` switches cabled in a ring (port 1 to the next one's port 2), one host each."""
    sw = "{:016x}".format
    ca = lambda i: f"{0xA000 + i:016x}"  # noqa: E731
    out: list[str] = []
    for i in range(1, n + 1):
        nxt, prv = i % n + 1, (i - 2) % n + 1
        out += [
            "vendid=0x2c9",
            "devid=0xd2f2",
            f"sysimgguid=0x{sw(i)}",
            f"switchguid=0x{sw(i)}({sw(i)})",
            f'Switch\t8 "S-{sw(i)}"\t\t# "MF0;sw{i}:MQM9700/U1" enhanced port 0 lid {i} lmc 0',
            f'[1]\t"S-{sw(nxt)}"[2]\t\t# "MF0;sw{nxt}:MQM9700/U1" lid {nxt} 4xNDR',
            f'[2]\t"S-{sw(prv)}"[1]\t\t# "MF0;sw{prv}:MQM9700/U1" lid {prv} 4xNDR',
            f'[3]\t"H-{ca(i)}"[1]({ca(i)}) \t\t# "h{i} mlx5_0" lid {1000 + i} 4xNDR',
            "",
        ]
    for i in range(1, n + 1):
        out += [
            "vendid=0x2c9",
            "devid=0x1021",
            f"sysimgguid=0x{ca(i)}",
            f"caguid=0x{ca(i)}",
            f'Ca\t1 "H-{ca(i)}"\t\t# "h{i} mlx5_0"',
            f'[1]({ca(i)}) \t"S-{sw(i)}"[3]\t\t# lid {1000 + i} lmc 0 '
            f'"MF0;sw{i}:MQM9700/U1" lid {i} 4xNDR',
            "",
        ]
    return "\n".join(out)


def _run(tmp_path: Path, cmd: list[str], dump: Path) -> tuple[int, str, float]:
    start = time.process_time()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        r = CliRunner().invoke(main, [*cmd, "--ibnetdiscover", str(dump)])
    return r.exit_code, r.output, time.process_time() - start


@pytest.mark.parametrize("cmd", COMMANDS, ids=["adopt", "render"])
def test_a_binary_dump_is_one_line_exit_2(tmp_path: Path, cmd: list[str]) -> None:
    dump = tmp_path / "bin.out"
    dump.write_bytes(bytes(range(256)) * 64)
    code, out, _ = _run(tmp_path, cmd, dump)
    assert code == 2 and out.count("\n") == 1 and "not UTF-8 text" in out, out


@pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")
@pytest.mark.parametrize("cmd", COMMANDS, ids=["adopt", "render"])
def test_a_dump_cut_mid_record_is_one_line_exit_2(tmp_path: Path, cmd: list[str]) -> None:
    dump = tmp_path / "cut.out"
    dump.write_bytes(NDR.read_bytes()[:100_000])  # ends inside a switch block
    code, out, _ = _run(tmp_path, cmd, dump)
    assert code == 2 and out.count("\n") == 1 and "looks truncated" in out, out
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.parametrize("cmd", COMMANDS, ids=["adopt", "render"])
def test_a_2_gb_dump_is_refused_before_it_is_read(tmp_path: Path, cmd: list[str]) -> None:
    dump = tmp_path / "huge.out"
    with open(dump, "wb") as fh:  # sparse: no disk used
        fh.truncate(2 << 30)
    code, out, cpu = _run(tmp_path, cmd, dump)
    assert code == 2 and out.count("\n") == 1 and "huge.out" in out, out
    assert cpu < 5


@pytest.mark.parametrize("cmd", COMMANDS, ids=["adopt", "render"])
def test_a_ring_of_switches_ends_in_bounded_time(tmp_path: Path, cmd: list[str]) -> None:
    """A switch graph with a cycle and no tier above the hosts' switches: no hang, no
    traceback (adopt reports what it could not place: exit 1; render writes each switch
    with its host, none above: exit 0)."""
    dump = tmp_path / "ring.out"
    dump.write_text(_ring(300), encoding="utf-8")
    code, out, cpu = _run(tmp_path, cmd, dump)
    assert code in (0, 1), out
    assert "Traceback" not in out and cpu < 20
