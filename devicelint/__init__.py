"""devicelint: find PyTorch device-placement bugs before they cost a GPU run.

The static linter never imports torch; the runtime names below import it only when used.
"""

from __future__ import annotations

from typing import Any

from devicelint.findings import Finding
from devicelint.runtime.errors import (
    DeviceMismatchError,
    DeviceMismatchWarning,
    SimulationError,
    SimulationIncompleteWarning,
)

__version__ = "0.1.0"

__all__ = [
    "DeviceMismatchError",
    "DeviceMismatchWarning",
    "Finding",
    "Simulation",
    "SimulationError",
    "SimulationIncompleteWarning",
    "SimulationResult",
    "guard",
    "keep_on_cpu",
    "simulate",
]

_LAZY = {
    "guard": "devicelint.runtime.guard",
    "simulate": "devicelint.runtime.simulate",
    "Simulation": "devicelint.runtime.simulate",
    "SimulationResult": "devicelint.runtime.simulate",
    "keep_on_cpu": "devicelint.runtime.simulate",
}


def __getattr__(name: str) -> Any:
    # guard and simulate need torch; loading them on first use keeps ``import devicelint`` light
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'devicelint' has no attribute {name!r}")
