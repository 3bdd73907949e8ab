"""pytest plugin (entry point ``pytest11``): assert "no device bug" in a CPU-only CI.

- ``device_guard`` fixture: ``device_guard(model, ops=False, on_mismatch="raise")`` guards
  ``model`` until the test ends; a mismatch raises ``DeviceMismatchError`` where it happens.
- ``@pytest.mark.device_guard`` (or ``pytestmark = pytest.mark.device_guard`` for a module, or
  ``pytest --device-guard`` for every test): every nn.Module forward the test runs is guarded,
  the first one included, without naming the model. The marker takes ``ops=True`` (op-level
  checks) and ``on_mismatch`` ("raise", "warn", or "collect": the test runs on and fails at its
  end listing every mismatch); anything else is a usage error, caught when tests are collected.

torch is imported only when a guard is actually used, so the plugin costs nothing elsewhere.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

MARKER = "device_guard"
# the guard's own list (devicelint.runtime.guard.MODES) lives next to torch; this one is checked
# at collection, where torch need not be imported
_MODES = ("raise", "warn", "collect")
_OPTIONS_KEY = pytest.StashKey[dict]()


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
        f"{MARKER}(ops=False, on_mismatch='raise'): run this test's nn.Module forwards under devicelint.guard; "
        "a device mismatch fails the test",
    )


def _marker_options(item: pytest.Item) -> dict[str, Any]:
    """The guard options the item's closest ``device_guard`` marker asks for; a pytest usage
    error naming the test for anything the marker does not take."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return {}
    where = f"@pytest.mark.{MARKER} on {item.nodeid}"
    if marker.args:
        raise pytest.UsageError(
            f"{where}: takes keyword arguments only (ops=..., on_mismatch=...), got {', '.join(map(repr, marker.args))}"
        )
    unknown = sorted(set(marker.kwargs) - {"ops", "on_mismatch"})
    if unknown:
        raise pytest.UsageError(
            f"{where}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            "allowed: ops, on_mismatch"
        )
    options = dict(marker.kwargs)
    if not isinstance(options.get("ops", False), bool):
        raise pytest.UsageError(f"{where}: ops must be True or False, not {options['ops']!r}")
    if options.get("on_mismatch", "raise") not in _MODES:
        raise pytest.UsageError(
            f"{where}: on_mismatch must be one of {', '.join(map(repr, _MODES))}, not {options['on_mismatch']!r}"
        )
    return options


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    guard_every_test = config.getoption("--device-guard")
    for item in items:
        if guard_every_test or item.get_closest_marker(MARKER) is not None:
            item.stash[_OPTIONS_KEY] = _marker_options(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[Any]:
    options = item.stash.get(_OPTIONS_KEY, None)
    if options is None:
        yield
        return
    from devicelint.runtime.autoguard import GuardEveryModel

    with GuardEveryModel(**options) as guarded:
        outcome = yield
    findings = guarded.findings
    if options.get("on_mismatch") != "collect" or not findings:
        return
    listing = "\n".join(f"{finding.path}:{finding.line}: {finding.message}" for finding in findings)
    if outcome.excinfo is None:
        summary = f"devicelint.guard found {len(findings)} device mismatch(es):\n{listing}"
        outcome.force_exception(pytest.fail.Exception(summary, pytrace=False))
    else:
        item.add_report_section("call", "devicelint", listing)


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
