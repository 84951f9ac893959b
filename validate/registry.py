"""Every validator family, in the order `make validate` runs them.

A family lives in the module named after it and registers here; the planted-defect
tests (``tests/integration/validate/``) import the same objects.
"""

from __future__ import annotations

from validate import sonic_defaults, sonic_yang
from validate.core import Validator
from validate.frr import FRR
from validate.hostns import HostScriptValidator
from validate.kube import KUBERNETES
from validate.netplan import NetplanValidator
from validate.nicqos import NicScriptValidator
from validate.opensm import OpenSMValidator

VALIDATORS: dict[str, Validator] = {
    "frr": FRR,
    sonic_yang.VALIDATOR.name: sonic_yang.VALIDATOR,
    sonic_defaults.VALIDATOR.name: sonic_defaults.VALIDATOR,
    "netplan": NetplanValidator(),
    "host-scripts": HostScriptValidator(),
    "nic-scripts": NicScriptValidator(),
    "opensm": OpenSMValidator(),
    KUBERNETES.name: KUBERNETES,
}
"""Family name → validator."""
