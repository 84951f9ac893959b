"""The fabric-stack CrossGuard pack: ``pulumi preview --policy-pack policies``.

``PolicyPack(...)`` starts the analyzer's gRPC server and blocks, so the
policies live in ``fabric_policies.py`` (importable by the tests) and this file
only hands them over. The language host runs this file with the pack directory
first on ``sys.path``.
"""

from __future__ import annotations

from fabric_policies import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    # Every policy sets its own level (see fabric_stack.policy.RULES); this is the
    # fallback for none of them.
    enforcement_level=EnforcementLevel.ADVISORY,
    description=(
        "Blocks unsafe GPU-fabric designs: oversubscription, GPUDirect PCIe locality, "
        "network separation, rail alignment, port budgets, link speeds, RoCE lossless "
        "settings, InfiniBand subnet-manager redundancy."
    ),
    display_name="fabric-stack fabric policies",
)
