"""One small module per third-party library whose private API fabric-stack relies on.

Each module names what it relies on and why, and ``tests/unit/test_compat.py`` checks each
assumption against the installed library, so an upgrade that changes one fails a test
by name instead of corrupting records or Pulumi URNs quietly:

* :mod:`.pydantic_internals` — the instance slots behind fast trusted construction;
* :mod:`.slot_records` — CPython's ``__class__`` assignment behind fast construction of
  frozen slotted dataclasses (``tests/unit/test_compat_slot_records.py``);
* :mod:`fabric_stack.adapters.pulumi.sdk_dynamic` — the dynamic provider's serialization
  and resource type token;
* :mod:`fabric_stack.adapters.pulumi.sdk_policy` — the policy SDK's unknown-checking proxies.

This package is layer 0 (pure); the two Pulumi modules live with the Pulumi adapter, since
they import the SDKs.
"""
