"""What the simulation process adds to PyTorch's fake tensors so that everyday models run, and
how it learns which operation a stopped run was in.

Found on torch 2.13 (CPU build, fake CUDA shim loaded); each fix is as narrow as the cause:

- ``nn.GRU`` on CUDA runs ``aten::_thnn_fused_gru_cell`` (ATen picks the fused cell for any
  CUDA input; cuDNN is not in a CPU build, so its path is never taken), which has no meta
  kernel, so fake tensors cannot run it: :func:`register_meta_kernels` gives it and its
  backward one, with the shapes of ATen's CUDA kernels (``hy`` like ``hx``, a workspace of 5
  hidden widths). ``nn.LSTM``'s fused cell has PyTorch's own.
- ``pack_padded_sequence`` ends in ``aten::_pack_padded_sequence``, whose output size is the sum
  of the lengths: PyTorch's fake kernel refuses it (``DynamicOutputShapeException``), and its
  ``batch_sizes`` must be a real CPU tensor, because the packed recurrent kernels and
  ``pad_packed_sequence`` read its values in C++. :class:`SimulatedRun` packs and pads in
  Python: the data on the fake device, ``batch_sizes`` (and the lengths ``pad_packed_sequence``
  returns) real on the CPU. Lengths that are real CPU tensors give the real batch sizes; lengths
  computed from fake tensors have no values, and every sequence is taken to be full length,
  which keeps every shape consistent (devices, not values, are what is checked).
- For the same reason work on real CPU tensors stays real: an operation whose tensors are all
  real and that names no GPU runs outside the fake mode, and so do ``torch.tensor`` and
  ``torch.as_tensor`` of Python values (the values of host-side lengths, sizes and indices
  survive, ``pack_sequence``'s lengths included), and a real 0-dim integer tensor handed to a
  fake operation (a size read from ``batch_sizes[0]``) is passed as the number it holds.
- ``nn.Transformer`` and ``nn.TransformerEncoder`` read values of their masks in two places,
  and fake tensors have none: before choosing the fast path (eval mode, no grad, a padding
  mask) ``TransformerEncoder`` asks ``_nested_tensor_from_mask_left_aligned``, which has no fake
  kernel; and ``_detect_is_causal_mask`` compares a ``tgt_mask``/``mask`` with a causal one,
  only to hint a faster kernel. :func:`transformers_without_mask_values` turns the fast path off
  (``torch.backends.mha.set_fastpath_enabled(False)``; it is never taken while a
  ``TorchFunctionMode`` is active anyway) and takes every mask as given, not detected as causal
  (an ``is_causal=`` the code passes is kept). The devices are the same either way.
- ``pin_memory()`` needs a CUDA runtime; in the simulation it returns the CPU tensor itself.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional
from unittest import mock

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves, tree_map

from devicelint.runtime.ops import op_label

# ATen's GRU_WORKSPACE_MULTIPLIER: the fused cell keeps 5 hidden widths per row for backward
_GRU_WORKSPACE_WIDTHS = 5
# operations that need a GPU or its runtime whatever their arguments
_DEVICE_OPERATIONS = frozenset({"cuda", "pin_memory"})
# factories of tensors from Python values (lengths, indices): host data, made for real
_FROM_PYTHON_DATA = frozenset({"tensor", "as_tensor"})


def register_meta_kernels() -> torch.library.Library:
    """Meta kernels for the fused GRU cell and its backward; the registration lasts as long as
    the returned library object."""
    library = torch.library.Library("aten", "IMPL")

    def fused_gru_cell(
        input_gates: torch.Tensor,
        hidden_gates: torch.Tensor,
        hx: torch.Tensor,
        input_bias: Optional[torch.Tensor] = None,
        hidden_bias: Optional[torch.Tensor] = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        workspace = hx.new_empty((hx.size(0), hx.size(1) * _GRU_WORKSPACE_WIDTHS))
        return hx.new_empty(hx.shape), workspace

    def fused_gru_cell_backward(grad_hy: torch.Tensor, workspace: torch.Tensor, has_bias: bool) -> tuple[Any, ...]:
        gates = (workspace.size(1) // _GRU_WORKSPACE_WIDTHS) * 3
        grad_input_gates = workspace.new_empty((workspace.size(0), gates))
        grad_hidden_gates = workspace.new_empty((workspace.size(0), gates))
        grad_hx = grad_hy.new_empty(grad_hy.shape)
        if not has_bias:
            return grad_input_gates, grad_hidden_gates, grad_hx, None, None
        return grad_input_gates, grad_hidden_gates, grad_hx, workspace.new_empty((gates,)), workspace.new_empty((gates,))

    library.impl("_thnn_fused_gru_cell", fused_gru_cell, "Meta")
    library.impl("_thnn_fused_gru_cell_backward", fused_gru_cell_backward, "Meta")
    return library


def _causal_hint_only(mask: Optional[torch.Tensor], is_causal: Optional[bool] = None, size: Optional[int] = None) -> bool:
    """``_detect_is_causal_mask`` without reading the mask's values: the hint, or False."""
    return is_causal is True


@contextlib.contextmanager
def transformers_without_mask_values() -> Iterator[None]:
    """While active, nn.Transformer's layers never read values of their masks (see above)."""
    from torch.nn.modules import transformer

    was_enabled = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with mock.patch.object(transformer, "_detect_is_causal_mask", _causal_hint_only):
            yield
    finally:
        torch.backends.mha.set_fastpath_enabled(was_enabled)


def is_real(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor)


def names_a_gpu(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the call asks for a device other than the CPU: ``.cuda()``, ``.to("cuda:1")``,
    ``.to(gpu_tensor)``, ``device=`` of a factory."""
    if name in _DEVICE_OPERATIONS:
        return True
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "cpu":
        return True
    if name == "to":
        for value in args[1:]:
            if isinstance(value, (str, torch.device)) and torch.device(value).type != "cpu":
                return True
            if isinstance(value, int) and not isinstance(value, bool):
                return True  # a device index
            if isinstance(value, torch.Tensor) and value.device.type != "cpu":
                return True
    return False


def _as_number(value: Any) -> Any:
    """A real 0-dim integer tensor as the int it holds (a fake operation would have to read it,
    which fake tensors cannot)."""
    if is_real(value) and value.dim() == 0 and not value.is_floating_point() and not value.is_complex() and value.dtype != torch.bool:
        with unset_fake_temporarily():
            return int(value)
    return value


class SimulatedRun(TorchFunctionMode):
    """Active while the simulated steps run (under ``FakeTensorMode``): packs and pads sequences,
    keeps host-side work real, and remembers the operation an exception came out of."""

    def __init__(self) -> None:
        super().__init__()
        self._failure: Optional[tuple[BaseException, str]] = None

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        try:
            return self._run(func, args, kwargs)
        except BaseException as error:
            # the innermost torch call an exception leaves is the one that raised it
            if self._failure is None or self._failure[0] is not error:
                self._failure = (error, op_label(func))
            raise

    def failed_op(self, error: BaseException) -> Optional[str]:
        """The torch operation ``error`` (or an exception it was raised from) came out of."""
        seen: set[int] = set()
        current: Optional[BaseException] = error
        while current is not None and id(current) not in seen:
            if self._failure is not None and self._failure[0] is current:
                return self._failure[1]
            seen.add(id(current))
            current = current.__cause__ or current.__context__
        return None

    def _run(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = getattr(func, "__name__", "")
        if name == "_pack_padded_sequence":
            return _pack_padded_sequence(*args, **kwargs)
        if name == "_pad_packed_sequence":
            return _pad_packed_sequence(*args, **kwargs)
        if name == "pin_memory" and args and isinstance(args[0], torch.Tensor) and args[0].device.type == "cpu":
            return args[0]  # pinned memory needs the CUDA runtime; it is a CPU tensor all the same
        tensors = [value for value in tree_leaves((args, kwargs)) if isinstance(value, torch.Tensor)]
        host_work = all(is_real(tensor) for tensor in tensors) if tensors else name in _FROM_PYTHON_DATA
        if host_work and not names_a_gpu(name, args, kwargs):
            with unset_fake_temporarily():
                return func(*args, **kwargs)
        if any(is_real(tensor) and tensor.dim() == 0 for tensor in tensors):
            args, kwargs = tree_map(_as_number, (args, kwargs))
        return func(*args, **kwargs)


def _pack_padded_sequence(data: torch.Tensor, lengths: torch.Tensor, batch_first: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if lengths.device.type != "cpu":
        # PyTorch's own check and words: the lengths must stay on the CPU
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got a tensor on {lengths.device}")
    steps = data.transpose(0, 1) if batch_first else data
    length, batch = steps.shape[0], steps.shape[1]
    with unset_fake_temporarily():
        known = lengths if is_real(lengths) else torch.full((batch,), length, dtype=torch.int64)
        # the real kernel on a stand-in with the same layout: PyTorch's checks of the lengths
        # (sorted, positive, not longer than the input) and its batch sizes, real on the CPU
        _, batch_sizes = torch._VF._pack_padded_sequence(torch.zeros(length, batch), known, False)
    packed = torch.cat([steps[step, :size] for step, size in enumerate(batch_sizes.tolist())])
    return packed, batch_sizes


def _pad_packed_sequence(
    data: torch.Tensor, batch_sizes: torch.Tensor, batch_first: bool, padding_value: float, total_length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    with unset_fake_temporarily():
        sizes = [int(size) for size in batch_sizes.tolist()]
    widest = sizes[0]
    feature = tuple(data.shape[1:])
    rows = []
    offset = 0
    for size in sizes:
        row = data[offset:offset + size]
        offset += size
        if size < widest:
            row = torch.cat([row, row.new_full((widest - size, *feature), padding_value)])
        rows.append(row)
    rows.extend(data.new_full((widest, *feature), padding_value) for _ in range(total_length - len(sizes)))
    padded = torch.stack(rows)
    with unset_fake_temporarily():
        lengths = torch.tensor([sum(1 for size in sizes if size > index) for index in range(widest)], dtype=torch.int64)
    return (padded.transpose(0, 1) if batch_first else padded), lengths
