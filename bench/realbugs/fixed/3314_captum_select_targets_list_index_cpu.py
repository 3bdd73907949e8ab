# source: https://github.com/meta-pytorch/captum/issues/316
# fixed twin: commit 0d79f41 (PR #317, "Select targets gpu fix") takes device = output.device in _select_targets and
#             builds the list target's index with torch.tensor(target, device=device).
from inspect import signature
from typing import Any, Callable, Tuple, Union, cast

import torch
from torch import Tensor


# --- captum/attr/_utils/common.py ---
def _is_tuple(inputs) -> bool:
    return isinstance(inputs, tuple)


def _format_input(inputs):
    return inputs if isinstance(inputs, tuple) else (inputs,)


def _format_additional_forward_args(additional_forward_args: Any):
    if additional_forward_args is not None and not isinstance(additional_forward_args, tuple):
        additional_forward_args = (additional_forward_args,)
    return additional_forward_args


def _format_attributions(is_inputs_tuple: bool, attributions: Tuple[Tensor, ...]):
    return attributions if is_inputs_tuple else attributions[0]


def _verify_select_column(output: Tensor, target: Union[int, Tuple[int, ...]]) -> Tensor:
    target = cast(Tuple[int, ...], (target,) if isinstance(target, int) else target)
    assert len(target) <= len(output.shape) - 1, "Cannot choose target column with output shape %r." % (output.shape,)
    return output[(slice(None), *target)]


def _select_targets(output: Tensor, target) -> Tensor:
    if target is None:
        return output

    num_examples = output.shape[0]
    dims = len(output.shape)
    device = output.device
    if isinstance(target, (int, tuple)):
        return _verify_select_column(output, target)
    elif isinstance(target, torch.Tensor):
        if torch.numel(target) == 1 and isinstance(target.item(), int):
            return _verify_select_column(output, cast(int, target.item()))
        elif len(target.shape) == 1 and torch.numel(target) == num_examples:
            assert dims == 2, "Output must be 2D to select tensor of targets."
            return torch.gather(output, 1, target.reshape(len(output), 1))
        else:
            raise AssertionError("Tensor target dimension %r is not valid. %r" % (target.shape, output.shape))
    elif isinstance(target, list):
        assert len(target) == num_examples, "Target list length does not match output!"
        if isinstance(target[0], int):
            assert dims == 2, "Output must be 2D to select tensor of targets."
            return torch.gather(
                output, 1, torch.tensor(target, device=device).reshape(len(output), 1)
            )
        elif isinstance(target[0], tuple):
            return torch.stack([output[(i,) + cast(Tuple, targ_elem)] for i, targ_elem in enumerate(target)])
        else:
            raise AssertionError("Target element type in list is not valid.")
    else:
        raise AssertionError("Target type %r is not valid." % target)


def _run_forward(forward_func: Callable, inputs, target=None, additional_forward_args: Any = None) -> Tensor:
    forward_func_args = signature(forward_func).parameters
    if len(forward_func_args) == 0:
        output = forward_func()
        return output if target is None else _select_targets(output, target)
    inputs = _format_input(inputs)
    additional_forward_args = _format_additional_forward_args(additional_forward_args)
    output = forward_func(*(*inputs, *additional_forward_args) if additional_forward_args is not None else inputs)
    return _select_targets(output, target)


# --- captum/attr/_utils/gradient.py ---
def apply_gradient_requirements(inputs: Tuple[Tensor, ...]):
    grad_required = []
    for input in inputs:
        grad_required.append(input.requires_grad)
        if not input.requires_grad:
            input.requires_grad_()
    return grad_required


def undo_gradient_requirements(inputs: Tuple[Tensor, ...], grad_required):
    for index, input in enumerate(inputs):
        if not grad_required[index]:
            input.requires_grad_(False)


def compute_gradients(forward_fn: Callable, inputs, target_ind=None, additional_forward_args: Any = None):
    with torch.autograd.set_grad_enabled(True):
        outputs = _run_forward(forward_fn, inputs, target_ind, additional_forward_args)
        assert outputs[0].numel() == 1, "Target not provided when necessary"
        grads = torch.autograd.grad(torch.unbind(outputs), inputs)
    return grads


# --- captum/attr/_core/saliency.py ---
class Saliency:
    def __init__(self, forward_func: Callable) -> None:
        self.forward_func = forward_func
        self.gradient_func = compute_gradients

    def attribute(self, inputs, target=None, abs: bool = True, additional_forward_args: Any = None):
        is_inputs_tuple = _is_tuple(inputs)
        inputs = _format_input(inputs)
        gradient_mask = apply_gradient_requirements(inputs)
        gradients = self.gradient_func(self.forward_func, inputs, target, additional_forward_args)
        if abs:
            attributions = tuple(torch.abs(gradient) for gradient in gradients)
        else:
            attributions = gradients
        undo_gradient_requirements(inputs, gradient_mask)
        return _format_attributions(is_inputs_tuple, attributions)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
    inputs = torch.randn(4, 8, device=device)
    saliency = Saliency(net)
    attribution = saliency.attribute(inputs, target=[0, 2, 1, 0])
    print(attribution.shape)
