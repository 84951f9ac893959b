"""NetBox branches (issue #48) against a scripted plugin API: the ``X-NetBox-Branch`` header
carries the schema id, a missing branch is made only by writers, provisioning is waited for
(bounded), and a NetBox without the plugin, a refused name or a merged branch is one line.
The real plugin is tests/integration/netbox/test_netbox_branch_real.py."""

from __future__ import annotations

from typing import Any

import pytest

from fabric_stack.adapters.inventory.netbox import branching
from fabric_stack.adapters.inventory.netbox.branching import (
    BRANCHES,
    branch_of,
    branch_schema,
    check_branch_name,
    forget_branches,
    with_branch,
)
from fabric_stack.errors import InventoryError, NetBoxHttpError

BASE = "http://nb.test"


class PluginApi:
    """The plugin's branch endpoints as NetBox 4.7 + netbox-branching 1.2.2 answer them."""

    def __init__(self, branches: list[dict[str, Any]] | None = None, plugin: bool = True) -> None:
        self.branches = branches or []
        self.plugin = plugin
        self.calls: list[tuple[str, str]] = []
        self.provisioning_reads = 2  # GETs of a new branch before it is ready
        self.taken_meanwhile = False

    def __call__(self, method: str, path: str, body: Any) -> Any:
        self.calls.append((method, path))
        if not self.plugin:
            raise NetBoxHttpError(f"NetBox {BASE}: {method} /{path} failed (404)", 404)
        if method == "GET" and path.startswith(f"{BRANCHES}?name="):
            name = path.split("=", 1)[1].split("&")[0]
            return {"results": [b for b in self.branches if b["name"] == name]}
        if method == "POST":
            if self.taken_meanwhile:
                self.branches.append(self._branch(body["name"], "ready"))
                raise NetBoxHttpError(
                    f'NetBox {BASE}: POST failed (400): {{"name": ["branch with this name '
                    'already exists."]}',
                    400,
                )
            if len(body["name"]) > 100:
                raise NetBoxHttpError(f"NetBox {BASE}: POST failed (400): too long", 400)
            made = self._branch(body["name"], "new")
            self.branches.append(made)
            return dict(made)
        if method == "GET":
            branch = next(b for b in self.branches if path == f"{BRANCHES}{b['id']}/")
            self.provisioning_reads -= 1
            if self.provisioning_reads <= 0:
                branch["status"] = {"value": "ready"}
            else:
                branch["status"] = {"value": "provisioning"}
            return dict(branch)
        raise AssertionError((method, path))

    def _branch(self, name: str, status: str) -> dict[str, Any]:
        n = len(self.branches) + 1
        return {"id": n, "name": name, "schema_id": f"s{n:07d}", "status": {"value": status}}


@pytest.fixture(autouse=True)
def _no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    forget_branches()
    monkeypatch.setattr(branching.time, "sleep", lambda _s: None)


def test_a_writer_makes_the_branch_and_waits_until_it_is_ready() -> None:
    api = PluginApi()
    assert branch_schema(api, BASE, "review-1", create=True) == "s0000001"
    assert [m for m, _ in api.calls] == ["GET", "POST", "GET", "GET"]
    # seen ready once: a second client of this process asks nothing
    assert branch_schema(api, BASE, "review-1", create=True) == "s0000001"
    assert len(api.calls) == 4


def test_a_reader_never_makes_one() -> None:
    api = PluginApi()
    with pytest.raises(InventoryError) as caught:
        branch_schema(api, BASE, "review-1", create=False)
    assert caught.value.message == (
        f"NetBox {BASE}: branch 'review-1': no such branch (it is made by `up` with it)"
    )
    assert [m for m, _ in api.calls] == ["GET"]


def test_a_branch_made_meanwhile_by_a_parallel_writer_is_used() -> None:
    api = PluginApi()
    api.taken_meanwhile = True
    assert branch_schema(api, BASE, "review-1", create=True) == "s0000001"


def test_a_netbox_without_the_plugin_is_one_line() -> None:
    with pytest.raises(InventoryError) as caught:
        branch_schema(PluginApi(plugin=False), BASE, "review-1", create=True)
    assert caught.value.message == (
        f"NetBox {BASE}: no netbox-branching plugin (GET /api/{BRANCHES} answered 404), so "
        "branch 'review-1' cannot be used: install netboxlabs-netbox-branching in NetBox, "
        "or unset fabric:netboxBranch / --netbox-branch"
    )


@pytest.mark.parametrize("status", ["merged", "archived", "failed"])
def test_a_branch_past_review_is_refused(status: str) -> None:
    api = PluginApi([{"id": 1, "name": "r", "schema_id": "x", "status": {"value": status}}])
    with pytest.raises(InventoryError, match=f"its status is '{status}', not ready"):
        branch_schema(api, BASE, "r", create=True)


def test_provisioning_that_never_ends_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    api = PluginApi()
    api.provisioning_reads = 10**9
    monkeypatch.setattr(branching, "READY_WAIT_S", 0.0)
    with pytest.raises(InventoryError, match="still 'new' after 0 s"):
        branch_schema(api, BASE, "review-1", create=True)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "is empty"),
        (" r", "starts or ends with a space"),
        ("r" * 101, "is 101 characters long (NetBox takes at most 100)"),
        ("a\nb", "holds a control character"),
    ],
)
def test_names_netbox_refuses_are_refused_before_asking(name: str, problem: str) -> None:
    with pytest.raises(InventoryError) as caught:
        check_branch_name(name, "--netbox-branch")
    assert caught.value.message.endswith(problem)
    assert caught.value.message.count("\n") == 0


def test_the_branch_travels_with_the_url() -> None:
    url = with_branch("netbox+http://nb:8000", "review 1/a")
    assert url == "netbox+http://nb:8000?branch=review%201%2Fa"
    assert branch_of(url) == "review 1/a"
    assert branch_of("netbox+http://nb:8000") == ""
    assert with_branch("netbox+http://nb:8000", "") == "netbox+http://nb:8000"


def test_the_client_sends_the_schema_id_on_every_request_but_the_lookup() -> None:
    import http.server
    import json
    import threading

    from fabric_stack.adapters.inventory.netbox.client import NetBoxClient

    seen: list[tuple[str, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, self.headers.get("X-NetBox-Branch")))
            if self.path.startswith("/api/plugins/branching/branches/"):
                body: Any = {
                    "results": [
                        {
                            "id": 4,
                            "name": "r",
                            "schema_id": "ab12cd34",
                            "status": {"value": "ready"},
                        }
                    ]
                }
            else:
                body = {"count": 3, "results": []}
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert NetBoxClient(base, "tok", timeout=5, branch="r").count("dcim/devices") == 3
        assert NetBoxClient(base, "tok", timeout=5).count("dcim/devices") == 3
    finally:
        server.shutdown()
        server.server_close()
    assert [h for _, h in seen] == [None, "ab12cd34", None]
    assert seen[0][0].startswith("/api/plugins/branching/branches/?name=r")
