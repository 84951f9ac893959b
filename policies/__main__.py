"""The fabric-stack CrossGuard pack: ``pulumi preview --policy-pack policies``.

``PolicyPack(...)`` starts the analyzer's gRPC server and blocks, so the
policies live in ``fabric_policies.py`` (importable by the tests) and this file
only hands them over. The language host runs this file with the pack directory
first on ``sys.path``. The server runs the SDK's servicer with each request decoded
once for all policies (:mod:`fabric_stack.adapters.pulumi.sdk_servicer`).
"""

from __future__ import annotations

from fabric_policies import PACK_DESCRIPTION, PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

from fabric_stack.adapters.pulumi import sdk_servicer

sdk_servicer.install()
PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    # Every policy sets its own level (see fabric_stack.policy.RULES); this is the
    # fallback for none of them.
    enforcement_level=EnforcementLevel.ADVISORY,
    description=PACK_DESCRIPTION,
    display_name="fabric-stack fabric policies",
)
