"""Stage 1, the spec: :class:`~fabric_stack.spec.model.FabricSpec` and its sections, validated.

``model`` holds the spec and ``validate_spec``; ``networks``, ``sections`` (RoCE QoS, InfiniBand
control) and ``underlay`` hold its sections. Layer 1."""
