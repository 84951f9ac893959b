"""The operator's names: templates and a names file rename every device everywhere.

A 1,024-GPU plan with templates for every role (and a names file on top) must not
show a single default plan name in any export, artifact or Pulumi record; bad
templates and bad names-file rows are one line naming the field or file:line, exit 2.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.cli import main
from fabric_stack.intent.wire import record_text

DEFAULT = re.compile(
    r"(?<![\w-])(?:p\d-)?(?:su\d+-node\d+|su\d+-r\d+-leaf|(?:pod\d+-)?spine-\d+|core-g\d+-\d+|"
    r"su\d+-(?:storage|inband|oob)-[a-h]\d+|su\d+-rack\d+)(?![\w-])"
)
"""Any default plan device or server-rack name."""

SPEC = """\
gpus: 1024
naming:
  server: "dgx{index:04d}"
  leaf: "ib-leaf-su{su}-r{rail}"
  spine: "ib-spine-{index:02d}"
  access: "{network}-su{su}-{side}{index:02d}"
  rack: "r{index:03d}"
names: names.csv
"""

NAMES = """\
planned,actual,rack,u,serial,guid,mac
su1-node07,gpu-a07,row3-r12,5,SN123,0xfc6a1c0300e4a1c0,0c:42:a1:00:00:07
spine-03,core-sw-3,,,,,
su2-r3-leaf,ib-leaf-r3-01,,,,,
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "cluster.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "names.csv").write_text(NAMES, encoding="utf-8")
    return tmp_path / "cluster.yaml"


def _out(args: list[str]) -> str:
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def test_every_export_and_artifact_uses_the_site_names(site: Path, tmp_path: Path) -> None:
    texts = {
        fmt: _out(["cabling", "--config", str(site), "--format", fmt])
        for fmt in ("csv", "json", "topo", "p2p")
    }
    texts["bom"] = _out(["bom", "--config", str(site), "--format", "json"])
    build = tmp_path / "build"
    _out(["render", "all", "--config", str(site), "--out", str(build)])
    for p in sorted(build.rglob("*")):
        if p.is_file():
            texts[str(p.relative_to(build))] = p.read_text(encoding="utf-8", errors="replace")
    assert len(texts) > 8
    for where, text in texts.items():
        # The design report echoes the spec, whose names rows say "planned: su1-node07".
        hit = DEFAULT.search(re.sub(r"planned: \S+", "", text))
        assert hit is None, f"{where}: default name {hit.group(0)!r} left"
    csv = texts["csv"]
    assert "gpu-a07:mlx5_0,node_leaf,compute,gpu-a07,mlx5_0,1,row3-r12,5," in csv
    assert ",dgx0001," in csv and ",ib-leaf-su1-r1," in csv and "core-sw-3" in csv
    assert "ib-leaf-r3-01" in csv and "ib-leaf-su2-r3" not in csv
    assert "storage-su1-a01" in csv and ",r001," in csv


def test_every_pulumi_record_uses_the_site_names(site: Path) -> None:
    from fabric_stack.files.config import spec_from_file

    topo = build_topology(size_fabric(spec_from_file(site)))
    intent = derive_intent(topo)
    records = [
        *(s.props() for s in intent.switches),
        *(c.props() for c in intent.cables),
        *(n.props() for n in intent.nics),
        *(r.props() for r in intent.rails),
        *(v.props() for v in intent.vlans),
    ]
    for rec in records:
        hit = DEFAULT.search(record_text(rec))
        assert hit is None, (hit.group(0), rec.get("name"))
    # The planned names travel beside (Pulumi aliases; drift's "planned:" column).
    assert intent.planned["gpu-a07"] == "su1-node07"
    assert intent.planned["dgx0001"] == "su1-node01"
    # 127 servers: one server position went to the UFM hosts (their names stay planned).
    servers = [d for d in topo.devices if d.role == "server"]
    assert len(servers) == 127
    assert len(intent.planned) == sum(1 for _ in intent.switches) + len(servers)


def test_the_plan_without_names_is_unchanged() -> None:
    spec = validate_spec({})
    assert "naming" not in spec.model_dump() and "names" not in spec.model_dump()
    topo = build_topology(size_fabric(spec))
    assert all(d.planned == "" for d in topo.devices)
    assert derive_intent(topo).planned == {}


@pytest.mark.parametrize(
    ("naming", "message"),
    [
        ({"server": "dgx{rail}"}, "naming.server: unknown field {rail} in 'dgx{rail}'"),
        ({"leaf": "Leaf-{su}-{rail}"}, "naming.leaf: 'Leaf-{su}-{rail}' has characters"),
        ({"spine": "spine_{index}"}, "naming.spine: 'spine_{index}' has characters"),
        ({"server": "dgx{su}"}, "naming.server: 'dgx{su}' gives 'dgx1' to both su1-node01"),
        ({"rack": "rack"}, "naming.rack: 'rack' gives two racks the same name"),
        ({"leaf": "x{index:q}"}, "naming.leaf: 'x{index:q}': Unknown format code 'q'"),
    ],
)
def test_bad_templates_are_one_line_naming_the_field(
    tmp_path: Path, naming: dict[str, str], message: str
) -> None:
    import yaml

    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"naming": naming}), encoding="utf-8")
    r = CliRunner().invoke(main, ["cabling", "--config", str(tmp_path / "c.yaml")])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and message in r.output, r.output


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("su1-node01,gpu_a,,,,,\n", "names.csv:2: actual: 'gpu_a' is not a valid host name"),
        ("su1-node01,GPU-A,,,,,\n", "names.csv:2: actual: 'GPU-A' is not a valid host name"),
        (
            "su1-node01,a,,,,,\nsu1-node02,a,,,,,\n",
            "names.csv:3: actual name 'a' is listed twice (first on line 2)",
        ),
        (
            "su1-node01,a,,,,,\nsu1-node01,b,,,,,\n",
            "names.csv:3: planned name 'su1-node01' is listed twice",
        ),
        ("su9-node01,a,,,,,\n", "names.csv:2: planned name 'su9-node01' is not in the plan"),
        (
            "su1-node01,spine-02,,,,,\n",
            "names.csv:2: su1-node01 cannot take 'spine-02': that is the plan's name of another",
        ),
        ("su1-node01,a,,,,0xZZ,\n", "names.csv:2: guid: '0xZZ' is not a GUID"),
        ("su1-node01,a,,,,,0c:42\n", "names.csv:2: mac: '0c:42' is not a MAC address"),
        ("su1-node01,a,,99,,,\n", "names.csv:2: u: '99' is not a rack unit"),
        ("su1-node01\n", "names.csv:2: 1 fields where the header has 7"),
    ],
)
def test_bad_names_rows_are_refused_with_their_line(
    tmp_path: Path, rows: str, message: str
) -> None:
    (tmp_path / "names.csv").write_text("planned,actual,rack,u,serial,guid,mac\n" + rows)
    r = CliRunner().invoke(main, ["cabling", "--names", str(tmp_path / "names.csv")])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and message in r.output, r.output


def test_names_file_header_errors(tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text("planned,acutal\n")
    r = CliRunner().invoke(main, ["size", "--names", str(tmp_path / "n.csv")])
    assert r.exit_code == 2 and "n.csv:1: unknown column 'acutal'" in r.output


def test_stack_config_names_and_naming(tmp_path: Path) -> None:
    from fabric_stack.files.config import spec_from_stack_config

    (tmp_path / "names.csv").write_text("planned,actual\nspine-01,s1\n")
    spec = spec_from_stack_config(
        {"fabric:names": "names.csv", "fabric:naming": '{"server": "n{index:03d}"}'},
        base=tmp_path,
    )
    topo = build_topology(size_fabric(spec))
    assert {"s1", "n001", "n016"} <= {d.name for d in topo.devices}


def test_a_swap_of_plan_names_is_refused(tmp_path: Path) -> None:
    """A site calling su1-r1-leaf 'su1-r2-leaf' (and back) would make every planned-name
    reference ambiguous (drift's planned column, the rail-alignment rule's leaf names)."""
    names = tmp_path / "swap.csv"
    names.write_text("planned,actual\nsu1-r1-leaf,su1-r2-leaf\nsu1-r2-leaf,su1-r1-leaf\n")
    r = CliRunner().invoke(main, ["check", "--names", str(names)])
    assert r.exit_code == 2
    assert "swap.csv:2: su1-r1-leaf cannot take 'su1-r2-leaf'" in r.output


def test_roce_artifacts_use_the_site_names(tmp_path: Path) -> None:
    """The RoCE renderers (FRR, hosts, Cumulus, SONiC, QoS, Kubernetes) too."""
    spec = tmp_path / "roce.yaml"
    spec.write_text(
        "gpus: 256\nfabric: roce\nswitch: sn5600\nsu_nodes: 16\nnaming:\n"
        '  server: "gpu{index:03d}"\n  leaf: "tor-su{su}-r{rail}"\n  spine: "spn-{index:02d}"\n'
        '  access: "{network}-su{su}-{side}{index:02d}"\n  rack: "r{index:03d}"\n',
        encoding="utf-8",
    )
    build = tmp_path / "build"
    _out(["render", "all", "--config", str(spec), "--out", str(build)])
    files = [p for p in sorted(build.rglob("*")) if p.is_file()]
    assert len(files) > 20
    for p in files:
        hit = DEFAULT.search(p.read_text(encoding="utf-8", errors="replace"))
        assert hit is None, f"{p.relative_to(build)}: default name {hit.group(0)!r} left"
    assert any("tor-su1-r1" in p.name or "tor-su1-r1" in p.read_text() for p in files)
