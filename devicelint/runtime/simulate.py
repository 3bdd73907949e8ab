"""``devicelint.simulate``: one forward on fake tensors that claim to live on a GPU, on a machine
that has none, under the guard with op-level checks.

Facts this builds on (shared/RUNTIME.md): inside ``FakeTensorMode`` tensors can claim
``cuda:0``; a real module runs there forward-only under ``no_grad``; a fake-CUDA op that needs
autograd can abort the interpreter, so the simulation runs in a subprocess and a crash becomes a
``SimulationError``, not a dead caller. On a stock CPU-only build some operations cannot run on
fake CUDA ("PyTorch is not linked with support for cuda devices": ``.cuda()``, ``.to("cuda")``
without an index, copies, boolean indexing, train-mode BatchNorm); the simulation process
therefore registers a fake CUDA device guard, a few lines of C++ built with torch's
``load_inline`` on first use (g++ and ninja; torch caches the build). Where it cannot be built,
stock fake tensors are used and what could not be simulated is named in ``result.unsupported``.

Each mismatch is recorded and then repaired (the odd tensor moved to the device it should have
been on), so one forward reports every mismatch, not just the first.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
import warnings
from typing import Any, Optional

from devicelint.findings import Finding
from devicelint.runtime.errors import SimulationError

_UNSUPPORTED = "not linked with support for cuda"
_TIMEOUT_SECONDS = 600


class SimulationResult(list):  # type: ignore[type-arg]
    """The findings (a list of :class:`devicelint.Finding`), plus ``unsupported``: what could not
    be simulated on this build, in words."""

    def __init__(self, findings: Any = (), unsupported: Any = ()) -> None:
        super().__init__(findings)
        self.unsupported: list[str] = list(unsupported)


def simulate(model: Any, *example_inputs: Any, device: str = "cuda:0", **example_kwargs: Any) -> SimulationResult:
    """Run one forward of ``model(*example_inputs, **example_kwargs)`` with the model and the
    inputs on fake ``device`` tensors, in a subprocess, and return what the guard found.

    The model and inputs reach the subprocess by pickling, so the model's class must be
    importable (defined in a module, not inside a function). Never raises for a device bug;
    raises :class:`SimulationError` when the simulation itself cannot run.
    """
    defined_in = getattr(type(model), "__module__", None)
    if defined_in == "__main__":
        raise SimulationError(
            f"{type(model).__name__} is defined in the __main__ script, which the simulation process cannot "
            "import; define it in a module, or use `devicelint simulate MODULE:FACTORY`"
        )
    return _run_in_subprocess(("objects", model, example_inputs, example_kwargs), device)


def simulate_factory(spec: str, device: str = "cuda:0") -> SimulationResult:
    """Simulate the model that ``MODULE:FACTORY`` returns: the factory gives ``(model, inputs)``
    or ``(model, inputs, kwargs)``; it is imported and called in the subprocess."""
    module_name, _, factory_name = spec.partition(":")
    if not module_name or not factory_name:
        raise SimulationError(f"expected MODULE:FACTORY, got {spec!r}")
    return _run_in_subprocess(("factory", module_name, factory_name), device)


def _run_in_subprocess(payload: tuple[Any, ...], device: str) -> SimulationResult:
    """Pickle the payload to a file, run ``python -m devicelint.runtime.simulate`` on it, read
    the answer back. A fresh interpreter (not multiprocessing's spawn, which re-runs the
    caller's ``__main__``) so that a script calling ``simulate`` needs no ``__main__`` guard."""
    with tempfile.TemporaryDirectory(prefix="devicelint-simulate-") as folder:
        request = os.path.join(folder, "request.pickle")
        answer_path = os.path.join(folder, "answer.pickle")
        try:
            with open(request, "wb") as stream:
                # the import path first: the child sets it before it unpickles the model
                pickle.dump((list(sys.path), device), stream)
                pickle.dump(payload, stream)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise SimulationError(
                f"the model and inputs cannot be pickled for the simulation process ({error}); "
                "define the model's class at module level, or use a MODULE:FACTORY"
            ) from None
        try:
            completed = subprocess.run(
                [sys.executable, "-m", "devicelint.runtime.simulate", request, answer_path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SimulationError(f"the simulation did not finish within {_TIMEOUT_SECONDS} s") from None
        if not os.path.exists(answer_path):
            tail = completed.stderr.decode(errors="replace").strip().splitlines()[-5:]
            raise SimulationError(
                f"the simulation process died without an answer (exit code {completed.returncode})"
                + (": " + " / ".join(tail) if tail else "")
            )
        with open(answer_path, "rb") as stream:
            answer = pickle.load(stream)
    status, *rest = answer
    if status == "error":
        raise SimulationError(rest[0])
    findings, unsupported = rest
    for note in unsupported:
        warnings.warn(f"devicelint.simulate: {note}", stacklevel=3)
    return SimulationResult(findings, unsupported)


_FAKE_GUARD_SOURCE = r"""
#include <torch/extension.h>
#include <c10/core/impl/FakeGuardImpl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

// A CPU-only build has no device guard for CUDA, so fake tensors on "cuda" cannot run
// .cuda(), copies, indexing or train-mode BatchNorm. The fake guard only counts devices and
// streams; it is registered when this library loads, in the simulation process only.
namespace {
c10::impl::DeviceGuardImplRegistrar devicelint_fake_cuda_guard(
    c10::DeviceType::CUDA, new c10::impl::FakeGuardImpl<c10::DeviceType::CUDA>());
}

bool fake_cuda_guard_registered() { return true; }
"""


def install_fake_cuda_guard() -> Optional[str]:
    """Register a fake CUDA device guard in this process, building it on first use (torch caches
    the build under its extensions folder). None on success, else why not."""
    import torch

    if os.environ.get("DEVICELINT_FAKE_CUDA_GUARD", "1") == "0":
        return "the fake CUDA device guard is turned off (DEVICELINT_FAKE_CUDA_GUARD=0)"
    if torch.backends.cuda.is_built():
        return None  # a CUDA build has the real guard
    try:
        import ninja  # noqa: F401 - torch's extension builder needs the ninja executable

        os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ.get("PATH", "")
    except ImportError:
        return "the fake CUDA device guard needs ninja (pip install 'devicelint[simulate]')"
    try:
        from torch.utils.cpp_extension import load_inline

        load_inline(
            "devicelint_fake_cuda_guard", cpp_sources=[_FAKE_GUARD_SOURCE], functions=["fake_cuda_guard_registered"]
        )
    except Exception as error:  # noqa: BLE001 - no compiler, no headers: fall back, and say so
        return f"the fake CUDA device guard could not be built ({type(error).__name__}: {_first_line(str(error))})"
    return None


def _child(request: str, answer_path: str) -> None:
    try:
        with open(request, "rb") as stream:
            path, device = pickle.load(stream)
            sys.path[:] = path
            payload = pickle.load(stream)
        guard_problem = install_fake_cuda_guard()
        model, inputs, kwargs = _load(payload)
        findings, unsupported = run_simulation(model, inputs, kwargs, device)
        if guard_problem is not None and unsupported:
            unsupported.insert(0, f"{guard_problem}; stock fake tensors were used")
        answer: tuple[Any, ...] = ("ok", findings, unsupported)
    except SimulationError as error:
        answer = ("error", str(error))
    except Exception as error:  # noqa: BLE001 - everything the user's code raises becomes a reason
        answer = ("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    with open(answer_path + ".part", "wb") as stream:
        pickle.dump(answer, stream)
    os.replace(answer_path + ".part", answer_path)


def _load(payload: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    if payload[0] == "objects":
        _, model, inputs, kwargs = payload
        return model, tuple(inputs), dict(kwargs)
    _, module_name, factory_name = payload
    try:
        factory = getattr(importlib.import_module(module_name), factory_name)
    except (ImportError, AttributeError) as error:
        raise SimulationError(f"cannot import {module_name}:{factory_name}: {error}") from None
    made = factory()
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise SimulationError(f"{module_name}:{factory_name}() must return (model, inputs) or (model, inputs, kwargs)")
    model, inputs = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    return model, tuple(inputs), dict(kwargs)


def run_simulation(model: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any], device: str) -> tuple[list[Finding], list[str]]:
    """The simulation itself, in this process: use :func:`simulate` unless already isolated."""
    import torch
    from torch import nn
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._pytree import tree_map

    from devicelint.runtime.guard import guard

    if not isinstance(model, nn.Module):
        raise SimulationError(f"the model must be an nn.Module, not {type(model).__name__}")
    unsupported: list[str] = []
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
        try:
            model.to(device)
            placed = tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, (inputs, kwargs))
        except RuntimeError as error:
            raise SimulationError(f"cannot place the model and inputs on fake {device}: {error}") from None
        args, keywords = placed
        checker = guard(model, on_mismatch="collect", ops=True)
        checker.repair = True
        for attempt in ("as given", "eval mode"):
            with checker:
                try:
                    model(*args, **keywords)
                    break
                except RuntimeError as error:
                    message = str(error)
                    if _UNSUPPORTED in message and attempt == "as given" and model.training:
                        unsupported.append(f"{_first_line(message)} (in train mode; simulated again in eval mode)")
                        model.eval()
                        continue
                    if _UNSUPPORTED in message:
                        unsupported.append(f"the forward stopped at an operation fake CUDA cannot run here: {_first_line(message)}")
                    elif not checker.findings:
                        unsupported.append(f"the forward stopped: {type(error).__name__}: {_first_line(message)}")
                    break
    return list(checker.findings), unsupported


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
