"""Source adapters: each a class whose one :meth:`load` does all the I/O, returning a Snapshot."""

from __future__ import annotations

from ._common import Progress, Reader, load_mac_table
from .eos import EosReader
from .ibnetdiscover import IbnetdiscoverReader, load_node_name_map
from .inventory import InventoryReader, RecordStore
from .lldp import LldpReader
from .netbox import NetboxCsvReader, NetboxJsonReader

__all__ = [
    "EosReader",
    "IbnetdiscoverReader",
    "InventoryReader",
    "LldpReader",
    "NetboxCsvReader",
    "NetboxJsonReader",
    "Progress",
    "Reader",
    "RecordStore",
    "load_mac_table",
    "load_node_name_map",
]
