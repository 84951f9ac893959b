"""What can be bought: switch models (one record each), server profiles, NVLink figures.

Layer 0 (foundation): plain data with its published sources; imports only ``errors``."""
