"""Phrases shared by rule messages: where a value lives and how it got there, with its line."""

from __future__ import annotations

import libcst as cst

from devicelint.analysis.values import Provenance, Value


def where(value: Value, ctx) -> str:  # type: ignore[no-untyped-def]
    """``on the CPU (created by `torch.ones` at line 4)``, ``on `device` (moved there at line 3)``."""
    assert value.device is not None
    place = _where(value, ctx)
    wrapping = value.device.one_for_all_replicas
    if wrapping is None:
        return place
    replicas = (
        f"under the `DataParallel` built at line {ctx.line(wrapping)} that is one GPU for every replica, "
        "while each replica's inputs and weights sit on its own GPU"
    )
    return f"{place[:-1]}; {replicas})" if place.endswith(")") else f"{place} ({replicas})"


def _where(value: Value, ctx) -> str:  # type: ignore[no-untyped-def]
    assert value.device is not None
    place = f"on {value.device.describe()}"
    origin = value.origin
    if origin is None or origin.provenance is Provenance.CHOSEN:
        return place
    line = ctx.line(origin.node)
    if origin.moved:
        return f"{place} (moved there at line {line})"
    if origin.provenance is Provenance.BATCH and isinstance(origin.node, cst.Param):
        return f"{place} (drawn from the DataLoader passed in as `{origin.node.name.value}`)"
    if origin.provenance is Provenance.BATCH:
        return f"{place} (drawn from the DataLoader built at line {line})"
    if origin.provenance is Provenance.DATASET:
        return f"{place} (drawn from the dataset built at line {line})"
    return f"{place} ({origin.how} at line {line})"
