"""Stage 2, sizing: ``size_fabric`` turns a spec into a :class:`~.model.SizingPlan`.

``size`` holds the rules (leaf/spine/core counts, SUs, pods, even spreading), ``model`` the
result records, ``managers`` the fabric managers' server positions. Layer 2."""
