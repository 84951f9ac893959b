"""NetBoxClient.delete against a real NetBox (scripts/netbox.sh): objects that another request
deletes first — before or while a bulk DELETE runs — are not an error, and nothing stays behind.

This is the race ``pulumi destroy`` runs into: a server's NIC interfaces are deleted by their
resource while the sweep of unused devices deletes the server (cascading to its interfaces).
"""

from __future__ import annotations

import threading
import uuid

import pytest

from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.errors import InventoryError

pytestmark = [pytest.mark.netbox, pytest.mark.slow]


def _device_with_interfaces(api: NetBoxClient, n: int) -> tuple[int, list[int]]:
    tag = uuid.uuid4().hex[:8]
    site = api.create("dcim/sites", [{"name": f"race-{tag}", "slug": f"race-{tag}"}])[0]["id"]
    maker = api.create("dcim/manufacturers", [{"name": f"m-{tag}", "slug": f"m-{tag}"}])[0]["id"]
    dtype = api.create(
        "dcim/device-types", [{"manufacturer": maker, "model": f"t-{tag}", "slug": f"t-{tag}"}]
    )[0]["id"]
    role = api.create("dcim/device-roles", [{"name": f"r-{tag}", "slug": f"r-{tag}"}])[0]["id"]
    dev = api.create(
        "dcim/devices", [{"name": f"d-{tag}", "site": site, "device_type": dtype, "role": role}]
    )[0]["id"]
    ifaces = api.create(
        "dcim/interfaces", [{"device": dev, "name": f"p{i}", "type": "other"} for i in range(n)]
    )
    return int(dev), [int(i["id"]) for i in ifaces]


def test_delete_of_objects_already_gone(netbox: tuple[str, str]) -> None:
    url, token = netbox
    api = NetBoxClient(url, token)
    dev, ifaces = _device_with_interfaces(api, 4)
    api.request("DELETE", f"dcim/interfaces/{ifaces[1]}/")  # gone before the bulk DELETE
    with pytest.raises(InventoryError, match=r"\(400\).*could not be found"):
        api.request("DELETE", "dcim/interfaces/", [{"id": i} for i in ifaces])  # NetBox refuses
    api.delete("dcim/interfaces", ifaces)  # the client deletes the rest
    assert api.count("dcim/interfaces", {"device_id": dev}) == 0
    api.delete("dcim/devices", [dev])
    api.delete("dcim/devices", [dev])  # twice: nothing left, no error
    assert api.count("dcim/devices", {"id": dev}) == 0


def test_delete_racing_a_cascade(netbox: tuple[str, str]) -> None:
    url, token = netbox
    api = NetBoxClient(url, token)
    dev, ifaces = _device_with_interfaces(api, 40)
    errors: list[str] = []

    def run(endpoint: str, ids: list[int]) -> None:
        try:
            NetBoxClient(url, token).delete(endpoint, ids)
        except InventoryError as exc:  # the assertion below shows it
            errors.append(str(exc))

    # The interfaces' own DELETE and the device's (which cascades to them) at the same time.
    threads = [
        threading.Thread(target=run, args=("dcim/interfaces", ifaces)),
        threading.Thread(target=run, args=("dcim/devices", [dev])),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert api.count("dcim/interfaces", {"id": ifaces}) == 0
    assert api.count("dcim/devices", {"id": dev}) == 0
