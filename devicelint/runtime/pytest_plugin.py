"""pytest plugin (entry point ``pytest11``): assert "no device bug" in a CPU-only CI.

- ``device_guard`` fixture: ``device_guard(model, ops=False, on_mismatch="raise")`` guards
  ``model`` until the test ends; a mismatch raises ``DeviceMismatchError`` where it happens.
- ``@pytest.mark.device_guard`` (or ``pytestmark = pytest.mark.device_guard`` for a module, or
  ``pytest --device-guard`` for every test): every nn.Module forward the test runs is guarded,
  without naming the model; ``@pytest.mark.device_guard(ops=True)`` adds the op-level checks.

torch is imported only when a guard is actually used, so the plugin costs nothing elsewhere.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("devicelint")
    group.addoption(
        "--device-guard",
        action="store_true",
        default=False,
        help="Run every test's nn.Module forwards under devicelint.guard: a device mismatch fails the test.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "device_guard(ops=False): run this test's nn.Module forwards under devicelint.guard; "
        "a device mismatch fails the test",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("device_guard")
    if marker is None and not item.config.getoption("--device-guard"):
        yield
        return
    from devicelint.runtime.autoguard import GuardEveryModel

    options = dict(marker.kwargs) if marker is not None else {}
    with GuardEveryModel(ops=bool(options.get("ops", False))):
        yield


@pytest.fixture
def device_guard() -> Iterator[Callable[..., Any]]:
    """A function that guards a model for the rest of the test and returns the guard."""
    installed: list[Any] = []

    def install(model: Any, *, ops: bool = False, on_mismatch: str = "raise") -> Any:
        from devicelint.runtime.guard import guard

        active = guard(model, ops=ops, on_mismatch=on_mismatch)
        active.__enter__()
        installed.append(active)
        return active

    yield install
    for active in installed:
        active.remove()
