"""The routed underlay of RoCE/Ethernet fabrics: loopbacks, ASNs, link and rail addresses.

Layer 2 (a pure stage over the topology)."""
