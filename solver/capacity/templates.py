"""Node templates for ``scale_up``: a Node with its ResourceSlices, a cost, and how many copies may be added.

A template is what a node group's new node would look like (cluster-autoscaler builds the same from a
node group's template NodeInfo). Its cost and maximum count come from the Node's annotations
(:data:`COST_ANNOTATION`, :data:`MAX_COUNT_ANNOTATION`) or from the caller (the command line's flags
win). Copies are named ``<template>-new-<i>``: the Node renamed (its ``kubernetes.io/hostname`` label
too) and each slice renamed with its pool, so that every copy's devices are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drasat.models.core import Node
from drasat.models.errors import InputError, InputProblem, Location
from drasat.models.resource import ResourceSlice

COST_ANNOTATION = "capacity.drasat.io/cost"
MAX_COUNT_ANNOTATION = "capacity.drasat.io/max-count"
MAX_COPIES = 1_000  # copies of one template at most: each is a node of the model
HOSTNAME = "kubernetes.io/hostname"

Locate = Callable[[Any], Location | None]


@dataclass(frozen=True)
class NodeTemplate:
    """A Node and its slices that may be added, at ``cost`` each, ``max_count`` copies at most."""

    node: Node
    slices: list[ResourceSlice]
    cost: Fraction
    max_count: int

    @property
    def name(self) -> str:
        return self.node.name

    def copy_name(self, i: int) -> str:
        return f"{self.name}-new-{i}"

    def copies(self, count: int) -> tuple[list[Node], list[ResourceSlice]]:
        """``count`` fresh nodes of this template, with their slices."""
        nodes, slices = [], []
        for i in range(count):
            name = self.copy_name(i)
            node = self.node.model_copy(deep=True)
            node.metadata.name = name
            if HOSTNAME in node.metadata.labels:
                node.metadata.labels[HOSTNAME] = name
            nodes.append(node)
            for s in self.slices:
                copy = s.model_copy(deep=True)
                copy.metadata.name = f"{s.name}-new-{i}"
                copy.spec.node_name = name
                copy.spec.pool.name = name if s.spec.pool.name == self.name else f"{s.spec.pool.name}-new-{i}"
                slices.append(copy)
        return nodes, slices


def node_templates(
    objects: Sequence[Any],
    locate: Locate,
    *,
    costs: Mapping[str, Fraction] | None = None,
    max_counts: Mapping[str, int] | None = None,
    max_nodes: int = 100,
) -> list[NodeTemplate]:
    """The templates among ``objects`` (each Node with the slices naming it); InputError, with the file, object
    and field, for a slice of another node, one shared by nodes, or a bad cost or count."""
    costs, max_counts = costs or {}, max_counts or {}
    nodes = [o for o in objects if isinstance(o, Node)]
    if not nodes:
        raise InputError("a node template needs a Node (and its ResourceSlices): none was given")
    names = {n.name for n in nodes}
    slices: dict[str, list[ResourceSlice]] = {n.name: [] for n in nodes}
    problems = []
    for s in (o for o in objects if isinstance(o, ResourceSlice)):
        where = locate(s) or Location(kind="ResourceSlice", name=s.name)
        if s.spec.node_name not in names:
            problems.append(
                InputProblem(
                    where.child("spec.nodeName"),
                    f"names {s.spec.node_name or 'no node'}: a template's slices must name its Node "
                    f"({', '.join(sorted(names))})",
                )
            )
        else:
            slices[s.spec.node_name].append(s)
    if problems:
        raise InputError(problems)
    unknown = [
        f"--cost {n}={_flag_value(c)}: no node template is named {n}" for n, c in costs.items() if n not in names
    ]
    unknown += [f"--max-count {n}={k}: no node template is named {n}" for n, k in max_counts.items() if n not in names]
    if unknown:
        raise InputError(f"{'; '.join(unknown)} (templates: {', '.join(sorted(names))})")
    return [_template(n, slices[n.name], locate, costs, max_counts, max_nodes) for n in nodes]


def _flag_value(value: Fraction) -> str:
    """A --cost value as the user would have typed it (2.5, not 5/2)."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def _template(
    node: Node,
    slices: list[ResourceSlice],
    locate: Locate,
    costs: Mapping[str, Fraction],
    max_counts: Mapping[str, int],
    max_nodes: int,
) -> NodeTemplate:
    where = locate(node) or Location(kind="Node", name=node.name)
    notes = node.metadata.annotations
    cost = costs.get(node.name)
    if cost is None:
        cost = _annotated(
            notes.get(COST_ANNOTATION, "1"), where.child(f"metadata.annotations[{COST_ANNOTATION}]"), Fraction
        )
    most = max_counts.get(node.name)
    if most is None:
        at = where.child(f"metadata.annotations[{MAX_COUNT_ANNOTATION}]")
        most = _annotated(notes.get(MAX_COUNT_ANNOTATION, str(max_nodes)), at, int)
    if cost < 0 or not 0 <= most <= MAX_COPIES:
        raise InputError(f"cost must be 0 or more and max-count from 0 to {MAX_COPIES}", where)
    return NodeTemplate(node, slices, Fraction(cost), min(most, max_nodes))


def _annotated(text: str, where: Location, kind: type) -> Any:
    try:
        value = kind(text)
    except (ValueError, ZeroDivisionError):
        raise InputError(
            f"Invalid value: {text!r}: must be a {'number' if kind is Fraction else 'whole number'}", where
        ) from None
    if value < 0 or (kind is int and value > MAX_COPIES):
        raise InputError(f"Invalid value: {text!r}: must be from 0 to {MAX_COPIES if kind is int else 'any'}", where)
    return value
