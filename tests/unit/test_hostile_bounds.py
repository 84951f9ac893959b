"""Misbehaving records and files, round 2 (issue #49): every parse bounded, every record checked.

Each case runs the command in-process under :mod:`tests.contract` (exit 0/1/2, one line on
2, no traceback, nothing written, under the time and 1 GiB tracemalloc caps) and asserts it
refused the input with the line that names what was wrong: a hostlist of a billion names,
a host file of one enormous line, a server profile with 10**39 ports, a stack file whose
``config`` is not a mapping, NaN and infinite float flags, a libpq keyword string with a
password, a NetBox page of millions of tiny objects under the real 64 MiB cap.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery import slurm_topology
from fabric_stack.cli.params import one_line
from fabric_stack.text.hostlist import expand
from fabric_stack.text.redact import mask_url, mask_urls
from tests.contract import Run, run_checked
from tests.fault_servers import _Quiet, serve


def _refused(args: list[str], root: Path, said: str) -> Run:
    run = run_checked(args, root)
    assert run.code == 2, (run.code, run.stdout[-300:], run.stderr)
    assert said in run.stderr, run.stderr
    return run


# -- hostlists and line-based readers ---------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "said"),
    [
        ("n[0-999999999]", "expands to more than 1,048,576 names"),
        ("n[" + "9" * 30 + "]", "a number longer than 18 digits"),
    ],
)
def test_a_hostlist_bomb_is_refused_before_expanding(
    nodes: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "topology.conf").write_text(f"SwitchName=s1 Nodes={nodes}\n")
    start = time.monotonic()
    _refused(["drift", "--slurm-topology", "topology.conf"], tmp_path, said)
    assert time.monotonic() - start < 30  # a hang detector (tracemalloc slows the run)


def test_the_names_of_a_whole_file_share_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # A small budget, so the test is fast; the reader passes each line what is left of it.
    monkeypatch.setattr(slurm_topology, "MAX_NAMES", 1000)
    lines = [f"SwitchName=s{i} Nodes=n{i}x[1-501]" for i in range(2)]
    (tmp_path / "topology.conf").write_text("\n".join(lines) + "\n")
    run = _refused(["drift", "--slurm-topology", "topology.conf"], tmp_path, "topology.conf:2:")
    assert "more than" in run.stderr


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=4),
    st.integers(1, 5000),
)
def test_expand_never_makes_more_names_than_its_limit(
    spans: list[tuple[int, int]], limit: int
) -> None:
    body = ",".join(f"{min(a, b)}-{max(a, b)}" for a, b in spans)
    want = sum(abs(a - b) + 1 for a, b in spans)
    try:
        names = expand(f"n[{body}]", limit)
    except ValueError as exc:
        assert want > limit and "more than" in str(exc)
    else:
        assert len(names) == want <= limit


def test_a_host_file_of_one_enormous_line_is_one_line_naming_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hosts.txt").write_text("a" * 2_000_000 + "\n")
    start = time.monotonic()
    run = _refused(
        ["estimate", "--job-hosts", "hosts.txt"], tmp_path, "hosts.txt:1: a line of 2,000,000"
    )
    assert time.monotonic() - start < 30 and len(run.stderr) < 600


def test_masking_is_linear_in_its_input() -> None:
    for text in ("a" * 400_000, "1" * 400_000 + "://", "password='" * 40_000, "a." * 200_000):
        start = time.monotonic()
        one_line(text)
        assert time.monotonic() - start < 1.0, text[:20]


# -- secrets in every form a user types them -------------------------------------------


@pytest.mark.parametrize(
    ("given", "masked"),
    [
        ("host=db user=fab password=s3cret", "host=db user=fab password=***"),
        ("host=db password = 's3 \\' cret' dbname=x", "host=db password = *** dbname=x"),
        ("dbname=x PASSWORD=s3cret sslpassword=s3cret", "dbname=x PASSWORD=*** sslpassword=***"),
    ],
)
def test_a_libpq_keyword_string_is_masked(given: str, masked: str) -> None:
    assert mask_url(given) == masked
    assert "s3" not in mask_urls(f"inventory {given!r}: refused")


def test_an_inventory_given_as_a_keyword_string_never_prints_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (["inventory"], ["inventory", "export", "--out", "o.json"]):
        run = _refused(
            [*args, "--inventory", "host=db user=fab password=s3cret"], tmp_path, "password=***"
        )
        assert "s3cret" not in run.stderr + run.stdout


# -- counts in a profile or spec, stack files, float flags -----------------------------

PROFILE = {
    "name": "x",
    "gpus": 8,
    "rdma_nics": 8,
    "pcie_switches": [{"name": "p0", "numa": 0, "gpus": list(range(8)), "nics": list(range(8))}],
}


@pytest.mark.parametrize("value", [10**39, 2**63])
@pytest.mark.parametrize(
    "field",
    ["storage_ports", "inband_ports", "oob_ports", "gpus", "rdma_nics", "storage_gbps",
     "nic_max_gbps", "rack_units"],
)  # fmt: skip
def test_a_profile_count_without_a_real_bound_is_refused(
    field: str, value: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = {"gpus": 64, "node_profile": {**PROFILE, field: value}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(doc))
    for command in (["size"], ["cabling"]):
        _refused([*command, "--config", "spec.yaml"], tmp_path, f"node_profile.{field}: ")


@pytest.mark.parametrize("config", [["fabric:gpus", 64], "fabric:gpus=64", 7])
def test_a_stack_file_whose_config_is_not_a_mapping_is_one_line(
    config: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    # `--stack NAME` reads the backend's config (#48), which is a mapping by construction; the
    # stack file itself is read through `--config`.
    _refused(
        ["size", "--config", "Pulumi.dev.yaml"],
        tmp_path,
        "$.config: expected a mapping of 'fabric:KEY: value' settings",
    )


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "NaN"])
@pytest.mark.parametrize(
    "args",
    [["estimate", "--nvlink-gbs"], ["whatif", "--n-minus-1", "switch", "--max-seconds"]],
)
def test_float_flags_refuse_nan_and_infinity(
    args: list[str], value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _refused([*args, value], tmp_path, "is not a finite number")


@pytest.mark.parametrize(
    ("key", "value"),
    [("rack_power_kw", ".inf"), ("server_power_kw", ".nan"), ("rack_power_kw", "1e300")],
)
def test_spec_floats_refuse_nan_and_infinity(
    key: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(f"gpus: 64\nlayout:\n  {key}: {value}\n")
    _refused(["size", "--config", "spec.yaml"], tmp_path, f"layout.{key}")


# -- a NetBox page of tiny objects under the real cap ----------------------------------


class _TinyObjects(_Quiet):
    def do_GET(self) -> None:
        # 60 MiB of `{},`: 21 million objects, several GB once parsed.
        self._send(200, b'{"count":1,"next":null,"results":[' + b"{}," * (20 << 20) + b"{}]}")


@pytest.mark.timeout(60)
def test_a_page_of_millions_of_tiny_objects_is_refused_unparsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NETBOX_TOKEN", "nbt_key.SECRET")
    monkeypatch.setenv("FABRIC_STACK_NETBOX_DEADLINE", "30")
    with serve(_TinyObjects) as base:
        run = _refused(
            ["inventory", "--kind", "cable", "--netbox", base], tmp_path, "values (at most"
        )
    assert run.peak_bytes < 512 << 20, f"{run.peak_bytes:,} bytes"
