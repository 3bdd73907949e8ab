"""The analysis state and what happens to it where control flow merges.

A state maps names and dotted names (``x``, ``self.fc``) to abstract Values. Branches run on
copies and meet in ``join_states``; loop heads keep what the first iteration sees
(``keep_first_iteration``) and give up on names that never settle (``widen``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.names import keyword_arg
from devicelint.analysis.values import UNKNOWN, Kind, Value, join

#: name or dotted name (``x``, ``self.fc``) -> Value
State = dict[str, Value]

#: the state key that holds the default device of factories (torch.set_default_device, with torch.device)
DEFAULT_DEVICE_KEY = "<default device>"


def replace_state(state: State, new: State) -> None:
    """Make ``state`` (which the caller holds) the state ``new``."""
    state.clear()
    state.update(new)


def join_states(first: State, second: State) -> State:
    """The state where two paths meet: each name joined (see values.join); a name one path
    leaves unbound keeps the other's value."""
    if first is second:
        return dict(first)
    result = dict(first)
    for key, value in second.items():
        existing = result.get(key)
        if existing is None:
            result[key] = value
        elif existing is not value:
            result[key] = join(existing, value)
    return result


def keep_first_iteration(entry: State, joined: State) -> State:
    """At a loop head, a host tensor made before the loop by a call without ``device=`` (a
    factory, ``.cpu()``) is what the first iteration sees, whatever later iterations rebind it
    to: keep it, so a hidden state made on the CPU and fed to the model is seen on the first step.
    So is an object whose fields hold one (``frames = Frame(torch.eye(3), ...)`` fed to a layer)."""
    for key, value in entry.items():
        if joined.get(key) is value:
            continue
        if _made_on_host_without_device(value) or any(_made_on_host_without_device(item) for _, item in value.fields or ()):
            joined[key] = value
    return joined


def _made_on_host_without_device(value: Value) -> bool:
    return (
        value.kind == Kind.TENSOR
        and value.device is not None
        and value.device.is_cpu
        and value.origin is not None
        and isinstance(value.origin.node, cst.Call)
        and keyword_arg(value.origin.node, "device") is None
    )


def none_checked_name(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """``x is None`` -> ("x", True): the body runs when x is None; ``x is not None`` -> ("x", False)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.left, cst.Name):
        return None
    target = test.comparisons[0]
    if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
        return None
    if isinstance(target.operator, cst.Is):
        return test.left.value, True
    if isinstance(target.operator, cst.IsNot):
        return test.left.value, False
    return None


def widen(before: State, after: State) -> State:
    """Give up on names that still change after the last fixpoint pass."""
    return {key: value if before.get(key) == value else UNKNOWN for key, value in after.items()}
