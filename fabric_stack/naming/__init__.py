"""Every name rule: planned device and port names, the site's naming templates, NodeDescs.

Layer 0 (foundation): pure string rules; imports only ``errors``."""
