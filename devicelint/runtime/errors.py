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


class SimulationIncompleteWarning(UserWarning):
    """``devicelint.simulate`` returned a result with ``complete=False``: the run stopped before
    its end, so what came after was not checked. Turn it into an error in a test suite with
    ``-W error::devicelint.SimulationIncompleteWarning``."""


# users meet these as devicelint.DeviceMismatchError etc.; tracebacks should say so
for _public in (DeviceMismatchError, DeviceMismatchWarning, SimulationError, SimulationIncompleteWarning):
    _public.__module__ = "devicelint"
