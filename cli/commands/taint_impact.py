"""``drasat taint-impact``: how many devices a DeviceTaintRule selects and which pods NoExecute would evict."""

from __future__ import annotations

from typing import Any

import click
import yaml

from drasat.cli.allocation_options import NOW
from drasat.cli.inputs import in_namespace_only, input_options, namespace_options_with, read_inputs
from drasat.cli.loading import input_limit
from drasat.cli.render.kubectl import LIST_FORMS, render_data, report_object, report_output_option
from drasat.cli.render.text import echo
from drasat.cli.reporting import exits_on_error
from drasat.models.errors import InputError, InputProblem, Location

EPILOG = """The first line is the condition message Kubernetes writes into a rule with
effect: None (a dry run: the effect is taken as NoExecute), then the pods that
would be evicted; for other effects, the devices the rule selects follow it,
counted in the dry run's words. Selectors: driver, pool and device (resource.k8s.io/v1), and
deviceClassName and CEL selectors as older versions wrote them; no
deviceSelector selects nothing, an empty one (deviceSelector: {}) every device.
A toleration with effect NoExecute in
the claim's allocation with tolerationSeconds delays eviction (the shortest
wins) from the taint's timeAdded (--now when the rule has none, as the API
server stamps it); one without prevents it. Only scheduled pods (spec.nodeName)
that the claim's status.reservedFor lists are evicted, as the controller does.
The first line is worded as the controller words the rule's condition: None a
dry run, NoExecute the pods pending eviction, NoSchedule no eviction at all.

\b
Exit status: 0 reported; 2 invalid input (a broken rule, an unknown
DeviceClass, a CEL error, a taint effect other than NoSchedule, NoExecute or
None).

\b
Examples:
  drasat taint-impact drain-node-7.yaml cluster/
  kubectl get resourceslices,resourceclaims,pods,deviceclasses -A -o yaml \\
      | drasat taint-impact -o json rule.yaml -
"""

EXTRA_FIELDS = ("deviceClassName", "selectors")


@click.command("taint-impact", epilog=EPILOG)
@click.argument("rule_file", metavar="RULE.yaml")
@input_options
@namespace_options_with("Consider only the pods of this namespace (the devices are counted cluster-wide).")
@NOW
@report_output_option(
    ("text",),
    "text: the condition message and the pods; json/yaml: the numbers, devices and pods as data, one "
    "DeviceTaintRuleImpact per rule (a v1 List for several); name: the pods NoExecute would evict, pod/NAME.",
)
@exits_on_error
def taint_impact(
    rule_file: str,
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    now: Any,
    output: str,
) -> None:
    """Dry-run a DeviceTaintRule: devices it selects, and pods that NoExecute would evict.

    RULE.yaml holds one or more DeviceTaintRules. FILE is a YAML or JSON file, a directory
    (read recursively) or - for stdin, holding ResourceSlices, ResourceClaims, Pods and
    DeviceClasses. With no FILE, or with --kubeconfig/--context, the live cluster is read (read-only).
    """
    from datetime import UTC, datetime

    from drasat.models.core import Pod
    from drasat.models.resource import DeviceClass, ResourceClaim, ResourceSlice
    from drasat.solver.cel import SelectorEvaluator
    from drasat.solver.report.pool_usage import refuse_bad_taints
    from drasat.solver.report.taint_impact import taint_impact as impact_of

    moment = now or datetime.now(UTC).replace(microsecond=0)
    rules = read_rules(rule_file)
    from drasat.models.live import Listed

    needs = {Listed.RESOURCE_SLICES, Listed.RESOURCE_CLAIMS, Listed.PODS, Listed.DEVICE_CLASSES}
    bundle = read_inputs(files, kubeconfig, context, filenames, output=output, needs=needs)
    pods = in_namespace_only(bundle.of_kind(Pod), namespace, all_namespaces)
    refuse_bad_taints(bundle.of_kind(ResourceSlice), [], bundle.location_of)
    evaluator = SelectorEvaluator()
    _refuse_bad_cel(rule_file, rules, bundle, evaluator)
    try:
        impacts = [
            impact_of(
                rule.name,
                selector,
                rule.spec.taint,
                bundle.of_kind(ResourceSlice),
                bundle.of_kind(ResourceClaim),
                pods,
                bundle.of_kind(DeviceClass),
                evaluator,
                moment,
            )
            for rule, selector in rules
        ]
    except InputError as exc:  # the rule's deviceClassName names no DeviceClass: the rule file is at fault
        raise InputError(f"{rule_file}: {exc}") from None
    if output in LIST_FORMS:
        items = [report_object("DeviceTaintRuleImpact", i.rule, _as_data(i, moment)) for i in impacts]
        data = items[0] if len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}
        evicted = [{"kind": "Pod", "metadata": {"name": pod.rsplit("/", 1)[-1]}} for i in impacts for pod in i.evicted]
        echo(render_data(data, output, evicted), nl=False)
        return
    for impact in impacts:
        echo(f"DeviceTaintRule {impact.rule}: {impact.message() or f'{impact.reason()} (no pod needs to be evicted)'}")
        if impact.effect != "None":  # the dry run's message counts the devices already; the others do not
            echo(f"  {impact.selected()}")
        if impact.effect not in ("None", "NoExecute"):
            echo(f"  no pod is evicted: a {impact.effect} taint only keeps new allocations off the devices")
            continue
        for pod in impact.evicted:
            echo(f"  {'would evict' if impact.effect == 'None' else 'evicts'} pod {pod}{_when(impact, pod, moment)}")


def _refuse_bad_cel(rule_file: str, rules: list[tuple[Any, Any]], bundle: Any, evaluator: Any) -> None:
    """The CEL a rule runs — its own selectors (older API versions) and those of the DeviceClass it names —
    refused where ``drasat validate`` refuses it: empty, too long, not compiling, too costly."""
    from drasat.models.resource import DeviceClass
    from drasat.solver.cel.validate import check_cel, expression_problem

    problems = []
    for rule, selector in rules:
        for i, expression in enumerate(selector.cel):
            problem = expression_problem(expression, evaluator)
            if problem is not None:
                at = f"spec.deviceSelector.selectors[{i}].cel.expression"
                problems.append(InputProblem(Location(rule_file, None, "DeviceTaintRule", rule.name, at), problem))
        for cls in bundle.of_kind(DeviceClass):
            if cls.name == selector.device_class:
                problems += check_cel(cls, bundle.location_of(cls) or Location(f"DeviceClass/{cls.name}"))
    if problems:
        raise InputError(problems)


def read_rules(path: str) -> list[tuple[Any, Any]]:
    """The DeviceTaintRules in ``path`` with their selectors, older selector fields included.

    ``deviceClassName`` and ``selectors`` left the API in 1.35; the model follows the
    current API, so they are taken out here, checked, and carried beside the rule.
    """
    from drasat.models.input_text import read_file
    from drasat.models.loader import load_text
    from drasat.models.resource import DeviceTaintRule
    from drasat.models.yaml_io import parse_documents
    from drasat.solver.report.pool_usage import refuse_bad_taints

    text, problem = (
        read_file(path, input_limit())
        if path != "-"
        else (None, InputProblem(Location(path), "RULE.yaml must be a file"))
    )
    if problem is not None or text is None:
        raise InputError([problem or InputProblem(Location(path), "could not be read")])
    documents, extras = [], []
    for document in parse_documents(text, path):
        if document.problem is not None:
            raise InputError([document.problem])
        data = document.data
        extras.append(_take_extras(data, Location(path, document.index, "DeviceTaintRule", _name(data))))
        documents.append(data)
    bundle = load_text(yaml.safe_dump_all(documents, sort_keys=False), path)
    if bundle.problems:
        raise InputError(bundle.problems)
    rules = [
        (loaded.obj, extras[loaded.location.document or 0])
        for loaded in bundle.objects
        if isinstance(loaded.obj, DeviceTaintRule)
    ]
    if not rules:
        raise InputError(f"{path}: no DeviceTaintRule in this file")
    refuse_bad_taints([], [rule for rule, _ in rules], bundle.location_of)
    return [(rule, _selector(rule, extra)) for rule, extra in rules]


def _name(data: Any) -> str | None:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _take_extras(data: Any, where: Location) -> tuple[str | None, tuple[str, ...]]:
    """Remove and check ``deviceClassName`` and ``selectors[].cel.expression`` of a rule's device selector."""
    if not isinstance(data, dict) or data.get("kind") != "DeviceTaintRule":
        return None, ()
    spec = data.get("spec")
    selector = spec.get("deviceSelector") if isinstance(spec, dict) else None
    if not isinstance(selector, dict):
        return None, ()
    at = where.child("spec.deviceSelector")
    device_class = selector.pop("deviceClassName", None)
    if device_class is not None and not isinstance(device_class, str):
        raise InputError([InputProblem(at.child("deviceClassName"), "must be text")])
    expressions = []
    for i, entry in enumerate(selector.pop("selectors", None) or []):
        expression = (
            entry.get("cel", {}).get("expression")
            if isinstance(entry, dict) and isinstance(entry.get("cel"), dict)
            else None
        )
        if not isinstance(expression, str) or not expression:
            raise InputError([InputProblem(at.child(f"selectors[{i}].cel.expression"), "required: a CEL expression")])
        expressions.append(expression)
    return device_class, tuple(expressions)


def _selector(rule: Any, extra: tuple[str | None, tuple[str, ...]]) -> Any:
    from drasat.solver.report.taint_impact import RuleSelector

    names = rule.spec.device_selector
    return RuleSelector(
        driver=names.driver if names else None,
        pool=names.pool if names else None,
        device=names.device if names else None,
        device_class=extra[0],
        cel=extra[1],
        given=names is not None,
    )


def _when(impact: Any, pod: str, now: Any) -> str:
    """When the controller deletes the pod, counted from the taint's timeAdded, as seen at ``now`` ("" for a
    pod deleted as soon as the taint is added, when the rule has no timeAdded: that is now)."""
    at = impact.eviction_time(pod)
    delay = impact.delayed.get(pod)
    if not delay and impact.added == now:
        return ""
    why = f"timeAdded + {delay} s tolerationSeconds" if delay else "timeAdded, no toleration delays it"
    seconds = int((at - now).total_seconds())
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f" at {stamp} ({why}; " + (f"in {seconds} s)" if seconds > 0 else "due now)")


def _as_data(impact: Any, now: Any) -> dict[str, Any]:
    def evicted(pod: str) -> dict[str, Any]:
        at = impact.eviction_time(pod)
        return {
            "pod": pod,
            **({"afterSeconds": impact.delayed[pod]} if pod in impact.delayed else {}),
            "evictionTime": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "dueInSeconds": max(0, int((at - now).total_seconds())),
        }

    return {
        "rule": impact.rule,
        "publishedDevices": len(impact.published),
        "allocatedDevices": impact.allocated,
        "pods": len(impact.evicted),
        "namespaces": impact.namespaces,
        "devices": ["/".join(key) for key in impact.published],
        "evictedPods": [evicted(p) for p in impact.evicted] if impact.effect in ("None", "NoExecute") else [],
        "reason": impact.reason(),
        "message": impact.message(),
    }
