"""NetBox benchmark: ``pulumi up`` of a cluster into a real NetBox, then ``drift --netbox``.

Starts a throw-away NetBox with scripts/netbox.sh (``make netbox`` installs it),
runs ``pulumi up`` of the fabric stack with ``fabric:inventory`` pointing at it
(every device, interface and cable written through the REST API), counts what
NetBox then holds (through the API), times ``fabric-stack drift --netbox`` of
the same site, destroys the stack and stops NetBox. Prints wall times and
objects per second. Targets from issue 21: up < 5 min, drift read < 30 s at
1,024 GPUs.

    .venv/bin/python -m bench.bench_netbox [--gpus 1024] [--no-destroy] [--ceiling PORTS]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PULUMI = str(REPO / ".venv" / "bin" / "pulumi")
CLI = str(REPO / ".venv" / "bin" / "fabric-stack")


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - t, r


def _must(what: str, r: subprocess.CompletedProcess[str], ok: tuple[int, ...] = (0,)) -> None:
    if r.returncode not in ok:
        sys.exit(f"{what} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")


def _cpu_s(pid_file: Path) -> float:
    """CPU seconds (user + system) the NetBox server has used so far: the gunicorn master,
    its live workers and the workers it has reaped (a worker respawned after max_requests).
    Unlike wall time, this hardly depends on how busy the (shared) machine is."""
    try:
        master = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return float("nan")
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == master:
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        elif ppid == master:
            total += int(fields[11]) + int(fields[12])
    return total / tick if total else float("nan")


def start_netbox(state: Path) -> str:
    """Start a throw-away NetBox in ``state`` with ``scripts/netbox.sh``; its URL."""
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "netbox.sh"), "start", str(state)],
        capture_output=True,
        text=True,
        check=False,
    )
    _must("scripts/netbox.sh start", started)
    return started.stdout.strip().splitlines()[-1]


def stop_netbox(state: Path) -> None:
    """Stop the NetBox :func:`start_netbox` started in ``state`` (errors ignored)."""
    subprocess.run(
        ["bash", str(REPO / "scripts" / "netbox.sh"), "stop", str(state)],
        capture_output=True,
        check=False,
    )


def ceiling(api: Any, pid_file: Path, ports: int) -> None:
    """What NetBox sustains with no client logic in the way: one bulk POST of ``2 * ports``
    interfaces on two scratch devices, then one of ``ports`` cables between them (wall time
    and the server's CPU per object); the scratch objects are deleted afterwards."""
    mk = api.create
    tag = f"ceiling-{os.getpid()}"
    site = mk("dcim/sites", [{"name": tag, "slug": tag}])[0]["id"]
    man = mk("dcim/manufacturers", [{"name": tag, "slug": tag}])[0]["id"]
    dtype = mk("dcim/device-types", [{"manufacturer": man, "model": tag, "slug": tag}])[0]["id"]
    role = mk("dcim/device-roles", [{"name": tag, "slug": tag}])[0]["id"]
    devs = mk(
        "dcim/devices",
        [{"name": f"{tag}-{i}", "site": site, "role": role, "device_type": dtype} for i in (0, 1)],
    )
    rows = [
        {"device": d["id"], "name": f"p{j}", "type": "400gbase-x-osfp"}
        for d in devs
        for j in range(ports)
    ]
    t, cpu = time.perf_counter(), _cpu_s(pid_file)
    ifs = mk("dcim/interfaces", rows)
    if_s, if_cpu = time.perf_counter() - t, _cpu_s(pid_file) - cpu
    ids = [int(i["id"]) for i in ifs]
    cables = [
        {
            "a_terminations": [{"object_type": "dcim.interface", "object_id": a}],
            "b_terminations": [{"object_type": "dcim.interface", "object_id": b}],
            "status": "planned",
        }
        for a, b in zip(ids[:ports], ids[ports:], strict=True)
    ]
    t, cpu = time.perf_counter(), _cpu_s(pid_file)
    mk("dcim/cables", cables)
    cab_s, cab_cpu = time.perf_counter() - t, _cpu_s(pid_file) - cpu
    api.delete("dcim/devices", [int(d["id"]) for d in devs])
    print(
        f"ceiling, one bulk POST each: {len(ids)} interfaces {if_s:.1f} s "
        f"({len(ids) / if_s:.1f}/s, server CPU {if_cpu / len(ids) * 1000:.0f} ms each); "
        f"{ports} cables {cab_s:.1f} s ({ports / cab_s:.1f}/s, server CPU "
        f"{cab_cpu / ports * 1000:.0f} ms each)"
    )


def bench(gpus: int, work: Path, destroy: bool = True, ports: int = 0) -> None:
    """Start NetBox, up, count, drift, destroy (unless told not to), stop; print the figures."""
    from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
    from fabric_stack.adapters.pulumi.env import offline_env
    from tests.pulumi_project import make_project

    state = work / "netbox"
    t0 = time.perf_counter()
    url = start_netbox(state)
    start_s = time.perf_counter() - t0
    token = (state / "token").read_text().strip()
    try:
        env = offline_env(REPO, state_dir=work / "pulumi-state")
        env["PULUMI_HOME"] = str(work / "pulumi-home")
        proj = make_project(work)
        for args in (
            ["stack", "init", "bench"],
            ["config", "set", "fabric:gpus", str(gpus)],
            ["config", "set", "fabric:inventory", f"netbox+{url}"],
            ["config", "set", "--secret", "fabric:netboxToken", token],
        ):
            _must(f"pulumi {args[0]}", _run([PULUMI, *args, "--non-interactive"], proj, env)[1])
        load0 = os.getloadavg()[0]
        cpu0 = _cpu_s(state / "netbox.pid")
        up_s, r = _run([PULUMI, "up", "--yes", "--skip-preview", "--non-interactive"], proj, env)
        _must("pulumi up", r)
        up_cpu = _cpu_s(state / "netbox.pid") - cpu0
        api = NetBoxClient(url, token)
        site = api.select("dcim/sites", {"slug": "bench"})[0]["id"]
        n = {
            e: api.count(e, {"site_id": site})
            for e in ("dcim/devices", "dcim/interfaces", "dcim/cables")
        }
        objects = sum(n.values())
        drift_s, r = _run(
            [
                CLI,
                "drift",
                "--gpus",
                str(gpus),
                "--netbox",
                url,
                "--netbox-site",
                "bench",
                "--format",
                "json",
            ],
            proj,
            {**env, "NETBOX_TOKEN": token},
        )
        _must("fabric-stack drift --netbox", r, ok=(0, 1))
        drift_cpu = _cpu_s(state / "netbox.pid") - cpu0 - up_cpu
        print(f"up {up_s:.1f} s, drift {drift_s:.1f} s; destroying", file=sys.stderr, flush=True)
        if ports:
            ceiling(api, state / "netbox.pid", ports)
        down_s, down_cpu = float("nan"), float("nan")
        if destroy:
            down_s, r = _run(
                [PULUMI, "destroy", "--yes", "--skip-preview", "--non-interactive"], proj, env
            )
            _must("pulumi destroy", r)
            down_cpu = _cpu_s(state / "netbox.pid") - cpu0 - up_cpu - drift_cpu
        load1 = os.getloadavg()[0]
    finally:
        stop_netbox(state)
    print(f"load average (1 min): {load0:.1f} at up, {load1:.1f} at the end, {os.cpu_count()} CPUs")
    print(f"NetBox start (restore migrated dump, token, serve): {start_s:6.1f} s")
    print(
        f"pulumi up, {gpus} GPUs: {up_s:6.1f} s  ({n['dcim/devices']} devices, "
        f"{n['dcim/interfaces']} interfaces, {n['dcim/cables']} cables = {objects} objects, "
        f"{objects / up_s:.1f} objects/s); NetBox server CPU {up_cpu:.0f} s"
    )
    print(
        f"drift --netbox (read {n['dcim/cables']} cables live + compare): {drift_s:6.1f} s  "
        f"({n['dcim/cables'] / drift_s:.0f} cables/s); NetBox server CPU {drift_cpu:.0f} s"
    )
    if destroy:
        print(
            f"pulumi destroy: {down_s:6.1f} s  ({objects / down_s:.1f} objects/s); "
            f"NetBox server CPU {down_cpu:.0f} s"
        )
    else:
        print("pulumi destroy: skipped (--no-destroy); the throw-away NetBox was deleted")


def main() -> None:
    """Parse arguments and run the benchmark in a temporary directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=1024)
    parser.add_argument(
        "--no-destroy",
        action="store_true",
        help="skip the timed destroy (the throw-away NetBox is stopped and deleted anyway)",
    )
    parser.add_argument(
        "--ceiling",
        type=int,
        default=0,
        metavar="PORTS",
        help="also time one bulk POST of 2*PORTS interfaces and one of PORTS cables (no client "
        "logic: what NetBox itself sustains)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-netbox-") as tmp:
        bench(args.gpus, Path(tmp), destroy=not args.no_destroy, ports=args.ceiling)


if __name__ == "__main__":
    os.environ.setdefault("PULUMI_SKIP_UPDATE_CHECK", "true")
    main()
