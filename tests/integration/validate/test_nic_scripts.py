"""The RoCE NIC QoS scripts (#46): ``sh -n`` and shellcheck accept the rendered ones and
reject a planted defect with their own message; host-scripts never runs them (their tools
need a ConnectX)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.validate.conftest import judge, rendered, require
from validate.hostns import HostScriptValidator
from validate.nicqos import NicScriptValidator

pytestmark = pytest.mark.validate

NIC = NicScriptValidator()


def test_rendered_nic_scripts_pass_and_a_planted_defect_is_named(tmp_path: Path) -> None:
    require(NIC)
    root = rendered(tmp_path, "roce-128")
    files = NIC.select(root)
    assert len(files) == 16 and all(f.name.endswith(".roce-qos.sh") for f in files)
    assert not set(files) & set(HostScriptValidator().select(root))
    assert judge(NIC, root) == []
    rel = "hosts/su1-node03.roce-qos.sh"
    path = root / rel
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("set -eu\n", "set -eu\necho 1 > /sys/class/net/$1/x\n"))
    [problem] = judge(NIC, root, rel)
    assert problem.file == rel and "SC2086" in problem.message  # unquoted expansion
    path.write_text(text.replace("set -eu\n", "set -eu\nif true; then\n"))
    problems = judge(NIC, root, rel)
    assert problems and problems[0].file == rel
