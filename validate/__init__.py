"""`make validate`: every rendered file judged by the real software it targets.

The matrix (:mod:`validate.matrix`) renders a set of scenarios with ``render all`` into
``.state/validate/<scenario>/``; each family in :data:`validate.registry.VALIDATORS`
(FRR, SONiC YANG, SONiC defaults, Kubernetes, netplan, host scripts, OpenSM) picks its
files there and runs its tool once over them. Every rejection is one line:
``scenario  file  tool: the tool's own message``. Exit 1 on any rejection, 2 when a tool
is missing (the line names the script that installs it).
"""
