"""Speed of the reporting commands' solver side on made-up GPU fleets (a third of the nodes MIG-partitioned).

Prints, per fleet size, the time to answer a ResourcePoolStatusRequest with exact
partition headroom (one CP-SAT maximisation per pool and partition type) and to
build the inventory with its fragmentation lines. Run: python benchmarks/pool_status_bench.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from drasat.models.loader import load_text
from drasat.models.pool_status_request import ResourcePoolStatusRequestSpec
from drasat.models.resource import DeviceTaintRule, ResourceClaim, ResourceSlice
from drasat.solver.report.device_states import node_reports
from drasat.solver.report.pool_status import PoolInputs, pool_status

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fleet_factory import DRIVER, device_count, fleet  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 100, 300])
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    import yaml

    table = Table(title="pool-status and inventory on GPU fleets")
    for column in ("nodes", "devices", "pool-status ms", "inventory ms", "partition types"):
        table.add_column(column, justify="right")
    for nodes in args.nodes:
        bundle = load_text(yaml.safe_dump_all(fleet(nodes, args.gpus, seed=7)))
        cluster = PoolInputs(
            bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule)
        )
        start = time.perf_counter()
        status = pool_status(ResourcePoolStatusRequestSpec(driver=DRIVER, limit=1000), cluster)
        status_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        node_reports(cluster)
        inventory_ms = (time.perf_counter() - start) * 1000
        types = sum(len(p.partition_summary) for p in status.pools)
        table.add_row(
            str(nodes), str(device_count(nodes, args.gpus)), f"{status_ms:.0f}", f"{inventory_ms:.0f}", str(types)
        )
    Console().print(table)


if __name__ == "__main__":
    main()
