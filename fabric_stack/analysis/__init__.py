"""Questions about a built fabric: what-if failures, flows, the collective estimate, guidance.

Layer 2 (pure, over a topology or a sizing plan)."""
