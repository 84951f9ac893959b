"""Issue 35: a tampered twin.json is refused before anything runs (no root needed here).

``twin down`` runs as root and removes every path, stops every process the state
file names; each case below is one field an attacker could point elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.errors import FabricStackError
from fabric_stack.twin.model import PREFIX, Process, TwinState
from fabric_stack.twin.runtime import (
    RUN_ROOT,
    alive,
    command_line,
    load_state,
    remove_paths,
    start_ticks,
    twin_tag,
)


def _valid(directory: Path) -> dict[str, Any]:
    tag = twin_tag(directory)
    ns = f"{PREFIX}{tag}-ib"
    state = TwinState(
        tag=tag,
        token="5" * 32,
        fabric="infiniband",
        spec={},
        created_dir=True,
        paths=("ib", "logs"),
        runtime_dir=str(RUN_ROOT / f"{PREFIX}{tag}"),
        namespaces=(ns,),
        processes=(Process(name="ibsim", pid=4242, start_ticks=99, netns=ns, command="ibsim"),),
    )
    doc: dict[str, Any] = json.loads(state.model_dump_json())
    return doc


def _load(directory: Path, doc: Any) -> str:
    (directory / "twin.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    with pytest.raises(FabricStackError) as info:  # TwinError, or InputFileError (depth)
        load_state(directory)
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith(f"{directory / 'twin.json'}: "), line
    return line


def test_a_valid_state_loads(tmp_path: Path) -> None:
    (tmp_path / "twin.json").write_text(json.dumps(_valid(tmp_path)))
    state = load_state(tmp_path)
    assert state is not None and state.processes[0].command == "ibsim"


@pytest.mark.parametrize(
    "rel", ["../outside", "/etc", "ib/../../outside", ".", "", "logs/../.."], ids=repr
)
def test_paths_outside_the_twin_directory_are_refused(tmp_path: Path, rel: str) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    doc = _valid(twin)
    doc["paths"] = ["ib", rel]
    assert "paths[1]: " in _load(twin, doc)


def test_a_path_through_a_symlink_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    (tmp_path / "precious").mkdir()
    (twin / "logs").symlink_to(tmp_path / "precious")
    doc = _valid(twin)
    doc["paths"] = ["logs/sub"]
    assert "paths[0]: 'logs/sub' resolves to" in _load(twin, doc)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("start_ticks", 0, "processes[0].start_ticks: 0 is not a start time"),
        ("start_ticks", -5, "processes[0].start_ticks"),
        ("pid", 1, "processes[0].pid: 1"),
        ("pid", 0, "processes[0].pid"),
        ("netns", "other-ns", "processes[0].netns"),
    ],
)
def test_processes_are_checked(tmp_path: Path, field: str, value: Any, named: str) -> None:
    doc = _valid(tmp_path)
    doc["processes"][0][field] = value
    assert named in _load(tmp_path, doc)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tag", "000000"),
        ("tag", "../../x"),
        ("namespaces", ["default"]),
        ("namespaces", ["fst-other1-ib"]),
        ("runtime_dir", "/"),
        ("runtime_dir", "/run/fst-x/../.."),
    ],
)
def test_names_of_another_twin_are_refused(tmp_path: Path, field: str, value: Any) -> None:
    doc = _valid(tmp_path)
    doc[field] = value
    assert f": {field}" in _load(tmp_path, doc)


def test_nested_too_deep_is_one_line(tmp_path: Path) -> None:
    line = _load(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert "nested deeper than" in line


@pytest.mark.parametrize("text", ["{", "[]", '{"tag": 1}', "\xff"], ids=repr)
def test_not_a_state_file_is_one_line(tmp_path: Path, text: str) -> None:
    _load(tmp_path, text)


def test_alive_needs_the_start_time_and_the_program(tmp_path: Path) -> None:
    me = os.getpid()
    ticks = start_ticks(me)
    assert ticks is not None
    line = command_line(me)
    assert line is not None
    program = Path(line.split()[0]).name
    assert alive(Process(name="me", pid=me, start_ticks=ticks, netns="x", command=program))
    assert not alive(Process(name="me", pid=me, start_ticks=0, netns="x"))
    assert not alive(Process(name="me", pid=me, start_ticks=ticks + 1, netns="x"))
    assert not alive(Process(name="me", pid=me, start_ticks=ticks, netns="x", command="opensm"))


def test_remove_paths_stays_inside_even_if_a_link_appears(tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "keep").write_text("x")
    (twin / "logs").symlink_to(tmp_path / "precious")
    (twin / "ib").mkdir()
    remove_paths(twin, ["logs/keep", "../precious", "ib"], "/run/not-ours")
    assert (tmp_path / "precious" / "keep").exists()
    assert not (twin / "ib").exists()


def test_the_recorded_program_is_what_env_execs() -> None:
    # `env -C DIR opensm …` becomes `opensm …` in /proc/PID/cmdline once env has exec'd: a
    # recorded "env" made `alive` call every running OpenSM dead (found by a real IB twin).
    from fabric_stack.twin.runtime import program_of

    assert program_of(["env", "-C", "/tmp/x", "opensm", "-F", "c.conf"]) == "opensm"
    assert program_of(["env", "A=1", "-u", "B", "/usr/bin/ibsim", "-s"]) == "ibsim"
    assert program_of(["/usr/sbin/lldpd", "-d"]) == "lldpd"
    assert program_of(["env"]) == "env"


def test_an_empty_command_line_is_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # /proc/PID/cmdline reads empty while a process is in execve: alive() must not call a
    # starting daemon dead then (it failed `twin up` under load), nor a retitled one.
    import os

    from fabric_stack.twin import runtime
    from fabric_stack.twin.model import Process

    me = Process(
        name="x",
        pid=os.getpid(),
        start_ticks=runtime.start_ticks(os.getpid()) or 1,
        netns="fst-aaaaaa-ib",
        command="opensm",
    )
    monkeypatch.setattr(runtime, "command_line", lambda pid: "")
    assert runtime.alive(me)
    monkeypatch.setattr(runtime, "command_line", lambda pid: "python -m pytest")
    assert not runtime.alive(me)
    monkeypatch.setattr(runtime, "command_line", lambda pid: "ip netns exec ns env -C d opensm")
    assert runtime.alive(me)
