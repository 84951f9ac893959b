"""Real OpenSM in the twin loads the rendered config and brings up every plane (issue 17).

For one plane and for two, the plan's fabric (the fabric-manager hosts and their
leaf cables included) runs in ibsim; every rendered ``opensm-<sm>.conf`` is started
on its manager's HCA with only its paths adapted (``ibnet.adapt_opensm_conf``): the
master of each plane must log SUBNET UP, its standby must enter STANDBY. Two planes
are two disjoint subnets in one ibsim, so plane 2's ports come up only if plane 2's
own SM (bound with ``guid`` to the plane-2 port) does its job.
Needs root (network namespace) and ibsim/opensm; skipped without root.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.twin import ops, ops_ib
from fabric_stack.twin.runtime import (
    add_namespaces,
    claim_runtime_dir,
    existing_namespaces,
    save_state,
)
from fabric_stack.twin.wiring import plan_wiring

pytestmark = [
    pytest.mark.twin,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
]


@pytest.fixture(autouse=True, scope="module")
def _tools() -> None:
    missing = [t for t in ("ibsim", "opensm") if shutil.which(t) is None]
    if missing and not Path("/usr/sbin/opensm").exists():
        pytest.fail(f"missing {', '.join(missing)}: run `make twin-deps`")


# runtime.spawn starts daemons and records their PIDs; ops.down stops them by PID (the
# CLI tests run that in a subprocess). In-process, the Popen objects are collected while
# their daemons still run, which Python reports as a ResourceWarning: expected here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("planes", [1, 2])
def test_rendered_opensm_reaches_subnet_up_on_each_plane(tmp_path: Path, planes: int) -> None:
    spec = validate_spec({"gpus": 64, "planes": planes})
    topo = build_topology(size_fabric(spec))
    wiring = plan_wiring(topo, all_planes=True)
    d = tmp_path / "twin"
    state = ops._initial_state(spec, topo, wiring, d, None)
    ctx = RenderContext.from_topology(topo, guids=state.guids)
    sms = ops_ib.plan_sms(ctx, dict(state.guids), planes=range(1, planes + 1))
    state = state.model_copy(update={"sm": {"instances": sms}})
    said: list[str] = []
    try:
        # As `up` does: the runtime dir carries this twin's token, or `down` (rightly)
        # leaves the namespace alone — which leaked one `fst-*-ib` per test run.
        claim_runtime_dir(state)
        add_namespaces(state.namespaces)
        save_state(d, state)
        ops_ib.render_files(ctx, d, state)
        state = ops_ib.start_fabric(d, state, wiring, topo, said.append)
        save_state(d, state)
        _check(d, sms, said, planes)
    finally:
        ops.down(d, said.append)
    assert not set(state.namespaces) & set(existing_namespaces()), said


def _check(d: Path, sms: list[dict[str, object]], said: list[str], planes: int) -> None:
    assert [(s["plane"], s["master"]) for s in sms] == [
        (p, m) for p in range(1, planes + 1) for m in (True, False)
    ]
    logs = d / "logs"
    for sm in sms:
        name, guid = str(sm["name"]), str(sm["guid"])
        conf = (d / "ib" / f"opensm-{name}.conf").read_text()
        rendered = (d / "ib" / "etc" / f"opensm-{name}.conf").read_text()
        # The rendered config, bound to this SM's own plane port (ibsim: port = node + 1).
        assert re.search(rf"^guid {re.escape(guid)}$", rendered, re.M)
        assert f"guid 0x{int(guid, 16) + 1:016x}" in conf
        assert f"sm_priority {sm['priority']}" in conf
        if sm["master"]:
            text = (logs / f"opensm-{name}.log").read_text(errors="replace")
            assert "SUBNET UP" in text, name
        else:
            out = (logs / f"opensm-{name}.out").read_text(errors="replace")
            assert "Entering STANDBY state" in out, name
    assert len({s["guid"] for s in sms}) == len(sms)
    masters = [line for line in said if "(master," in line]
    assert len(masters) == planes and all("SUBNET UP" in line for line in masters)
