"""Do two concurrent bulk cable writes deadlock inside NetBox? Measured on a real NetBox.

Starts a throw-away NetBox with scripts/netbox.sh (as ``bench_netbox`` does), makes scratch
devices, and for each case POSTs two bulk cable writes of ``--cables`` cables at the same
time, ``--repeat`` times, then DELETEs both sets at the same time. The requests go without
the client's deadlock retry, so every PostgreSQL ``deadlock detected`` shows. The cases are
the shapes a ``pulumi up`` writes (one bundle = one leaf's downlinks or uplinks):

* ``disjoint``: switch S1 to servers H, switch S2 to servers G (no device in common);
* ``server``: S1 to port 0 of servers H, S2 to port 1 of the same servers (two rail leaves'
  downlinks in one scalable unit: servers shared, no switch);
* ``switch``: S1's ports 0..n-1 to H, S1's ports n..2n-1 to G (two leaves' uplinks into the
  same spines: one switch shared).

Prints, per case, the deadlocks seen among the POSTs and the DELETEs, the median wall time
of a concurrent pair and of the same two POSTs one after the other.

    .venv/bin/python -m bench.bench_netbox_cables [--repeat 10] [--cables 32]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.bench_netbox import _cpu_s, start_netbox, stop_netbox

CASES = ("disjoint", "server", "switch")


def _scratch(api: Any, tag: str, n: int) -> dict[str, list[int]]:
    """Scratch devices S1 (2n ports), S2 (n), H1..Hn (2 each), G1..Gn (1): interface ids by
    device name."""
    mk = api.create
    site = mk("dcim/sites", [{"name": tag, "slug": tag}])[0]["id"]
    man = mk("dcim/manufacturers", [{"name": tag, "slug": tag}])[0]["id"]
    dtype = mk("dcim/device-types", [{"manufacturer": man, "model": tag, "slug": tag}])[0]["id"]
    role = mk("dcim/device-roles", [{"name": tag, "slug": tag}])[0]["id"]
    ports = {"S1": 2 * n, "S2": n} | {f"H{i}": 2 for i in range(n)} | {f"G{i}": 1 for i in range(n)}
    devs = mk(
        "dcim/devices",
        [{"name": f"{tag}-{d}", "site": site, "role": role, "device_type": dtype} for d in ports],
    )
    dev_id = {str(d["name"]).removeprefix(f"{tag}-"): int(d["id"]) for d in devs}
    rows = [
        {"device": dev_id[d], "name": f"p{j}", "type": "400gbase-x-osfp"}
        for d, k in ports.items()
        for j in range(k)
    ]
    out: dict[str, list[int]] = {d: [] for d in ports}
    by_id = {v: k for k, v in dev_id.items()}
    for i in api.create("dcim/interfaces", rows):
        out[by_id[int(i["device"]["id"] if isinstance(i["device"], dict) else i["device"])]].append(
            int(i["id"])
        )
    return out


def _bodies(case: str, ifs: dict[str, list[int]], n: int) -> tuple[list[Any], list[Any]]:
    """The two bulk cable bodies of ``case`` (see the module doc)."""

    def cable(a: int, b: int) -> dict[str, Any]:
        return {
            "a_terminations": [{"object_type": "dcim.interface", "object_id": a}],
            "b_terminations": [{"object_type": "dcim.interface", "object_id": b}],
            "status": "planned",
            "type": "mmf",
        }

    first = [cable(ifs[f"H{i}"][0], ifs["S1"][i]) for i in range(n)]
    if case == "disjoint":
        second = [cable(ifs[f"G{i}"][0], ifs["S2"][i]) for i in range(n)]
    elif case == "server":
        second = [cable(ifs[f"H{i}"][1], ifs["S2"][i]) for i in range(n)]
    else:
        second = [cable(ifs[f"G{i}"][0], ifs["S1"][n + i]) for i in range(n)]
    return first, second


def _together(calls: Sequence[Callable[[], Any]]) -> tuple[float, list[Any]]:
    """Run ``calls`` in threads released at the same moment: wall time, result or exception."""
    out: list[Any] = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def run(i: int) -> None:
        gate.wait()
        try:
            out[i] = calls[i]()
        except Exception as exc:  # recorded and reported
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t, out


def _outcome(got: Any) -> str:
    if not isinstance(got, Exception):
        return "ok"
    return "deadlock" if "deadlock detected" in str(got) else f"error: {str(got)[:200]}"


def run_case(api: Any, case: str, n: int, repeat: int) -> str:
    """``repeat`` concurrent pairs of ``case`` on fresh scratch devices; one summary line."""
    from fabric_stack.adapters.inventory.netbox.client import _written

    tag = f"cc-{case}-{os.getpid()}"
    ifs = _scratch(api, tag, n)
    first, second = _bodies(case, ifs, n)

    def post(body: list[Any]) -> Callable[[], Any]:
        return lambda: api._request("POST", _written("dcim/cables", body), body)

    def ids_of(got: Any) -> list[int]:
        return [int(c["id"]) for c in got] if isinstance(got, list) else []

    def delete(ids: list[int]) -> Callable[[], Any]:
        return lambda: api._request("DELETE", "dcim/cables/", [{"id": i} for i in ids])

    post_dl = del_dl = 0
    walls: list[float] = []
    errors: list[str] = []
    for _ in range(repeat):
        wall, got = _together([post(first), post(second)])
        walls.append(wall)
        for g in got:
            o = _outcome(g)
            post_dl += o == "deadlock"
            if o.startswith("error"):
                errors.append(o)
        ids = [ids_of(g) for g in got]
        _, gone = _together([delete(i) for i in ids if i])
        for g in gone:
            o = _outcome(g)
            del_dl += o == "deadlock"
            if o.startswith("error"):
                errors.append(o)
        left = [int(c["id"]) for c in api.select("dcim/cables", {"site": tag})]
        if left:  # a deadlocked delete was rolled back
            api.delete("dcim/cables", left)
    serial = time.perf_counter()
    made = [api._request("POST", _written("dcim/cables", b), b) for b in (first, second)]
    serial = time.perf_counter() - serial
    api.delete("dcim/cables", [i for m in made for i in ids_of(m)])
    line = (
        f"{case:8s}: {repeat} concurrent pairs of {n}-cable POSTs: {post_dl} deadlocked "
        f"POSTs of {2 * repeat}, {del_dl} deadlocked DELETEs; pair wall median "
        f"{statistics.median(walls):.1f} s (min {min(walls):.1f}), the same two one after "
        f"the other {serial:.1f} s"
    )
    if errors:
        line += f"; other errors: {errors[:3]}"
    return line


def main() -> None:
    """Start NetBox, run the cases, stop NetBox; print one line per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--cables", type=int, default=32, help="cables per bulk POST")
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated, of " + str(CASES)
    )
    args = parser.parse_args()
    from fabric_stack.adapters.inventory.netbox.client import NetBoxClient

    with tempfile.TemporaryDirectory(prefix="bench-netbox-cables-") as tmp:
        state = Path(tmp) / "netbox"
        url = start_netbox(state)
        try:
            api = NetBoxClient(url, (state / "token").read_text().strip())
            for case in args.cases.split(","):
                load, cpu = os.getloadavg()[0], _cpu_s(state / "netbox.pid")
                line = run_case(api, case, args.cables, args.repeat)
                cpu = _cpu_s(state / "netbox.pid") - cpu
                print(f"{line}; NetBox CPU {cpu:.0f} s; load {load:.1f}", flush=True)
        finally:
            stop_netbox(state)
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
