"""`fabric-stack render TARGET --out-dir DIR`: targets per fabric, atomic writes, clear refusals."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabric_stack.artifacts import (
    TARGETS,
    Target,
    TargetMismatchError,
    applies,
    render_artifacts,
    skip_reason,
    skipped_targets,
    targets_table,
)
from fabric_stack.cli import main
from fabric_stack.policy.applicability import Applicability
from tests.golden_artifacts import VARIANTS, context, seed_artifacts, seed_context

ROCE = ["--fabric", "roce", "--switch", "sn5600"]


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "100", "NO_COLOR": "1"}).invoke(main, ["render", *args])
    return result.exit_code, result.stdout, result.stderr


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_all_infiniband_writes_every_applicable_target(tmp_path: Path) -> None:
    code, out, err = _run("all", "--out", str(tmp_path), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert _tree(tmp_path) == sorted(seed_artifacts("infiniband"))
    assert {r["target"] for r in rows} == {
        "infiniband",
        "nccl",
        "kubernetes",
        "slurm",
        "k8s-topology",
        "report",
    }
    for r in rows:
        path = Path(r["path"])
        assert (
            path.read_text(encoding="utf-8")
            == seed_artifacts("infiniband")[path.relative_to(tmp_path).as_posix()]
        )
        assert r["bytes"] == path.stat().st_size


def test_all_roce_includes_qos_and_nvue(tmp_path: Path) -> None:
    code, out, err = _run("all", *ROCE, "--out", str(tmp_path), "--format", "json")
    assert code == 0, err
    targets = {r["target"] for r in json.loads(out)}
    assert targets == {
        "roce-qos", "cumulus", "frr", "sonic", "hosts", "nccl", "kubernetes", "slurm",
        "k8s-topology", "report"
    }  # fmt: skip
    files = _tree(tmp_path)
    assert files == sorted(seed_artifacts("roce"))
    assert sum(f.startswith("cumulus/") for f in files) == 12
    assert not any(f.startswith("infiniband/") for f in files)


def test_table_output_lists_the_files(tmp_path: Path) -> None:
    code, out, _ = _run("nccl", "--out", str(tmp_path))
    assert code == 0
    assert f"1 file(s) written to {tmp_path}" in out
    assert "nccl/infiniband.env" in out and "nccl" in out


def test_markdown_output(tmp_path: Path) -> None:
    code, out, _ = _run("nccl", *ROCE, "--out", str(tmp_path), "--format", "markdown")
    assert code == 0
    assert out.splitlines()[0] == f"Rendered 1 file(s) into `{tmp_path}`:"
    assert "- `nccl/roce.env` (nccl, " in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["roce-qos"],
            "error: render roce-qos: the plan's fabric is infiniband, not RoCEv2 "
            "(use `render infiniband` for subnet-manager settings)",
        ),
        (
            ["cumulus"],
            "error: render cumulus: the plan's fabric is infiniband, not RoCEv2 "
            "(use `render infiniband` for subnet-manager settings)",
        ),
        (
            ["infiniband", *ROCE],
            "error: render infiniband: the plan's fabric is roce; subnet managers, "
            "partitions and .topo are InfiniBand only (use `render roce-qos` / "
            "`render cumulus` for RoCEv2)",
        ),
        (
            ["cumulus", "--fabric", "roce", "--switch", "generic-64x400"],
            "error: render cumulus: the compute switches (Generic 64 × 400G switch) do not run "
            "Cumulus Linux (plan with a Cumulus switch such as `--switch sn5600`, or use "
            "`render roce-qos` for vendor-neutral intent)",
        ),
        (
            ["roce-qos", "--fabric", "ethernet", "--switch", "sn5600"],
            "error: render roce-qos: the plan's fabric is ethernet, not RoCEv2 (lossless QoS only "
            "applies to `--fabric roce`)",
        ),
    ],
)
def test_target_that_does_not_fit_is_refused_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out_dir = tmp_path / "out"
    code, out, err = _run(*args, "--out", str(out_dir))
    assert code == 2
    assert err.strip() == message
    assert out == ""
    assert not out_dir.exists()


def test_bad_spec_is_exit_2(tmp_path: Path) -> None:
    code, _, err = _run("nccl", "--gpus", "100", "--out", str(tmp_path))
    assert code == 2 and err.startswith("error: gpus: 100 is not a multiple of gpus_per_node 8")


def test_unknown_target_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = _run("juniper", "--out", str(tmp_path))
    assert code == 2 and "TARGET: 'juniper' is not one of" in err


def test_rerender_replaces_files_atomically(tmp_path: Path) -> None:
    (tmp_path / "nccl").mkdir()
    target = tmp_path / "nccl" / "infiniband.env"
    target.write_text("stale\n", encoding="utf-8")
    code, _, _ = _run("nccl", "--out", str(tmp_path))
    assert code == 0
    assert target.read_text(encoding="utf-8") == seed_artifacts("infiniband")["nccl/infiniband.env"]
    assert _tree(tmp_path) == ["nccl/infiniband.env"]  # no temporary files left behind


def test_guids_file(tmp_path: Path) -> None:
    guids = tmp_path / "guids.csv"
    guids.write_text(
        "name,guid\nsu1-r1-leaf,0x0002c90300a1b2c3\nsu1-node01 mlx5_0,b8cef60300123456\n",
        encoding="utf-8",
    )
    code, _, err = _run("infiniband", "--guids", str(guids), "--out", str(tmp_path / "o"))
    assert code == 0, err
    text = (tmp_path / "o" / "infiniband" / "ib-node-name-map").read_text(encoding="utf-8")
    assert '\n0x0002c90300a1b2c3 "su1-r1-leaf"\n' in text
    assert '\n0xb8cef60300123456 "su1-node01 mlx5_0"\n' in text
    assert "GUIDs known: 2 of 142." in text


def test_bad_guids_file_names_file_and_line(tmp_path: Path) -> None:
    guids = tmp_path / "guids.csv"
    guids.write_text("su1-r1-leaf,0x1\nsu1-r9-leaf,0x2\n", encoding="utf-8")
    code, _, err = _run("infiniband", "--guids", str(guids), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.strip() == (
        f"error: {guids}:2: 'su1-r9-leaf' is not in the plan (switch names like 'su1-r1-leaf', "
        "HCAs like 'su1-node01 mlx5_0')"
    )
    assert not (tmp_path / "o").exists()
    code, _, err = _run(
        "infiniband", "--guids", str(tmp_path / "missing.csv"), "--out", str(tmp_path)
    )
    assert code == 2 and err.startswith(f"error: {tmp_path / 'missing.csv'}: cannot read:")


def test_netdevs_file(tmp_path: Path) -> None:
    netdevs = tmp_path / "netdevs.csv"
    netdevs.write_text(
        "nic,netdev\n" + "".join(f"mlx5_{i},ibp{i}s0\n" for i in range(8)), encoding="utf-8"
    )
    code, _, err = _run("kubernetes", "--netdevs", str(netdevs), "--out", str(tmp_path / "o"))
    assert code == 0, err
    docs = list(
        yaml.safe_load_all(
            (tmp_path / "o" / "kubernetes" / "sriov-node-policies.yaml").read_text(encoding="utf-8")
        )
    )
    assert [d["spec"]["nicSelector"]["pfNames"] for d in docs if d] == [
        [f"ibp{i}s0#0-7"] for i in range(8)
    ]
    netdevs.write_text("mlx5_9,eth9\n", encoding="utf-8")
    code, _, err = _run("kubernetes", "--netdevs", str(netdevs), "--out", str(tmp_path / "p"))
    assert code == 2 and err.startswith(
        f"error: {netdevs}:1: 'mlx5_9' is not a rail NIC of the plan"
    )


def test_help_teaches() -> None:
    result = CliRunner().invoke(main, ["render", "--help"])
    assert result.exit_code == 0
    for target in TARGETS:
        assert target in result.output
    assert "fabric-stack render all --out-dir build/" in result.output
    top = CliRunner().invoke(main, ["--help"])
    assert "render" in top.output


def _help_list(output: str, heading: str) -> list[tuple[str, str]]:
    """(name, applies-to text) of each entry listed under ``heading`` in a --help text."""
    lines = output.splitlines()
    start = lines.index(f"  {heading}") + 1
    out: list[tuple[str, str]] = []
    for line in lines[start:]:
        if not line.strip():
            break
        if re.match(r"^    [a-z0-9-]+ ", line):
            out.append((line.split()[0], ""))
        elif "applies to: " in line:
            out[-1] = (out[-1][0], line.split("applies to: ", 1)[1])
    return out


def test_help_lists_the_registry_and_the_real_pdf_path() -> None:
    wide = {"terminal_width": 200, "max_content_width": 200}  # no line wrapped
    result = CliRunner().invoke(main, ["render", "--help"], **wide)
    assert result.exit_code == 0
    listed = _help_list(result.output, "Targets:")
    assert listed == [
        *((name, t.applies.describe()) for name, t in TARGETS.items()),
        ("all", ""),
    ]
    assert "make pdf" not in result.output  # no such Makefile target: --pdf prints it
    assert "--pdf" in result.output and "scripts/pdf-deps.sh" in result.output
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text(encoding="utf-8")
    assert not re.search(r"^pdf:", makefile, re.M)


def test_all_names_each_skipped_target_on_stderr(tmp_path: Path) -> None:
    code, out, err = _run("all", "--out", str(tmp_path / "ib"), "--format", "json")
    assert code == 0, err
    assert {r["target"] for r in json.loads(out)} == {
        "infiniband",
        "nccl",
        "kubernetes",
        "slurm",
        "k8s-topology",
        "report",
    }
    routed = "an InfiniBand fabric has no IP underlay"
    assert err.splitlines() == [
        "render all: skipped roce-qos: the plan's fabric is infiniband, not RoCEv2",
        "render all: skipped cumulus: the plan's fabric is infiniband, not RoCEv2",
        f"render all: skipped frr: {routed}",
        f"render all: skipped sonic: {routed}",
        f"render all: skipped hosts: {routed}",
    ]
    code, out, err = _run(
        "all", "--fabric", "roce", "--switch", "generic-64x400", "--out", str(tmp_path / "g")
    )
    assert code == 0, err
    assert err.splitlines() == [
        # no --netdevs and no profile netdevs: the host files' placeholder names, loudly
        "render hosts: WARNING: rail netdev names are the plan's placeholders (rail1, rail2 …): "
        "they match no interface unless the servers rename theirs so; give the real names "
        "(`ip -br link`) with `render --netdevs nic,netdev CSV`",
        "render all: skipped cumulus: the compute switches (Generic 64 × 400G switch) do not "
        "run Cumulus Linux",
        "render all: skipped sonic: no SONiC lane table for Generic 64 × 400G switch",
        "render all: skipped infiniband: the plan's fabric is roce; subnet managers, "
        "partitions and .topo are InfiniBand only",
    ]
    code, _, err = _run("nccl", "--out", str(tmp_path / "n"))
    assert code == 0 and err == ""  # a single target: nothing skipped


APPLICABILITY_SPECS = {
    "infiniband": {},
    "roce": {"fabric": "roce", "switch": "sn5600"},
    "ethernet": {"fabric": "ethernet", "switch": "sn5600"},
    "roce-generic": {"fabric": "roce", "switch": "generic-64x400"},
    "ethernet-generic": {"fabric": "ethernet", "switch": "generic-64x400"},
    "ib-generic": {"switch": "generic-64x400"},
}


@pytest.mark.parametrize("spec", list(APPLICABILITY_SPECS))
def test_applicability_is_exactly_what_each_renderer_accepts(spec: str) -> None:
    ctx = context(APPLICABILITY_SPECS[spec])
    for name, target in TARGETS.items():
        reason = skip_reason(name, ctx)
        if reason is None:
            assert target.render(ctx), name
            continue
        with pytest.raises(TargetMismatchError) as exc:
            target.render(ctx)
        assert reason in str(exc.value), (name, reason, str(exc.value))
    assert [n for n, _ in skipped_targets(ctx)] == [n for n in TARGETS if not applies(n, ctx)]


def test_every_target_states_its_applicability_and_files() -> None:
    field = next(f for f in dataclasses.fields(Target) if f.name == "applies")
    assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    for name, target in TARGETS.items():
        assert isinstance(target.applies, Applicability), name
    # Every file a target renders matches one of the patterns it declares (and each is used).
    used: dict[str, set[str]] = {name: set() for name in TARGETS}
    # A leaf with uplinks faster than its downlinks is the one plan `render sonic` writes
    # hwsku.json for (no seed variant has one).
    mixed = context({"fabric": "roce", "switch": "sn5600", "uplink_gbps": 800})
    extra = [a.path for a in TARGETS["sonic"].render(mixed)]
    for variant in [*VARIANTS, "mixed"]:
        for path in seed_artifacts(variant) if variant != "mixed" else extra:
            target = path.split("/", 1)[0]
            hits = [w for w in TARGETS[target].writes if _pattern(w).fullmatch(path)]
            assert hits, f"{path} matches no pattern of {target}: {TARGETS[target].writes}"
            used[target].update(hits)
    for name, target in TARGETS.items():
        assert used[name] == set(target.writes), name


def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"<[a-z]+>", "[^/]+", re.escape(glob).replace(r"\<", "<")))


def test_targets_table_lists_the_registry() -> None:
    lines = targets_table().splitlines()
    assert lines[0] == "| target | what | files | applies to |"
    rows = [line.split(" | ") for line in lines[2:]]
    assert [r[0].removeprefix("| ") for r in rows] == [f"`{n}`" for n in TARGETS]
    assert [r[-1].removesuffix(" |") for r in rows] == [
        t.applies.describe() for t in TARGETS.values()
    ]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_yaml_artifact_round_trips(variant: str) -> None:
    arts = [p for p in seed_artifacts(variant) if p.endswith(".yaml")]
    assert arts
    for path in arts:
        loaded = [d for d in yaml.safe_load_all(seed_artifacts(variant)[path]) if d is not None]
        assert loaded, path
        again = [
            d
            for d in yaml.safe_load_all(yaml.safe_dump_all(loaded, sort_keys=False))
            if d is not None
        ]
        assert again == loaded, path


def test_all_renders_what_applies() -> None:
    eth = context({"fabric": "ethernet", "switch": "sn5600"})
    assert {a.target for a in render_artifacts("all", eth)} == {
        "frr",
        "sonic",
        "hosts",
        "nccl",
        "kubernetes",
        "slurm",
        "k8s-topology",
        "report",
    }
    generic = context({"fabric": "roce", "switch": "generic-64x400"})
    assert not applies("cumulus", generic) and applies("roce-qos", generic)
    assert not applies("sonic", generic)  # no SONiC lane table for a generic switch
    ib = seed_context("infiniband")
    assert [t for t in TARGETS if applies(t, ib)] == [
        "infiniband",
        "nccl",
        "kubernetes",
        "slurm",
        "k8s-topology",
        "report",
    ]


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"fabric": "roce", "switch": "sn5600"},
        {"fabric": "ethernet", "switch": "sn5600", "planes": 2},
        {"infiniband": {"sm_location": "switch", "subnet_managers": 3}, "name": "lab-b"},
    ],
)
def test_files_lists_exactly_what_render_writes(spec: dict[str, object]) -> None:
    ctx = context(spec)
    for name, target in TARGETS.items():
        if applies(name, ctx):
            assert target.files(ctx) == [a.path for a in target.render(ctx)], name


def test_unwritable_out_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = _run("nccl", "--out", str(blocker / "sub"))
    assert code == 2
    assert err.startswith("error: ") and "cannot write:" in err
    assert "Traceback" not in err


FAILING_SPECS = {
    "spine-mtu-1500": "fabric: roce\nswitch: sn5600\nroce:\n  overrides:\n    spine: {mtu: 1500}\n",
    "pfc-on-3-4": (
        "fabric: roce\nswitch: sn5600\nroce:\n  pfc_priorities: [3, 4]\n  lossless_pools: 2\n"
    ),
}


@pytest.mark.parametrize("name", list(FAILING_SPECS))
def test_policy_failing_plan_is_refused_and_writes_nothing(tmp_path: Path, name: str) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(FAILING_SPECS[name], encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = _run("all", "--config", str(cfg), "--out", str(out))
    assert code == 1, err
    assert "mandatory policy check" in err and "nothing written" in err
    assert "roce-lossless-consistency" in err
    assert not out.exists()
    assert stdout == ""


def test_allow_violations_writes_a_banner_into_every_file(tmp_path: Path) -> None:
    from fabric_stack.policy import evaluate

    cfg = tmp_path / "bad.yaml"
    cfg.write_text(FAILING_SPECS["spine-mtu-1500"], encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _run("all", "--config", str(cfg), "--out", str(out), "--allow-violations")
    assert code == 0, err
    ctx = context(yaml.safe_load(FAILING_SPECS["spine-mtu-1500"]))
    blocking = [v for v in evaluate(ctx.intent).violations if v.level == "mandatory"]
    assert blocking
    files = _tree(out)
    assert len(files) == len(render_artifacts("all", ctx))
    for f in files:
        text = (out / f).read_text(encoding="utf-8")
        head = text[: len(text) // 2 + 2000]
        assert "POLICY VIOLATIONS" in head, f
        for v in blocking:
            assert v.message in head or v.message.replace("--", "- -") in head, (f, v.resource)
        if f.endswith(".sh"):
            assert text.startswith("#!"), f  # the interpreter line stays first
        if f.endswith(".yaml"):
            list(yaml.safe_load_all(text))  # still valid YAML
    html = (out / "report/design-report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>\n<!--") and "<main><div" in html


def test_banner_styles_and_json() -> None:
    from fabric_stack.artifacts._base import Artifact
    from fabric_stack.artifacts.banner import BannerError, banner_style, with_banner
    from fabric_stack.policy import Violation

    v = Violation(
        rule="r",
        level="mandatory",
        kind="Switch",
        resource="s1",
        measured="m",
        allowed="a",
        message="s1: broken",
        fix="f",
    )
    assert banner_style("frr/spine-01.conf") == "bang"
    assert banner_style("infiniband/opensm-ufm-1.conf") == "hash"
    out = with_banner(Artifact("t", "x/a.json", '{"k": 1}'), [v])
    loaded = json.loads(out.content)
    assert list(loaded) == ["_violations", "k"] and loaded["k"] == 1
    assert loaded["_violations"][0].startswith("POLICY VIOLATIONS")
    assert loaded["_violations"][1:] == ["- r: s1: broken"]
    with pytest.raises(BannerError):
        with_banner(Artifact("t", "x/a.json", "[1]"), [v])
    with pytest.raises(BannerError):
        banner_style("x/file.bin")
    md = with_banner(Artifact("t", "k/README.md", "# Title\n"), [v]).content
    assert md.startswith("> POLICY VIOLATIONS") and "\n\n# Title\n" in md


def test_passing_plan_has_no_banner(tmp_path: Path) -> None:
    code, _, err = _run("nccl", "--out", str(tmp_path))
    assert code == 0, err
    assert "POLICY VIOLATIONS" not in (tmp_path / "nccl/infiniband.env").read_text()


def test_pdf_without_report_target_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = _run("nccl", "--pdf", "--out", str(out))
    assert code == 2 and "--pdf" in err and "writes no report" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [
        ("--doc-date", "30/11/2026", "--doc-date"),
        ("--software", "nccl", "NAME=VERSION"),
        ("--software", "frobnicator=1.0", "unknown component"),
    ],
)
def test_bad_document_inputs_are_exit_2(tmp_path: Path, flag: str, value: str, needle: str) -> None:
    out = tmp_path / "out"
    code, _, err = _run("report", flag, value, "--out", str(out))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
