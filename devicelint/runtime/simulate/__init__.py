"""``devicelint.simulate``: a forward (or a whole training step) on fake tensors that claim to
live on a GPU, on a machine that has none, under the guard with op-level checks.

Facts this builds on (shared/RUNTIME.md, checked again on torch 2.13): inside
``FakeTensorMode`` tensors can claim ``cuda:N``; a fake-CUDA operation PyTorch cannot handle
can take the interpreter down, so the simulation runs in a process of its own and a crash
becomes a :class:`SimulationError`, not a dead caller. That process loads a fake CUDA shim
first (``fake_cuda.py``: a device guard and CUDA hooks, built once per environment), which lets
fake CUDA tensors move, copy, index, run train-mode BatchNorm and go through autograd and an
optimizer step. Where the shim cannot be built, stock fake tensors are used and what could not
be simulated is named in ``result.unsupported``.

Each mismatch is recorded and then repaired (the odd tensor moved where it should have been),
so one run reports every mismatch, not just the first. A run that stops before its end says so:
``result.complete`` is False, with the stage, the operation, the user's line and the reason.

The model, inputs and optimizer reach the simulation process pickled with cloudpickle, which
pickles classes of the ``__main__`` script or a notebook by value; without cloudpickle, plain
pickle, which needs the classes importable. A factory (a function that builds them) is called
in the simulation process itself, on the simulated GPU: its own ``.to("cuda:1")`` calls take
effect, which is how model-parallel code is simulated.

This module imports no torch: the parent process needs none beyond what the caller has.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import subprocess
import sys
import tempfile
import warnings
from typing import Any, Callable, Optional

from devicelint.runtime.errors import SimulationError, SimulationIncompleteWarning
from devicelint.runtime.simulate.code_origins import code_files

__all__ = ["KeepOnCPU", "Simulation", "SimulationResult", "as_simulation", "keep_on_cpu", "simulate", "simulate_factory"]

_TIMEOUT_SECONDS = 600
# the fake CUDA guard counts 8 devices (c10's FakeGuardImpl)
_DEVICE = re.compile(r"cuda(?::([0-7]))?")
# empty lists of visible devices: CUDA and ROCm (HIP) see no GPU
_HIDE_GPUS = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}
_DEVICELINT_DIRECTORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclasses.dataclass
class Simulation:
    """What to simulate, as a factory returns it (``devicelint simulate MODULE:FACTORY``) or as
    :func:`simulate` takes it.

    ``model`` runs ``model(*inputs, **kwargs)``: ``inputs`` is the tuple (or list) of positional
    arguments, and anything else stands for the only one. With ``loss_fn`` or ``optimizer`` the whole
    training step runs: ``loss = loss_fn(output, target)`` (``loss_fn(output)`` without a
    target; without ``loss_fn``, the output itself, or its ``loss`` item or attribute, is the
    loss), ``loss.backward()``, ``optimizer.step()``.

    Placement, as a training script does it: a model whose tensors are all on the CPU is moved
    to the simulated device (``model.to(device)``), and so is every CPU tensor of ``inputs``,
    ``kwargs`` and ``target`` except those wrapped in :func:`keep_on_cpu`; a model or tensor
    already on a GPU (made so by a factory) stays where it is. ``loss_fn`` and ``optimizer`` are
    used as they are: a loss whose ``weight`` was never moved, and optimizer state loaded
    before the model moved, stay on the CPU, which is the bug to find.
    """

    model: Any
    inputs: Any = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    target: Any = None
    loss_fn: Optional[Callable[..., Any]] = None
    optimizer: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.inputs, (tuple, list)):
            self.inputs = (self.inputs,)
        self.inputs = tuple(self.inputs)
        if not isinstance(self.kwargs, dict):
            raise SimulationError(f"Simulation.kwargs must be a dict of keyword arguments, not {type(self.kwargs).__name__}")

    @property
    def training_step(self) -> bool:
        return self.loss_fn is not None or self.optimizer is not None


class KeepOnCPU:
    """A value :func:`simulate` hands to the model where it is, on the CPU (see :func:`keep_on_cpu`)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"keep_on_cpu({self.value!r})"


def keep_on_cpu(value: Any) -> KeepOnCPU:
    """Mark an input (a tensor, or a list or dict of them) that your code keeps on the CPU while
    the model is on the GPU, such as the ``lengths`` of ``pack_padded_sequence``: the
    simulation passes it as it is instead of moving it to the simulated device."""
    return KeepOnCPU(value)


class SimulationResult(list):  # type: ignore[type-arg]
    """The findings (a list of :class:`devicelint.Finding`), and how far the simulation got.

    ``complete`` is False when the run stopped before its end; then ``stage`` says where
    ("forward", "loss", "backward", "optimizer step"), ``op`` which torch operation was
    running (when one was), ``where`` the user's ``path:line``, and ``reason`` why. A
    simulation that did not finish found nothing after that point: an empty list then means
    nothing, not a clean model. ``unsupported`` lists what could not be simulated faithfully
    but did not stop the run (a train-mode forward simulated again in eval mode)."""

    def __init__(
        self,
        findings: Any = (),
        unsupported: Any = (),
        *,
        complete: bool = True,
        stage: Optional[str] = None,
        reason: Optional[str] = None,
        op: Optional[str] = None,
        where: Optional[str] = None,
    ) -> None:
        super().__init__(findings)
        self.unsupported: list[str] = list(unsupported)
        self.complete = complete
        self.stage = stage
        self.reason = reason
        self.op = op
        self.where = where

    @property
    def stopped(self) -> Optional[str]:
        """What stopped the run, in one sentence; None when it finished."""
        if self.complete:
            return None
        at = f" at `{self.op}`" if self.op else ""
        place = f" ({self.where})" if self.where else ""
        return f"it stopped in the {self.stage or 'simulation'}{at}{place}: {self.reason}"

    def __bool__(self) -> bool:
        """True when there is anything to look at: findings, or a run that did not finish - so
        ``assert not devicelint.simulate(...)`` never passes on a simulation that stopped early."""
        return bool(len(self)) or not self.complete

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"incomplete: {self.stopped}"
        return f"SimulationResult({list.__repr__(self)}, {state})"


def simulate(
    model: Any,
    *example_inputs: Any,
    target: Any = None,
    loss_fn: Optional[Callable[..., Any]] = None,
    optimizer: Any = None,
    device: str = "cuda:0",
    **example_kwargs: Any,
) -> SimulationResult:
    """Simulate ``model(*example_inputs, **example_kwargs)`` on fake ``device`` tensors, in a
    subprocess, and return what the guard found; with ``loss_fn`` or ``optimizer``, the whole
    training step (see :class:`Simulation`).

    ``target``, ``loss_fn``, ``optimizer`` and ``device`` are this function's own; a forward that
    takes an argument of one of those names gets it through ``Simulation(kwargs=...)``.

    ``model`` may also be a :class:`Simulation`, or a factory: a function (any callable that is
    not a module) taking no arguments and returning a :class:`Simulation`, ``(model, inputs)``
    or ``(model, inputs, kwargs)``, called in the simulation process on the simulated GPU.

    Never raises for a device bug. Raises :class:`SimulationError` when the simulation cannot
    start (nothing to pickle, a factory that fails); a run that stops part-way is returned with
    ``complete=False`` and a :class:`SimulationIncompleteWarning`.
    """
    _check_device(device)
    caller = _caller_location()
    step_arguments = {"target": target, "loss_fn": loss_fn, "optimizer": optimizer}
    if isinstance(model, Simulation) or _is_factory(model):
        extra = [name for name, value in step_arguments.items() if value is not None]
        if example_inputs or example_kwargs or extra:
            raise SimulationError(
                "simulate(...) of a Simulation or a factory takes no inputs, target, loss_fn or optimizer of its own; "
                "put them in the Simulation"
            )
    if _is_factory(model):
        return _run_in_subprocess(("factory", model), device, caller)
    plan = model if isinstance(model, Simulation) else Simulation(model, example_inputs, example_kwargs, **step_arguments)
    return _run_in_subprocess(("objects", plan), device, caller)


def simulate_factory(spec: str, device: str = "cuda:0") -> SimulationResult:
    """Simulate what ``MODULE:FACTORY`` returns: a :class:`Simulation` (or a dict of its fields),
    ``(model, inputs)`` or ``(model, inputs, kwargs)``. The module is imported and the factory
    called in the simulation process."""
    _check_device(device)
    module_name, _, factory_name = spec.partition(":")
    if not module_name or not factory_name:
        raise SimulationError(f"expected MODULE:FACTORY, got {spec!r}")
    return _run_in_subprocess(("import", module_name, factory_name), device, None)


def as_simulation(made: Any, label: str) -> Simulation:
    """What a factory returned, as a :class:`Simulation`; old tuple shapes still work."""
    if isinstance(made, Simulation):
        return made
    if isinstance(made, dict):
        unknown = sorted(set(made) - {field.name for field in dataclasses.fields(Simulation)})
        if unknown or "model" not in made:
            problem = f"unknown keys {', '.join(map(repr, unknown))}" if unknown else "no 'model' key"
            raise SimulationError(f"{label} returned a dict with {problem}; its keys are Simulation's fields")
        return Simulation(**made)
    if isinstance(made, tuple) and len(made) in (2, 3):
        kwargs = made[2] if len(made) == 3 else {}
        return Simulation(made[0], made[1], kwargs)
    raise SimulationError(
        f"{label} must return a devicelint.Simulation, (model, inputs) or (model, inputs, kwargs), "
        f"not {type(made).__name__}"
    )


def _check_device(device: str) -> None:
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise SimulationError(f"device must be 'cuda' or 'cuda:N' with N from 0 to 7 (the simulated GPUs), not {device!r}")


def _is_factory(candidate: Any) -> bool:
    if isinstance(candidate, Simulation) or not callable(candidate):
        return False
    if "torch" not in sys.modules:
        return True  # without torch imported, nothing can be a module
    from torch import nn

    return not isinstance(candidate, nn.Module)


def _caller_location() -> Optional[tuple[str, int]]:
    """The user's line that called simulate: where findings go that have no user line of their
    own (a torch loss whose weight was never moved, optimizer state)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_DEVICELINT_DIRECTORY + os.sep):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def _dumps(payload: tuple[Any, ...]) -> bytes:
    """cloudpickle pickles ``__main__`` and notebook classes by value (plain pickle would look
    them up by name in the simulation process, where they do not exist)."""
    try:
        import cloudpickle
    except ImportError:
        pickler: Any = pickle
        hint = "; install cloudpickle (pip install 'devicelint[simulate]') to simulate classes of a script or notebook"
    else:
        pickler = cloudpickle
        hint = ""
    try:
        return pickler.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # noqa: BLE001 - pickling raises whatever the object's __reduce__ raises
        raise SimulationError(
            f"the model, inputs and step cannot be pickled for the simulation process ({type(error).__name__}: {error}){hint}"
        ) from None


def child_environment() -> dict[str, str]:
    """The simulation process's environment: the caller's, with every real GPU hidden. Its
    fake GPUs are then the only ones PyTorch sees, as on a machine without any: a fake
    ``cuda:1`` needs no second real GPU, and nothing runs on the real ones. With a GPU
    visible, ``FakeTensorMode`` copies real tensors moved to a fake GPU onto the real device
    of the same index (constant propagation, ``init_gpu_context``), which fails for an index
    the machine lacks, and ATen picks cuDNN and fused attention kernels by asking the real
    device."""
    environment = dict(os.environ)
    environment.update(_HIDE_GPUS)
    return environment


def _run_in_subprocess(payload: tuple[Any, ...], device: str, caller: Optional[tuple[str, int]]) -> SimulationResult:
    """Pickle the request to a file, run ``python -m devicelint.runtime.simulate.child`` on it,
    read the answer back. A fresh interpreter (not multiprocessing's spawn, which re-runs the
    caller's ``__main__``) so that a script calling ``simulate`` needs no ``__main__`` guard."""
    body = _dumps(payload)
    with tempfile.TemporaryDirectory(prefix="devicelint-simulate-") as folder:
        request = os.path.join(folder, "request.pickle")
        answer_path = os.path.join(folder, "answer.pickle")
        with open(request, "wb") as stream:
            # the header first, in plain pickle: the child sets the import path and loads the
            # fake CUDA shim before it unpickles anything that imports torch
            header = {"path": list(sys.path), "device": device, "caller": caller, "code_files": code_files(payload)}
            pickle.dump(header, stream)
            stream.write(body)
        try:
            completed = subprocess.run(
                [sys.executable, "-m", "devicelint.runtime.simulate.child", request, answer_path],
                env=child_environment(),
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
    status, content = answer
    if status == "error":
        raise SimulationError(content)
    result = SimulationResult(
        content["findings"],
        content["unsupported"],
        complete=content["stop"] is None,
        **(content["stop"] or {}),
    )
    for note in result.unsupported:
        warnings.warn(f"devicelint.simulate: {note}", stacklevel=3)
    if not result.complete:
        warnings.warn(f"devicelint.simulate did not finish: {result.stopped}", SimulationIncompleteWarning, stacklevel=3)
    return result
