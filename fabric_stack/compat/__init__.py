"""One small module per third-party library whose private API fabric-stack relies on.

Each module names what it relies on and why, and ``tests/test_compat.py`` checks each
assumption against the installed library, so an upgrade that changes one fails a test
by name instead of corrupting records or Pulumi URNs quietly:

* :mod:`.pydantic_internals` — the instance slots behind fast trusted construction;
* :mod:`.pulumi_dynamic` — the dynamic provider's serialization and resource type token;
* :mod:`.pulumi_policy_proxy` — the policy SDK's unknown-checking proxies.

Only the package root (``compat/__init__``) is pure; the Pulumi modules import the SDKs
and are used by the adapters only (``components/``, ``policies/``).
"""
