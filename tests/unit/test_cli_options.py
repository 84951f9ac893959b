"""One spelling per concept across the CLI, checked on the click commands themselves.

Every command's options are walked (click introspection of ``fabric_stack.cli:main``): an
option spelled the same in two commands takes the same kind of value with the same
metavar and, unless :data:`HELP_VARIES` says why, the same help; ``--out`` is always a
file and ``--out-dir`` a directory (the rule ``fabric-stack --help`` states); renamed
spellings still parse. Every ``--flag`` an error or hint names exists: in the source
(every string fabric_stack holds) and in the error lines real invocations print, where
the flag must be an option of the very command that printed it (issue 32).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fabric_stack.adapters.discovery.registry import SHARED, SOURCES
from fabric_stack.cli import main
from fabric_stack.cli.params import AliasedOption

PKG = Path(__file__).resolve().parents[2] / "fabric_stack"


def commands() -> Iterator[tuple[str, click.Command]]:
    """(path, command) of every command and group under ``main`` ("" for main itself)."""

    def walk(cmd: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
        yield path, cmd
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                yield from walk(sub, f"{path} {name}".strip())

    yield from walk(main, "")


def options(cmd: click.Command) -> list[click.Option]:
    """The command's own options, --help included."""
    return [p for p in cmd.params if isinstance(p, click.Option)]


def visible(opt: click.Option) -> list[str]:
    """The spellings --help shows (an AliasedOption hides its old ones)."""
    return opt.visible_opts if isinstance(opt, AliasedOption) else list(opt.opts)


def every_flag(cmd: click.Command) -> set[str]:
    """Every spelling the command accepts, hidden aliases and -h/--help included."""
    ctx = click.Context(cmd)
    flags = {f for o in options(cmd) for f in [*o.opts, *o.secondary_opts]}
    return flags | set(cmd.get_help_option_names(ctx))


ALL = dict(commands())

_SHORT = {o.flag for s in SOURCES for o in (s.option, *s.extras) if o.short_help}
_SHORT |= {o.flag for o in SHARED if o.short_help}

HELP_VARIES: dict[str, str] = {
    "--format": "each command lists the formats it writes",
    "--stack": "plan/apply/recover run the stack; planning commands read its config; "
    "inventory filters its records by it",
    "--out": "it says what the file holds",
    "--out-dir": "it says what the directory receives",
    "--inventory": "drift reads it as one more source (no default); inventory lists it "
    "(NetBox too); export, import and upgrade take SQL inventories only",
    "--guids": "render fills the node-name-map with them, twin up gives them to its nodes",
    "--max-rows": "check counts violations per rule, drift counts findings",
    "--from": "diff's spec before a change; stack init's spec (with stack keys) to store",
    **{f: "adopt's long option list shows the registry's short help" for f in _SHORT},
}
"""Options whose help differs between commands on purpose, and why."""

SIGNATURE_VARIES: dict[str, str] = {
    "--format": "the choices are the formats each command writes",
    "--stack": "inventory export takes several (repeatable)",
}
"""Options whose value kind differs on purpose (beyond the help text)."""


def _signature(opt: click.Option, flag: str) -> tuple[object, ...]:
    t = opt.type
    kind: tuple[object, ...] = (type(t).__name__,)
    if isinstance(t, click.Path):
        kind += (t.file_okay, t.dir_okay)
    if flag in SIGNATURE_VARIES:
        return kind
    shown = opt.metavar or ("" if opt.is_flag else t.name.upper())
    return (*kind, shown, opt.multiple, opt.is_flag, opt.count)


def _by_flag() -> dict[str, list[tuple[str, click.Option]]]:
    seen: dict[str, list[tuple[str, click.Option]]] = defaultdict(list)
    for path, cmd in ALL.items():
        for opt in options(cmd):
            for flag in visible(opt):
                if flag.startswith("--") and flag != "--help":
                    seen[flag].append((path, opt))
    return seen


BY_FLAG = _by_flag()
SHARED_FLAGS = sorted(f for f, uses in BY_FLAG.items() if len(uses) > 1)


def test_there_are_shared_options_to_compare() -> None:
    # the walk reaches subcommands and groups' own options (inventory, twin)
    assert {"--out", "--out-dir", "--netbox", "--netbox-token-file", "--inventory", "--dir"} <= set(
        SHARED_FLAGS
    )
    assert {"inventory", "inventory export", "twin collect", "render"} <= set(ALL)


@pytest.mark.parametrize("flag", SHARED_FLAGS)
def test_a_shared_option_means_the_same_everywhere(flag: str) -> None:
    uses = BY_FLAG[flag]
    sigs = {path: _signature(opt, flag) for path, opt in uses}
    assert len(set(sigs.values())) == 1, f"{flag} takes different values: {sigs}"
    if flag not in HELP_VARIES:
        helps = {path: opt.help for path, opt in uses}
        assert len(set(helps.values())) == 1, f"{flag} is described differently: {helps}"


def test_out_is_a_file_and_out_dir_a_directory() -> None:
    for flag, file_okay in (("--out", True), ("--out-dir", False)):
        for path, opt in BY_FLAG[flag]:
            t = opt.type
            assert isinstance(t, click.Path), (flag, path)
            assert (t.file_okay, t.dir_okay) == (file_okay, not file_okay), (flag, path)
            assert opt.metavar == ("FILE" if file_okay else "DIR"), (flag, path)
    rule = CliRunner().invoke(main, ["--help"]).output
    assert "--out FILE        writes one file; --out-dir DIR a directory of files" in rule


@pytest.mark.parametrize(
    ("args", "param", "expected"),
    [
        (["render", "all", "--out", "build"], "out_dir", Path("build")),
        (["twin", "collect", "--dir", "t", "--out", "seen"], "out_dir", Path("seen")),
    ],
)
def test_old_spellings_still_work_and_are_hidden(
    args: list[str], param: str, expected: Path
) -> None:
    path = args[: 2 if args[0] == "twin" else 1]
    cmd = ALL[" ".join(path)]
    ctx = cmd.make_context(" ".join(path), args[len(path) :])
    assert ctx.params[param] == expected
    help_text = CliRunner().invoke(main, [*path, "--help"]).output
    assert "--out-dir DIR" in help_text and "--out " not in help_text.replace("--out-dir", "")


def test_netbox_options_are_the_registrys_everywhere() -> None:
    # drift, adopt and inventory: one NetBox option set, from the drift-source registry
    for flag in ("--netbox", "--netbox-token-file"):
        assert {p for p, _ in BY_FLAG[flag]} >= {"drift", "adopt", "inventory"}, flag


# --------------------------------------------------------------------------- hints

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*[a-z0-9]")

OTHER_TOOLS: dict[str, str] = {
    "--line": "iblinkinfo (one line per port)",
    "--policy-pack": "pulumi preview/up",
    "--policy-pack-config": "pulumi preview/up",
    "--secret": "pulumi config set",
    "--diff": "pulumi preview",
    "--clear-pending-creates": "pulumi refresh",
    "--non-interactive": "pulumi",
    "--show-secrets": "pulumi",
    "--show-name": "pulumi stack",
    "--no-select": "pulumi stack init",
    "--json": "pulumi, ip",
    "--yes": "pulumi up (fabric-stack apply has it too)",
    "--skip-preview": "pulumi up",
    "--dryrun": "vtysh",
    "--test": "frr-reload.py",
    "--strict": "mkdocs build, mypy",
    "--update": "python -m tests.docs_examples",
    "--pulumi": "python -m tests.docs_examples",
    "--headless": "chromium",
    "--print-to-pdf": "chromium",
    "--no-pdf-header-footer": "chromium",
    "--disable-gpu": "chromium",
    "--no-sandbox": "chromium",
    "--virtual-time-budget": "chromium",
    "--run-all-compositor-stages-before-draw": "chromium",
    "--user-data-dir": "chromium",
    "--no-first-run": "chromium",
    "--disable-dev-shm-usage": "chromium",
    "--timeout": "pytest-timeout",
    "--hypothesis-show-statistics": "pytest",
    "--create": "pulumi stack select",
    "--env-file": "docker run",
    "--pfc": "mlnx_qos",
    "--trust": "mlnx_qos",
    "--allow-run-as-root": "mpirun",
    "--bind-to": "mpirun",
    "--report_gbits": "ib_write_bw",
    "--vty_socket": "FRR's daemons",
    "--config_dir": "FRR's daemons",
    "--out_ibnl_dir": "ibdiagnet",
    "--quiet": "pip",
    "--upgrade": "pip",
    "--bidir": "iperf3",
    "--connect-timeout": "iperf3",
    "--tag-output": "mpirun (Open MPI)",
    "--prefix": "kubectl logs",
    "--timestamps": "kubectl logs",
    "--overwrite": "kubectl label",
    "--context": "kubectl",
    "--label": "srun",
    "--hostname-override": "kubelet",
    "--write-to-db": "sonic-cfggen",
    "--chdir": "env",
    "--unset": "env",
    "--split-string": "env",
    "--dscp2prio": "mlnx_qos",
    "--cable_len": "mlnx_qos",
}
"""Flags of other tools that fabric-stack's strings name, and the tool."""

OTHER_TOOL_MODULES: dict[str, str] = {
    "fabric_stack/acceptance/perftest.py": "perftest (ib_write_bw …): its option table",
}
"""Modules whose strings are another tool's option table: every flag there is that tool's."""

OURS = set().union(*(every_flag(c) for c in ALL.values()))


NOT_FLAGS = ("artifacts/report_style.py",)
"""Modules whose ``--name`` strings are not options (CSS custom properties)."""


def _strings() -> Iterator[tuple[str, int, str]]:
    for path in sorted(PKG.rglob("*.py")):
        if path.relative_to(PKG).as_posix() in NOT_FLAGS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                # ``A --stage--> B`` arrows in docstrings are not flags
                text = re.sub(r"--\w+-->", " ", node.value)
                yield path.relative_to(PKG.parent).as_posix(), node.lineno, text


def test_every_flag_the_source_names_exists() -> None:
    unknown = sorted(
        {
            f"{where}:{line}: {flag}"
            for where, line, text in _strings()
            if where not in OTHER_TOOL_MODULES
            for flag in FLAG.findall(text)
            if flag not in OURS and flag not in OTHER_TOOLS
        }
    )
    assert not unknown, "strings name options no command has:\n" + "\n".join(unknown)


TICKED = re.compile(r"`([^`]*)`")


def _flags_outside_other_tools(text: str) -> Iterator[tuple[str | None, str]]:
    """(command path or None for "the failing command", flag) of each flag in ``text``.

    A flag inside a backticked ``fabric-stack CMD …`` belongs to CMD; one inside any other
    backticked command (``pulumi stack init NAME``) to that tool, and is not checked.
    """
    rest = text
    for m in TICKED.finditer(text):
        words = m.group(1).split()
        rest = rest.replace(m.group(0), " ")
        if words and words[0] == "fabric-stack":
            path = [w for w in words[1:3] if not w.startswith("-")]
            while path and " ".join(path) not in ALL:
                path.pop()
            for flag in FLAG.findall(m.group(1)):
                yield " ".join(path), flag
    for flag in FLAG.findall(rest):
        yield None, flag


NO_TOKEN = {"NETBOX_TOKEN": None}

BAD_INVOCATIONS: list[tuple[list[str], dict[str, str | None]]] = [
    (["inventory", "--inventory", "netbox+http://127.0.0.1:9"], NO_TOKEN),
    (["inventory", "--netbox", "http://127.0.0.1:9"], NO_TOKEN),
    (["inventory", "--netbox-token-file", "token.txt"], {}),
    (["inventory", "--netbox", "ftp://x", "--netbox-token-file", "token.txt"], {}),
    (["drift", "--netbox", "http://127.0.0.1:9"], NO_TOKEN),
    (["drift", "--node-name-map", "token.txt"], {}),
    (["drift"], {}),
    (["adopt"], {}),
    (["adopt", "--netbox-site", "dc1"], {}),
    (["render", "frr", "--out-dir", "build"], {}),
    (["render", "roce-qos", "--out-dir", "build"], {}),
    (["render", "all"], {}),
    (["diagram", "--out", "fabric.png"], {}),
    (["bom", "--format", "table", "--out", "bom.txt"], {}),
    (["cabling", "--format", "topo", "--fabric", "roce", "--switch", "sn5600"], {}),
    (["check", "--stack", "nope"], {}),
    (["check", "--config", "token.txt", "--stack", "nope"], {}),
    (["plan"], {}),
    (["apply", "--stack", "x"], {}),
    (["recover"], {}),
    (["size", "--oversubscription", "1:2"], {}),
    (["whatif", "--fail", "nope"], {}),
    (["estimate", "--job-gpus", "7"], {}),
    (["twin", "collect", "--dir", "t", "--out-dir", "seen"], {}),
]
"""Mistakes a newcomer makes, one or more per command, each printing an error line."""


@pytest.mark.parametrize(
    ("args", "env"), BAD_INVOCATIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_every_flag_an_error_names_is_an_option_of_that_command(
    args: list[str], env: dict[str, str | None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "token.txt").write_text("nbt_x\n")
    r = CliRunner().invoke(main, args, env=env, input="")
    assert r.exit_code != 0 and r.stderr.strip(), (args, r.output)
    cmd_path = " ".join(args[:2]) if " ".join(args[:2]) in ALL else args[0]
    wrong = [
        (owner or cmd_path, flag)
        for owner, flag in _flags_outside_other_tools(r.stderr)
        if flag not in every_flag(ALL[owner or cmd_path])
    ]
    assert not wrong, f"{r.stderr!r} names options {wrong} that do not exist there"
