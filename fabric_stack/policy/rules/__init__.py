"""The policy rules, one module per rule, named after its id (``port-budget`` → ``port_budget``).

Each module defines ``RULE``; :mod:`fabric_stack.policy.registry` lists them in report order.
"""
