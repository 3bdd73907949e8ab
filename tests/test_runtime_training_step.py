"""devicelint.guard around a whole training step, on the CPU with meta and fake tensors: the
optimizer check at `step()` (state and gradients with their parameter, parameters the model
replaced), and what PyTorch itself does about wrong-device gradients in the backward pass, which
the README's account of what the guard sees rests on."""

from __future__ import annotations

from contextlib import contextmanager, suppress

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode

import devicelint


def step(optimizer):
    optimizer.step()


STEP_LINE = step.__code__.co_firstlineno + 1


def checkpoint(optimizer_class, **options):
    """The state dict of an optimizer that took one step on a CPU model."""
    model = nn.Linear(4, 2)
    optimizer = optimizer_class(model.parameters(), **options)
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
    return optimizer.state_dict()


@contextmanager
def moves_keep_parameter_objects():
    """`model.to()` from the CPU to CUDA keeps each Parameter object and moves its data; to meta
    it makes new objects instead. Swapping on conversion keeps them, as on a GPU machine."""
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        yield
    finally:
        torch.__future__.set_swap_module_params_on_conversion(previous)


def resumed_then_moved(optimizer_class, state=None, **options):
    """The classic resume bug, rehearsed on meta: the optimizer state is loaded while the model is
    still on the CPU, then the model moves, then a backward gives every parameter a gradient."""
    model = nn.Linear(4, 2)
    optimizer = optimizer_class(model.parameters(), **options)
    optimizer.load_state_dict(state or checkpoint(optimizer_class, **options))
    with moves_keep_parameter_objects():
        model.to("meta")
    assert optimizer.param_groups[0]["params"][0] is model.weight
    model(torch.randn(8, 4, device="meta")).sum().backward()
    return model, optimizer


def all_step_hooks(optimizer) -> int:
    return len(optimizer._optimizer_step_pre_hooks)


# ---------------------------------------------------------------------- optimizer state


def test_adam_state_left_on_the_cpu_is_reported_before_the_step_runs():
    model, optimizer = resumed_then_moved(torch.optim.Adam)
    assert {key: value.device.type for key, value in optimizer.state[model.weight].items()} == {
        "step": "cpu", "exp_avg": "cpu", "exp_avg_sq": "cpu",
    }
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model, optimizer=optimizer):
            step(optimizer)
    assert str(raised.value) == (
        "Adam.step: state['exp_avg'] of parameter `weight` is on cpu, the parameter is on meta; move the model before "
        "`optimizer.load_state_dict(...)`, which puts the state on each parameter's device at that moment, or build "
        "the optimizer after `model.to(device)`"
    )
    finding = raised.value.finding
    assert (finding.code, finding.name, finding.path, finding.line) == ("DL407", "optimizer-before-move", __file__, STEP_LINE)
    context = finding.runtime
    assert (context.module_path, context.module_class, context.tensor, context.tensor_device) == ("", "Linear", "weight", "meta")
    assert (context.argument, context.argument_device, context.op) == ("state['exp_avg']", "cpu", "Adam.step")
    assert optimizer.state[model.weight]["step"].item() == 1.0  # the step never ran
    assert all_step_hooks(optimizer) == 0
    with pytest.raises(RuntimeError, match="is not on the expected device"):  # PyTorch's own error, without the guard
        optimizer.step()


def test_sgd_would_step_silently_with_a_momentum_buffer_on_the_cpu():
    state = checkpoint(torch.optim.SGD, lr=0.1, momentum=0.9)
    model, optimizer = resumed_then_moved(torch.optim.SGD, state, lr=0.1, momentum=0.9)
    optimizer.step()  # PyTorch says nothing: the momentum buffers stay on the CPU
    assert optimizer.state[model.weight]["momentum_buffer"].device.type == "cpu"
    with devicelint.guard(model, optimizer=optimizer, on_mismatch="collect") as g:
        for _ in range(2):
            step(optimizer)
    assert [(f.runtime.tensor, f.runtime.argument) for f in g.findings] == [
        ("weight", "state['momentum_buffer']"),
        ("bias", "state['momentum_buffer']"),
    ]


@pytest.mark.parametrize(
    "optimizer_class, options",
    [
        (torch.optim.Adam, {}),
        (torch.optim.Adam, {"foreach": False}),
        (torch.optim.AdamW, {}),
        (torch.optim.RMSprop, {}),
        (torch.optim.Adagrad, {}),
        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    ],
)
def test_a_step_count_on_the_cpu_is_legal(optimizer_class, options):
    model = nn.Linear(4, 2, device="meta")
    optimizer = optimizer_class(model.parameters(), **options)
    criterion = nn.MSELoss()
    with devicelint.guard(model, criterion, optimizer=optimizer) as g:
        for _ in range(2):
            optimizer.zero_grad()
            criterion(model(torch.randn(8, 4, device="meta")), torch.zeros(8, 2, device="meta")).backward()
            optimizer.step()
    assert g.findings == []
    placed = {key: (value.device.type, value.dim()) for key, value in optimizer.state[model.weight].items()}
    assert all(device == "meta" for key, (device, _) in placed.items() if key != "step")
    if "step" in placed:
        assert placed["step"] == ("cpu", 0)  # kept on the CPU by design, and not reported


def test_a_capturable_optimizer_keeps_its_step_count_with_the_parameter():
    state = checkpoint(torch.optim.Adam)
    # as saved by a capturable optimizer on a GPU (load_state_dict takes the group's options from it)
    state["param_groups"][0]["capturable"] = True
    model, optimizer = resumed_then_moved(torch.optim.Adam, state, capturable=True)
    with devicelint.guard(model, optimizer=optimizer, on_mismatch="collect") as g:
        with pytest.raises(AssertionError, match="capturable=True"):  # then PyTorch stops the step
            step(optimizer)
    reported = {(f.runtime.tensor, f.runtime.argument) for f in g.findings}
    assert ("weight", "state['step']") in reported and ("weight", "state['exp_avg']") in reported
    [step_finding] = [f for f in g.findings if f.runtime.argument == "state['step']" and f.runtime.tensor == "weight"]
    assert "with `capturable=True` or `fused=True` the step count lives with its parameter" in step_finding.message

    model = nn.Linear(4, 2, device="meta")
    optimizer = torch.optim.Adam(model.parameters(), capturable=True)
    optimizer.load_state_dict(state)  # a capturable optimizer puts even `step` on the parameter's device
    assert optimizer.state[model.weight]["step"].device.type == "meta"
    model(torch.randn(8, 4, device="meta")).sum().backward()
    with devicelint.guard(model, optimizer=optimizer, on_mismatch="collect") as g:
        with pytest.raises(AssertionError, match="capturable=True"):  # PyTorch runs capturable Adam on GPUs only
            step(optimizer)
    assert g.findings == []


# ---------------------------------------------------------------------- gradients


def test_a_gradient_left_behind_by_a_data_move_is_reported():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(8, 4)).sum().backward()
    # `param.data = param.data.cuda()` moves a parameter without its gradient on a GPU machine. On
    # a CPU build the `.data` setter accepts no real tensor of another device; a fake tensor it
    # does accept, and the parameter's data then lives on meta while its gradient stays.
    with FakeTensorMode(allow_non_fake_inputs=True):
        moved = model.weight.detach().to("cuda:0")
    model.weight.data = moved
    assert (model.weight.device.type, model.weight.grad.device.type) == ("meta", "cpu")
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model, optimizer=optimizer):
            step(optimizer)
    assert str(raised.value).startswith(
        "SGD.step: the gradient of parameter `weight` is on cpu, the parameter is on meta; `param.data = ...` moves "
        "a parameter without its gradient"
    )
    assert raised.value.finding.code == "DL201"


def test_pytorch_keeps_gradients_with_their_parameter_everywhere_else():
    parameter = nn.Parameter(torch.randn(3, device="meta"))
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with device type 'cpu'"):
        parameter.grad = torch.randn(3)
    model = nn.Linear(4, 2)
    model(torch.randn(8, 4)).sum().backward()
    model.to("meta")  # moves the gradients along
    assert model.weight.grad.device.type == "meta"


# ---------------------------------------------------------------------- parameters the model replaced


def test_an_optimizer_built_before_its_parameters_were_replaced_is_reported():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to("meta")  # new Parameter objects: the optimizer still holds the CPU ones
    assert optimizer.param_groups[0]["params"][0] is not model.weight
    with devicelint.guard(model, optimizer=optimizer, on_mismatch="collect") as g:
        for _ in range(2):
            model(torch.randn(8, 4, device="meta")).sum().backward()
            step(optimizer)  # PyTorch says nothing: the CPU tensors have no gradient, the step skips them
    assert [f.message for f in g.findings] == [
        "SGD.step: 2 of its parameters (on cpu) are none of the guarded modules' parameters, which are on meta; the "
        "optimizer updates tensors the model no longer uses (`.to()` onto meta or XLA, `to_empty()` and "
        "`load_state_dict(..., assign=True)` replace parameters): build the optimizer after moving or loading the model"
    ]
    assert (g.findings[0].code, g.findings[0].line) == ("DL407", STEP_LINE)


def test_another_models_optimizer_on_the_same_device_is_not_a_stale_one():
    generator, discriminator = nn.Linear(4, 4), nn.Linear(4, 1)
    optimizer = torch.optim.Adam(discriminator.parameters())
    with devicelint.guard(generator, optimizer=optimizer) as g:
        discriminator(generator(torch.randn(8, 4))).sum().backward()
        optimizer.step()
    assert g.findings == []


# ---------------------------------------------------------------------- the whole step


def test_a_clean_training_step_under_the_guard_reports_nothing_and_leaves_nothing():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to("meta")
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 1.0])).to("meta")
    optimizers = [torch.optim.Adam(model[0].parameters()), torch.optim.SGD(model[2].parameters(), lr=0.1, momentum=0.9)]
    guard = devicelint.guard(model, criterion, optimizer=optimizers, ops=True)
    with guard:
        for _ in range(3):
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss = criterion(model(torch.randn(5, 4, device="meta")), torch.tensor([0, 1, 2, 0, 1], device="meta"))
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
    assert guard.findings == []
    assert [all_step_hooks(optimizer) for optimizer in optimizers] == [0, 0]
    with pytest.raises(ValueError):
        with guard:
            assert [all_step_hooks(optimizer) for optimizer in optimizers] == [1, 1]
            raise ValueError("training failed")
    assert [all_step_hooks(optimizer) for optimizer in optimizers] == [0, 0]


# ---------------------------------------------------------------------- the backward pass
# The guard installs no backward hooks: PyTorch's autograd engine checks every gradient's device
# itself. These tests pin what it does, which the README states.


class WrongDeviceGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.ones(grad.shape)  # made on the CPU whatever the input's device


def test_pytorch_rejects_wrong_device_gradients_from_functions_and_hooks():
    model = nn.Linear(4, 4, device="meta")
    x = torch.randn(2, 4, device="meta")
    with devicelint.guard(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1)) as g:
        with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0 - expected device meta but got cpu"):
            WrongDeviceGradient.apply(model(x)).sum().backward()
        model.weight.register_hook(lambda grad: torch.ones(grad.shape))
        with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the type of value"):
            model(x).sum().backward()
    assert g.findings == []
    module = nn.Linear(4, 4, device="meta")
    module.register_full_backward_hook(lambda mod, grad_input, grad_output: (torch.ones(2, 4),))
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        module(torch.randn(2, 4, device="meta", requires_grad=True)).sum().backward()


class ScalarGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.tensor(1.0)  # 0-dim, on the CPU


def test_pytorch_moves_a_0_dim_cpu_gradient_silently():
    parameter = nn.Parameter(torch.randn((), device="meta"))
    ScalarGradient.apply(parameter).backward()
    assert parameter.grad.device.type == "meta"


@pytest.mark.cuda
def test_on_a_gpu_a_data_move_leaves_the_gradient_and_loaded_state_stays_behind():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(checkpoint(torch.optim.Adam))
    model.cuda()
    model(torch.randn(8, 4, device="cuda")).sum().backward()
    with devicelint.guard(model, optimizer=optimizer, on_mismatch="collect") as g:
        with suppress(RuntimeError):  # whether PyTorch then stops the step is not this test's business
            step(optimizer)
    assert ("weight", "state['exp_avg']") in {(f.runtime.tensor, f.runtime.argument) for f in g.findings}

    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(8, 4)).sum().backward()
    for parameter in model.parameters():
        parameter.data = parameter.data.cuda()
    with pytest.raises(devicelint.DeviceMismatchError, match="the gradient of parameter `weight` is on cpu"):
        with devicelint.guard(model, optimizer=optimizer):
            step(optimizer)
