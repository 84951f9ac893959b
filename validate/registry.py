"""Every validator family, in the order `make validate` runs them.

A family lives in the module named after it and registers here; the planted-defect
tests (``tests/integration/validate/``) import the same objects.
"""

from __future__ import annotations

from validate.core import Validator
from validate.frr import FRR

VALIDATORS: dict[str, Validator] = {
    "frr": FRR,
}
"""Family name → validator (filled as each family's module lands)."""


def _register() -> None:
    """Fill :data:`VALIDATORS` from the family modules (imported here: they import core only)."""
    from validate import sonic_defaults, sonic_yang

    for v in (sonic_yang.VALIDATOR, sonic_defaults.VALIDATOR):
        VALIDATORS[v.name] = v


_register()
