"""``drasat pool-status``: answer ResourcePoolStatusRequests from manifests, with exact partition headroom."""

from __future__ import annotations

import click

from drasat.cli.inputs import CLUSTER_SCOPED, in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.render.kubectl import forms_epilog, output_options, render_list
from drasat.cli.render.pools import pools_table
from drasat.cli.render.tables import echo_table
from drasat.cli.render.text import echo
from drasat.cli.reporting import exits_on_error
from drasat.models.errors import InputError
from drasat.models.meta import ObjectMeta
from drasat.models.pool_status_request import (
    API_VERSION,
    LIMIT_MAX,
    ResourcePoolStatusRequest,
    ResourcePoolStatusRequestSpec,
)

EPILOG = """The request comes from the flags (--driver is then required) or, without flags,
from every ResourcePoolStatusRequest in the input (kind ResourcePoolStatusRequest,
resource.k8s.io/v1alpha3); each is answered as kube-controller-manager would.
partitionSummary.allocatable is exact: the largest number of further devices of
that partition type that fit together beside the allocated ones (shared counters
and compatibility groups), found with CP-SAT rather than counted device by device.

\b
Exit status: 0 answered; 2 invalid input (no driver, a limit outside
1..1000, unreadable files).

\b
Examples:
  drasat pool-status --driver gpu.example.com cluster/
  drasat pool-status -o table check-gpus.yaml cluster/
  kubectl get resourceslices,resourceclaims,devicetaintrules -A -o yaml \\
      | drasat pool-status --driver gpu.example.com \\
          --default-partition-type-attribute gpu.example.com/profile -
"""


@click.command("pool-status", epilog=EPILOG + "\n" + forms_epilog("the answered ResourcePoolStatusRequests"))
@input_options
@namespace_options_with(CLUSTER_SCOPED)
@click.option("--driver", metavar="NAME", help="Driver whose pools to report (instead of a request in the input).")
@click.option("--pool", "pool_name", metavar="NAME", help="Report only this pool.")
@click.option("--limit", type=int, metavar="N", help=f"Report at most N pools (default 100, at most {LIMIT_MAX}).")
@click.option(
    "--default-partition-type-attribute",
    "default_attribute",
    metavar="ATTRIBUTE",
    help="Partition type attribute for slices that declare none, fully qualified (DOMAIN/NAME), "
    "e.g. gpu.example.com/profile.",
)
@output_options(
    ("table", "wide"),
    "yaml",
    "yaml/json: the request with status filled (a v1 List for several); table: one line per pool (devices, "
    "allocated, available, partitions allocatable/total); wide: with request, driver, node, slices, "
    "unavailable devices, shareable capacity and validation errors.",
)
@exits_on_error
def pool_status(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    driver: str | None,
    pool_name: str | None,
    limit: int | None,
    default_attribute: str | None,
    output: str,
) -> None:
    """Report device availability per DRA pool: counts, partition headroom, shareable capacity.

    FILE is a YAML or JSON file, a directory (read recursively) or - for stdin, holding
    ResourceSlices, ResourceClaims (allocated ones count as in use) and DeviceTaintRules.
    With no FILE, or with --kubeconfig/--context, the live cluster is read (read-only).
    """
    from drasat.models.live import Listed
    from drasat.models.resource import DeviceTaintRule, ResourceClaim, ResourceSlice
    from drasat.solver.report.pool_status import PoolInputs, answer
    from drasat.solver.report.pool_usage import refuse_bad_taints

    in_namespace_only([], namespace, all_namespaces)  # -n and -A together are refused, as everywhere
    needs = {Listed.RESOURCE_SLICES, Listed.RESOURCE_CLAIMS, Listed.DEVICE_TAINT_RULES}
    bundle = read_inputs(files, kubeconfig, context, filenames, output=output, needs=needs)
    requests = _requests(bundle, driver, pool_name, limit, default_attribute)
    refuse_bad_taints(bundle.of_kind(ResourceSlice), bundle.of_kind(DeviceTaintRule), bundle.location_of)
    cluster = PoolInputs(bundle.of_kind(ResourceSlice), bundle.of_kind(ResourceClaim), bundle.of_kind(DeviceTaintRule))
    answered = []
    for request in requests:
        _warn_on_driver_name(bundle, request)
        try:
            answered.append(answer(request, cluster))
        except InputError as exc:
            where = bundle.location_of(request)
            raise InputError(f"{where}: {exc}" if where else str(exc)) from None
    echo_table(_render(answered, output), output)


def _requests(
    bundle, driver: str | None, pool_name: str | None, limit: int | None, default_attribute: str | None
) -> list[ResourcePoolStatusRequest]:
    """The request the flags describe, or else every request in the input."""
    if driver is not None:
        if limit is not None and not 1 <= limit <= LIMIT_MAX:
            raise InputError(f"--limit: must be between 1 and {LIMIT_MAX}, not {limit}")
        if default_attribute is not None:
            from drasat.solver.report.pool_status import check_attribute_name

            check_attribute_name(default_attribute, "--default-partition-type-attribute")
        spec = ResourcePoolStatusRequestSpec(
            driver=driver, pool_name=pool_name, limit=limit, default_partition_type_attribute=default_attribute
        )
        return [
            ResourcePoolStatusRequest(
                api_version=API_VERSION, kind="ResourcePoolStatusRequest", metadata=ObjectMeta(name="drasat"), spec=spec
            )
        ]
    if pool_name or limit is not None or default_attribute:
        raise InputError("--pool, --limit and --default-partition-type-attribute need --driver")
    found = bundle.of_kind(ResourcePoolStatusRequest)
    if not found:
        raise InputError(
            "no ResourcePoolStatusRequest in the input: give --driver NAME, or add a request "
            "(apiVersion resource.k8s.io/v1alpha3, kind ResourcePoolStatusRequest)"
        )
    return found


def _warn_on_driver_name(bundle, request: ResourcePoolStatusRequest) -> None:
    """A driver name no slice can carry still gets its (empty) answer, with a word on stderr."""
    from drasat.models.validation.formats import dns_subdomain_errors

    if request.spec.driver and dns_subdomain_errors(request.spec.driver):
        where = bundle.location_of(request)
        echo(
            f"notice: {str(where) + ': ' if where else ''}spec.driver {request.spec.driver!r} is not a valid "
            "driver name (a DNS subdomain), so no pool can match it",
            err=True,
        )


def _render(answered: list[ResourcePoolStatusRequest], output: str) -> str:
    if output in ("table", "wide"):
        return pools_table(answered, wide=output == "wide")
    return render_list([request.to_api() for request in answered], output, single=True)
