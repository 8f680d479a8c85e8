"""Where a command's objects come from: FILE arguments, a live cluster, or both.

Every command that reads the cluster's state shares these options, so that
``--kubeconfig``/``--context`` mean the same everywhere and files can add to (or
stand in for) what the cluster holds.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, TypeVar

import click

from drasat.cli.render.text import echo
from drasat.models.bundle import Bundle, Loaded
from drasat.models.errors import DrasatError, InputError, Location, SelectorError

from .loading import load_bundle, max_input_size_option

if TYPE_CHECKING:
    from drasat.models.live import Listed

F = TypeVar("F", bound=Callable[..., Any])


def input_options(function: F) -> F:
    """FILE... (optional when a cluster is read), ``-f/--filename``, ``-R``, ``--max-input-size``,
    ``--kubeconfig`` and ``--context``."""
    function = max_input_size_option(function)
    function = click.option(
        "-R",
        "--recursive",
        is_flag=True,
        expose_value=False,
        help="Accepted as kubectl does; directories are always read recursively.",
    )(function)
    function = click.option(
        "-f",
        "--filename",
        "filenames",
        multiple=True,
        metavar="FILE",
        type=click.Path(),
        help="A file, directory or - (stdin), as kubectl's -f; repeatable, same as FILE arguments.",
    )(function)
    function = click.option(
        "--context", metavar="NAME", help="Read the cluster of this kubeconfig context (read-only: list calls only)."
    )(function)
    function = click.option(
        "--kubeconfig",
        metavar="PATH",
        type=click.Path(dir_okay=False),
        help="Read the cluster this kubeconfig points at (its current context unless --context). With no FILE "
        "at all the cluster is read anyway, from $KUBECONFIG or ~/.kube/config, as kubectl does; "
        "needs pip install 'drasat[cluster]'.",
    )(function)
    return click.argument("files", nargs=-1, metavar="[FILE...]", type=click.Path())(function)


def read_inputs(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...] = (),
    *,
    output: str | None = None,
    needs: Collection[Listed] | None = None,
    keep_problems: bool = False,
) -> Bundle:
    """The objects of the cluster and then of the files, as one bundle that knows where each object came
    from; any problem raises InputError (unless ``keep_problems``: validate reports them itself).

    The cluster is read with ``--kubeconfig``/``--context``, or when no FILE is given at all: then, as
    kubectl does, the current context of ``$KUBECONFIG`` or ``~/.kube/config``. ``needs`` are the kinds
    the command cannot do without (default: what an allocation needs); one the credentials may not list
    is an error. Files that hold no object at all are an error too ("no objects passed to solve", as
    kubectl says), never an empty answer. A live read shows a progress bar on a terminal unless
    ``output`` is for tools."""
    files = (*files, *filenames)
    if files.count("-") > 1:
        raise InputError("standard input (-) is given more than once; it can be read only once")
    bundle = Bundle()
    if kubeconfig is not None or context is not None or not files:
        bundle.extend(_read_live(kubeconfig, context, output, needs, bool(files), keep_problems))
    if files:
        from_files = load_bundle(files, keep_problems=keep_problems)
        if not from_files.entries:
            raise InputError(f"no objects passed to {_command_name()}")
        bundle.extend(from_files)
    if bundle.problems and not keep_problems:  # the same object in the cluster and in a file, read as two
        raise InputError(bundle.problems)
    if not keep_problems:
        _refuse_bad_pod_resources(bundle)
    return bundle


def _refuse_bad_pod_resources(bundle: Bundle) -> None:
    """InputError naming file, Pod and field when any Pod not yet finished asks for resources the API server refuses (a bad
    resource name, a fraction of a GPU, a request above its limit) or kube-scheduler cannot count (beyond
    int64). Checked here, where every command's objects arrive, so that no command can answer for such a
    pod — as the node's load, a pending pod or a copy of it — whatever else it checks of its objects."""
    if not any(loaded.obj.kind == "Pod" for loaded in bundle.objects):
        return  # and the validation modules stay unimported
    from drasat.models.core import Pod
    from drasat.models.validation.pod_resources import pod_requirement_problems
    from drasat.solver.scheduling.pods import finished

    problems = [
        problem
        for pod in bundle.of_kind(Pod)
        if not finished(pod)  # it holds nothing any more: what it once asked for is no command's concern
        for problem in pod_requirement_problems(pod, bundle.location_of(pod))
    ]
    if problems:
        raise InputError(problems)


def _read_live(
    kubeconfig: str | None,
    context: str | None,
    output: str | None,
    needs: Collection[Listed] | None,
    files: bool,
    keep_problems: bool,
) -> Bundle:
    from drasat.models.live import ALLOCATION_NEEDS, default_kubeconfig, read_cluster

    from .progress import Bar

    if kubeconfig is None and context is None and not files and default_kubeconfig() is None:
        raise InputError(
            "nothing to read: give FILE... (a file, a directory, or - for stdin), or a cluster to read: "
            "--kubeconfig PATH, $KUBECONFIG or ~/.kube/config (none of them is there)"
        )
    with Bar("reading the cluster", output=output) as bar:
        live = read_cluster(
            kubeconfig, context, progress=bar.update, needs=ALLOCATION_NEEDS if needs is None else needs
        )
    for notice in live.notices:
        echo(f"notice: {notice}", err=True)
    if live.problems and not keep_problems:
        raise InputError(live.problems)
    live.notices = []  # said already
    return live


def scheduling_needs(pods_asked: bool) -> Collection[Listed] | None:
    """What a command that allocates needs listed: with pods asked about (``schedule``, ``--pods``), pods,
    the nodes they go to and the templates of their claims too — without them "no pending pods" would be
    an answer about credentials, not about the cluster."""
    from drasat.models.live import ALLOCATION_NEEDS, Listed

    if not pods_asked:
        return ALLOCATION_NEEDS
    return ALLOCATION_NEEDS | {Listed.PODS, Listed.NODES, Listed.RESOURCE_CLAIM_TEMPLATES}


def _command_name() -> str:
    """The running subcommand's name (``solve``), for messages in kubectl's words."""
    context = click.get_current_context(silent=True)
    return context.info_name or "drasat" if context is not None else "drasat"


PENDING_IN_NAMESPACE = (
    "Consider only the pending pods and claims of this namespace (objects of every namespace still count as the "
    "cluster's state); bare names in --pods/--claims are taken from it."
)
CLUSTER_SCOPED = (
    "Accepted as kubectl does for cluster-scoped kinds: devices and their pools belong to no namespace, and the "
    "allocated claims of every namespace hold them."
)


def namespace_options_with(namespace_help: str, all_help: str = "Every namespace (the default).") -> Callable[[F], F]:
    """``-n/--namespace`` and ``-A/--all-namespaces``, as kubectl spells them, with what they mean to the
    command."""

    def decorate(function: F) -> F:
        function = click.option("-A", "--all-namespaces", is_flag=True, help=all_help)(function)
        return click.option("-n", "--namespace", metavar="NS", help=namespace_help)(function)

    return decorate


namespace_options = namespace_options_with(
    PENDING_IN_NAMESPACE, "Consider pending pods and claims of every namespace (the default)."
)
"""The allocation commands' ``-n``/``-A``: which pending pods and claims are asked about."""


def in_namespace_only(objects: list[Any], namespace: str | None, all_namespaces: bool) -> list[Any]:
    """``objects`` of ``namespace`` (all of them without one)."""
    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces exclude each other")
    return objects if namespace is None else [o for o in objects if o.namespace == namespace]


def in_namespace(names: str | None, namespace: str | None, all_namespaces: bool) -> str | None:
    """``--pods``/``--claims`` text with bare names put in ``namespace``."""
    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces exclude each other")
    if names is None or namespace is None:
        return names
    return ",".join(n.strip() if "/" in n else f"{namespace}/{n.strip()}" for n in names.split(",") if n.strip())


def told_as_validate(exc: DrasatError, bundle: Bundle | None) -> DrasatError:
    """An error an allocation met in an object it was given, told as ``drasat validate`` tells it: the file,
    the object and the field (the solver, which never reads files, names only the object and field). A CEL
    compile error is worded as validate words it; a CEL runtime error or a missing class keeps its words,
    after the place. Any other error is returned as it is."""
    if bundle is None:
        return exc
    about = getattr(exc, "about", None)
    if isinstance(about, Location):
        place = _place(about, bundle)
        return exc if place is None else type(exc)(f"{place}: {exc}", about)
    if not isinstance(exc, SelectorError):
        return exc
    from drasat.solver.cel.validate import check_cel

    text = str(exc)
    problems = [
        problem
        for loaded in bundle.objects
        if _named_in(loaded.obj, text)
        for problem in check_cel(loaded.obj, loaded.location)
    ]
    return InputError(problems) if problems else exc


def _named_in(obj: Any, text: str) -> bool:
    """Whether an allocation's error is about ``obj`` (it names a claim by namespace/name, a class by name)."""
    if obj.kind == "DeviceClass":
        return f"class {obj.name}:" in text
    if obj.kind in ("ResourceClaim", "ResourceClaimTemplate"):
        return f"claim {obj.namespace}/{obj.name}" in text or f"template {obj.namespace}/{obj.name}" in text
    return False


def _place(about: Location, bundle: Bundle) -> Location | None:
    """Where ``about``'s object was read, with its field: the object itself, or for a claim made from a
    ResourceClaimTemplate (the input holds no such claim) the template's claim spec, found through the pod."""
    from drasat.models.resource import DeviceClass, ResourceClaim
    from drasat.solver.allocation.problem import claim_key

    for loaded in bundle.objects:
        obj = loaded.obj
        if (isinstance(obj, DeviceClass) and about.kind == "DeviceClass" and obj.name == about.name) or (
            isinstance(obj, ResourceClaim) and about.kind == "ResourceClaim" and claim_key(obj) == about.name
        ):
            return loaded.location._replace(path=about.path)
    template = _template_of(about.name or "", bundle) if about.kind == "ResourceClaim" else None
    return None if template is None else template.location._replace(path=f"spec.{about.path}")


def _template_of(claim: str, bundle: Bundle) -> Loaded | None:
    """The loaded template a pod's claim named ``claim`` (namespace/name) was made from, or None."""
    from drasat.models.core import Pod
    from drasat.models.resource import ResourceClaimTemplate
    from drasat.solver.scheduling.cluster import namespace_of
    from drasat.solver.scheduling.pods import generated_claim_name

    namespace, _, name = claim.rpartition("/")
    templates = {
        (namespace_of(o.obj), o.obj.name): o for o in bundle.objects if isinstance(o.obj, ResourceClaimTemplate)
    }
    for loaded in bundle.objects:
        pod = loaded.obj
        if not isinstance(pod, Pod) or namespace_of(pod) != namespace:
            continue
        for entry in pod.spec.resource_claims:
            if entry.resource_claim_template_name and generated_claim_name(pod, entry.name) == name:
                return templates.get((namespace, entry.resource_claim_template_name))
    return None
