"""Every validator family, in the order `make validate` runs them.

A family lives in the module named after it and registers here; the planted-defect
tests (``tests/integration/validate/``) import the same objects.
"""

from __future__ import annotations

from validate.core import Validator
from validate.kube import KUBERNETES

VALIDATORS: dict[str, Validator] = {KUBERNETES.name: KUBERNETES}
"""Family name → validator (filled as each family's module lands)."""
