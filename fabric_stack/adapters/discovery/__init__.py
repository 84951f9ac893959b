"""Source adapters: each a class whose one :meth:`load` does all the I/O, returning a Snapshot."""

from __future__ import annotations

from fabric_stack.adapters.discovery._common import Progress, Reader, load_mac_table
from fabric_stack.adapters.discovery.eos import EosReader
from fabric_stack.adapters.discovery.ibnetdiscover import IbnetdiscoverReader, load_node_name_map
from fabric_stack.adapters.discovery.inventory import InventoryReader, RecordStore
from fabric_stack.adapters.discovery.lldp import LldpReader
from fabric_stack.adapters.discovery.netbox import NetboxCsvReader, NetboxJsonReader

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
