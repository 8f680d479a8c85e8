"""Large inputs end in bounded time and memory: measured as a user runs them, one process each.

Run: ``python benchmarks/size_bench.py [--devices 100000] [--claims 10000] [--huge-mb 200]``.
Generates, in a temporary directory: a manifest far over a per-file limit of 32 MiB
(``--max-input-size``; refused before it is read), a cluster with ``--devices`` devices (validated, then solved for
one claim), and ``--claims`` one-device claims on a node with as many devices
(solved all together). Prints the exit status, wall time and peak memory (maximum
resident set size, from ``/usr/bin/time`` or ``getrusage``) of each command.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

DEVICES_PER_SLICE = 128  # ResourceSliceMaxDevices
CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
"""


def slices(devices: int) -> str:
    count = -(-devices // DEVICES_PER_SLICE)
    out = []
    for s in range(count):
        names = range(s * DEVICES_PER_SLICE, min(devices, (s + 1) * DEVICES_PER_SLICE))
        body = "".join(
            f"  - name: gpu-{i}\n    attributes: {{model: {{string: a100}}, index: {{int: {i}}}}}\n"
            f"    capacity: {{memory: {{value: 80Gi}}}}\n"
            for i in names
        )
        out.append(
            f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: node-1-{s}}}\nspec:\n"
            f"  driver: gpu.example.com\n  nodeName: node-1\n"
            f"  pool: {{name: node-1, generation: 1, resourceSliceCount: {count}}}\n  devices:\n{body}"
        )
    return "---\n".join(out)


def claims(n: int) -> str:
    return "---\n".join(
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c-{i}, namespace: "
        f"default}}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: "
        f"{{deviceClassName: gpu.example.com}}\n"
        for i in range(n)
    )


def write_split(directory: Path, stem: str, text: str, max_bytes: int = 24 * 2**20) -> None:
    """``text`` as several files under the per-file limit, split at document boundaries."""
    directory.mkdir(parents=True, exist_ok=True)
    part, size, index = [], 0, 0
    for document in text.split("---\n"):
        if size + len(document) > max_bytes and part:
            (directory / f"{stem}-{index}.yaml").write_text("---\n".join(part))
            part, size, index = [], 0, index + 1
        part.append(document)
        size += len(document) + 4
    (directory / f"{stem}-{index}.yaml").write_text("---\n".join(part))


def huge_manifest(path: Path, megabytes: int) -> None:
    one = slices(DEVICES_PER_SLICE) + "\n---\n"
    with open(path, "w") as out:
        written = 0
        while written < megabytes * 2**20:
            out.write(one)
            written += len(one)


def measure(args: list[str]) -> tuple[int, float, float, str]:
    """Exit status, seconds, peak resident MiB and the last line of stderr of one drasat process."""
    command = [sys.executable, "-m", "drasat.cli", *args]
    timer = ["/usr/bin/time", "-f", "%M"] if os.path.exists("/usr/bin/time") else []
    start = time.perf_counter()
    done = subprocess.run(timer + command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    lines = done.stderr.strip().splitlines()
    if timer and lines and lines[-1].isdigit():
        peak, lines = int(lines[-1]) / 1024, lines[:-1]
    else:
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    said = [
        line
        for line in done.stdout.splitlines()[:3] + lines
        if line.strip() and not line.startswith(("Command exited", "warning", "notice"))
    ]
    return done.returncode, seconds, peak, (said[-1] if said else "")[:110]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--huge-mb", type=int, default=200)
    parser.add_argument("--timeout", default="300")
    options = parser.parse_args()
    table = Table(title="drasat on large inputs (one process per row)")
    for column in ("input", "command", "exit", "seconds", "peak MiB", "what it said (first lines of stdout, stderr)"):
        table.add_column(column)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        huge = root / "huge.yaml"
        huge_manifest(huge, options.huge_mb)
        many = root / "devices"
        write_split(many, "slices", slices(options.devices))
        (many / "class.yaml").write_text(CLASS)
        (many / "claim.yaml").write_text(claims(1))
        crowd = root / "claims"
        write_split(crowd, "slices", slices(options.claims))
        (crowd / "class.yaml").write_text(CLASS)
        write_split(crowd, "claims", claims(options.claims))
        rows = [
            (
                f"{huge.stat().st_size / 2**20:.0f} MB manifest, --max-input-size 32Mi",
                ["validate", "--max-input-size", "32Mi", str(huge)],
            ),
            (f"{options.devices:,} devices", ["validate", "-q", str(many)]),
            (
                f"{options.devices:,} devices, 1 claim",
                ["solve", "--timeout", options.timeout, "-o", "table", str(many)],
            ),
            (
                f"{options.claims:,} claims, {options.claims:,} devices",
                ["solve", "--timeout", options.timeout, "-o", "table", str(crowd)],
            ),
        ]
        for label, args in rows:
            code, seconds, peak, message = measure(args)
            table.add_row(label, args[0], str(code), f"{seconds:.1f}", f"{peak:.0f}", message)
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
