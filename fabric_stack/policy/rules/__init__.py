"""The policy rules, one module per rule, named after its id (``port-budget`` → ``port_budget``).

Each module defines ``RULE_ID`` (the id, written once: ``RULE.id`` and every violation's
``rule`` use it) and ``RULE``, whose ``applies`` says where it runs (required, no default);
:mod:`fabric_stack.policy.registry` lists them in report order.
"""
