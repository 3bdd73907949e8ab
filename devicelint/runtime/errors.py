"""Exceptions and warnings of the runtime half. Importing them never imports torch."""

from __future__ import annotations

from typing import Optional

from devicelint.findings import Finding


class DeviceMismatchError(RuntimeError):
    """Raised by ``devicelint.guard(..., on_mismatch="raise")`` at the first mismatch; the
    finding it describes is ``error.finding``."""

    def __init__(self, message: str, finding: Optional[Finding] = None) -> None:
        super().__init__(message)
        self.finding = finding


class DeviceMismatchWarning(UserWarning):
    """Emitted once per distinct mismatch by ``devicelint.guard(..., on_mismatch="warn")``."""


class SimulationError(RuntimeError):
    """``devicelint.simulate`` could not run the simulation itself (not a device bug)."""


# users meet these as devicelint.DeviceMismatchError etc.; tracebacks should say so
for _public in (DeviceMismatchError, DeviceMismatchWarning, SimulationError):
    _public.__module__ = "devicelint"
