"""Feature gates: the allocator's switches always agree with the gates they are derived from."""

from __future__ import annotations

import copy
import pickle

import pytest

from drasat.models.errors import InputError
from drasat.solver import Features
from drasat.solver.allocation.features import DEFAULTS


def test_gates_cannot_be_changed_after_the_switches_were_derived():
    features = Features()
    with pytest.raises(TypeError):
        features.gates["DRAAdminAccess"] = False  # type: ignore[index]
    assert features["DRAAdminAccess"] is features.admin_access is True


def test_the_callers_mapping_changed_later_changes_nothing():
    given = {"DRAAdminAccess": False}
    features = Features(given)
    given["DRAAdminAccess"] = True
    assert features["DRAAdminAccess"] is features.admin_access is False


def test_features_with_some_gates_keep_kubernetes_defaults_for_the_others():
    features = Features({"DRAAdminAccess": False})
    assert features.admin_access is False and features["DRAAdminAccess"] is False
    assert features.prioritized_list is DEFAULTS["DRAPrioritizedList"] is True
    assert features == Features.from_mapping({"DRAAdminAccess": False}) != Features()
    assert dict(features.gates) == {**DEFAULTS, "DRAAdminAccess": False}


@pytest.mark.parametrize(
    "gates, message",
    [
        ({"DRAAdminAcces": False}, "unknown feature gate 'DRAAdminAcces'"),
        ({"DRAAdminAccess": "no"}, "must be true or false"),
    ],
)
def test_a_misspelt_gate_or_a_value_that_is_not_a_boolean_is_refused(gates, message):
    with pytest.raises(InputError, match=message):
        Features(gates)


@pytest.mark.parametrize("clone", [copy.copy, copy.deepcopy, lambda f: pickle.loads(pickle.dumps(f))])
def test_features_copy_and_pickle_with_their_switches(clone):
    features = Features.parse("DRAPartitionableDevices=false,DRAListTypeAttributes=true")
    again = clone(features)
    assert again == features and again.partitionable is False and again.list_attributes is True
    with pytest.raises(TypeError):
        again.gates["DRAPartitionableDevices"] = True  # type: ignore[index]


def test_with_gates_derives_the_switches_again():
    features = Features().with_gates(DRAPartitionableDevices=False)
    assert features.partitionable is False and Features().partitionable is True
