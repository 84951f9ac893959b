"""Source adapters: each a class whose one :meth:`load` does all the I/O, returning a Snapshot."""

from __future__ import annotations

from fabric_stack.adapters.discovery._common import Progress, Reader, load_mac_table
from fabric_stack.adapters.discovery.eos import EosReader
from fabric_stack.adapters.discovery.ibdiagnet import IbdiagnetReader
from fabric_stack.adapters.discovery.iblinkinfo import IblinkinfoReader
from fabric_stack.adapters.discovery.ibnetdiscover import IbnetdiscoverReader, load_node_name_map
from fabric_stack.adapters.discovery.inventory import InventoryReader, RecordStore
from fabric_stack.adapters.discovery.lldp import LldpReader
from fabric_stack.adapters.discovery.netbox import NetboxCsvReader, NetboxJsonReader
from fabric_stack.adapters.discovery.nvue import NvueReader
from fabric_stack.adapters.discovery.sonic_config import SonicConfigReader

__all__ = [
    "EosReader",
    "IbdiagnetReader",
    "IblinkinfoReader",
    "IbnetdiscoverReader",
    "InventoryReader",
    "LldpReader",
    "NetboxCsvReader",
    "NetboxJsonReader",
    "NvueReader",
    "Progress",
    "Reader",
    "RecordStore",
    "SonicConfigReader",
    "load_mac_table",
    "load_node_name_map",
]
