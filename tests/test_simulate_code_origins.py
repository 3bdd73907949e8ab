"""Functions pickled by value keep their source file across the simulation process boundary
(cloudpickle >= 3.1.3 renames it ``<dynamic-code>``)."""

from __future__ import annotations

import pickle

import pytest

from devicelint.runtime.simulate.code_origins import DYNAMIC_CODE, code_files, restore_code_files

cloudpickle = pytest.importorskip("cloudpickle")


class Scaler:
    def __init__(self, factor):
        self.factor = factor
        self.post = lambda x: x + 1

    def __call__(self, x):
        return [self.factor * item for item in x]


def _local_payload():
    offset = 3

    def loss_fn(output, target):
        return sum(output) - target + offset

    return {"model": Scaler(2), "loss_fn": loss_fn, "inputs": (1, 2.0, "x")}


def _round_trip(payload):
    # classes and functions of this test module are pickled by value, as a script's would be
    cloudpickle.register_pickle_by_value(__import__(__name__))
    try:
        return pickle.loads(cloudpickle.dumps(payload))
    finally:
        cloudpickle.unregister_pickle_by_value(__import__(__name__))


def test_code_files_names_this_file_for_each_reachable_function_and_nested_code():
    files = code_files(_local_payload())
    names = {name for name, _ in files}
    assert {"loss_fn", "__call__", "__init__", "<lambda>"} <= names
    assert set(files.values()) == {__file__}


def test_restored_functions_report_their_real_file():
    payload = _local_payload()
    files = code_files(payload)
    copy = _round_trip(payload)
    restore_code_files(copy, files)
    assert copy["loss_fn"].__code__.co_filename == __file__
    assert type(copy["model"]).__call__.__code__.co_filename == __file__
    assert copy["model"].post.__code__.co_filename == __file__
    # the comprehension inside __call__ (a nested code object before Python 3.12) too
    nested = [c for c in type(copy["model"]).__call__.__code__.co_consts if hasattr(c, "co_filename")]
    assert all(c.co_filename == __file__ for c in nested)
    assert copy["loss_fn"]([1, 2], 1) == 5  # still runs, with its closure


def test_nothing_changes_without_recorded_files_or_renamed_code():
    payload = _local_payload()
    before = payload["loss_fn"].__code__
    restore_code_files(payload, {})
    restore_code_files(payload, {("loss_fn", before.co_firstlineno): "/elsewhere.py"})
    assert payload["loss_fn"].__code__ is before  # its file was never renamed: left as it is
    assert before.co_filename != DYNAMIC_CODE
