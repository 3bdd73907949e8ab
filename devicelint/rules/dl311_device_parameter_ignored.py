from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.names import NamesRead, OwnScopeVisitor, dotted_name, keyword_arg, looks_like_dtype_name, own_scope_calls, parameter_names, positional_args
from devicelint.analysis.values import Homogeneous, Kind, Value
from devicelint.findings import Severity
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.rules._cuda_code import device_spelling
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule

#: factories that take a ``device=`` keyword: where the parameter could have gone
_FACTORIES = api.DEVICE_KEYWORD_FACTORIES | {"torch.as_tensor"}
#: attributes a tensor has and a device lacks: a parameter read this way is a tensor (``x.to(other)``
#: follows another tensor)
_TENSOR_ATTRIBUTES = frozenset({"shape", "size", "dtype", "device", "dim", "ndim", "numel", "view", "reshape", "unsqueeze", "float", "long"})
#: annotations that say a parameter is something else than a device
_NOT_DEVICE_ANNOTATIONS = frozenset({"torch.dtype", "torch.Tensor", "torch.nn.Module", "torch.nn.modules.module.Module"})


@dataclass(frozen=True)
class _DeviceParameter:
    name: str
    #: how the function shows that the parameter is a device, for the message
    evidence: str


class DeviceParameterIgnored(Rule):
    """
    ## What it does
    Flags a torch factory without `device=` (`torch.zeros`, `torch.arange`, `torch.tensor`,
    `torch.full`, ...) in a function or method that takes a device as a parameter, when the
    tensor it makes is returned by the function (alone or in a returned tuple or list), or meets
    a tensor that the function placed on that parameter's device.

    A parameter is a device when the function shows it, never by its name: it is annotated
    `torch.device` (also inside `Optional[...]` / `Union[...]`), or the body uses it as one -
    `device=p` in a call, `x.to(p)`, `x.cuda(p)`. A parameter that is only named `device` and
    never used is an unused argument, a different smell: not flagged. Neither is one also passed
    as `dtype=p`, read as a tensor (`p.shape`, `p.dtype`: `x.to(p)` then follows another tensor)
    or annotated as a dtype, tensor or module; and `x.to(p)` with a `p` spelled like a dtype
    (`dtype`, `out_dtype`) is not taken as evidence.

    A tensor built from Python data (`torch.tensor(lengths)`, `torch.as_tensor(timings)`) that
    is only returned is left alone: such lengths, counts and timings are host metadata as often
    as not (lightning's and diffusers' code return them on purpose); it is flagged when it meets
    the parameter's device in the function. 0-dim tensors (`torch.tensor(0.0)`: PyTorch mixes a 0-dim CPU tensor with GPU tensors), factories
    given `device=` (also `device=None`), `*_like` and `x.new_*` factories, code under
    `torch.set_default_device(...)` / `with torch.device(...)`, and tensors that are moved before
    they are returned are left alone.

    A function that takes a device and moves a tensor to the CPU (`self.sigmas =
    self.sigmas.to("cpu")` in a scheduler's `set_timesteps(n, device)`) is flagged at that move
    when the program then puts a tensor made from it into one list with a tensor that may be on
    an accelerator and hands the list to `torch.stack`/`torch.cat` (also in another method of
    the class): those reject tensors on two devices, 0-dim CPU tensors too. A tensor moved to the
    CPU on purpose and used there - indexed on the host, or a 0-dim element mixed in arithmetic,
    as diffusers' schedulers do - is left alone.

    A function that takes a device and runs a helper of the file whose own device parameter
    defaults to the CPU and which moves the tensors it is handed there (`def
    pairwise_distance(a, b, device=torch.device("cpu")): a, b = a.to(device), b.to(device)`)
    without passing it is flagged at that call - or where it binds the helper to a name
    (`distance_fn = pairwise_distance`) that all its calls there run without the device: the
    caller's tensors are copied to the host and worked on there, whatever device the function
    was given. A helper that only makes new tensors on its default device (the caller may build
    them on the host and move them after), one handed on uncalled, or one called with
    `*args`/`**kwargs`, is left alone.

    A method of a class handed, by `self.method(...)`, a name its caller uses as a device
    (`timesteps.to(device)`), that never reads the parameter it binds and places its tensors on
    the object's own device instead (`image.to(device=self.device)`, `torch.randn(...,
    device=self.device)`) is flagged at those placements, and so are the caller's own
    placements on that same attribute: the device the caller chose (a pipeline's execution
    device under CPU offload) is dropped for another (where the first module's weights sit).
    A method that reads what it is handed, or a call with `*args`/`**kwargs`, is left alone.

    One bug, one finding: where the CPU tensor meets a tensor that can be on the accelerator
    in the same function, DL202 (factory-without-device) reports the factory and this rule
    yields to it on that span; this rule adds the cases DL202 does not see - the tensor is
    handed back to the caller, or it meets the parameter's device in a module's `__init__`.

    ## Why is this bad?
    The caller passed a device to get its tensors there; a factory without `device=` makes them
    on the CPU (or the default device) whatever the caller asked for. The function works on a
    CPU-only machine and the caller's next operation fails on the first GPU run with "Expected
    all tensors to be on the same device" (verified on torch 2.13 with fake CUDA tensors:
    `torch.zeros(2)` is a CPU tensor, and adding it to a `cuda:0` tensor of the same shape raises
    that error; a 0-dim CPU tensor added to it does not).

    ## Example
    ```python
    def init_hidden(self, batch_size: int, device: torch.device):
        h0 = torch.zeros(self.num_layers, batch_size, self.hidden_size)
        c0 = torch.zeros(self.num_layers, batch_size, self.hidden_size)
        return h0, c0
    ```

    ## Use instead
    ```python
    def init_hidden(self, batch_size: int, device: torch.device):
        h0 = torch.zeros(self.num_layers, batch_size, self.hidden_size, device=device)
        c0 = torch.zeros(self.num_layers, batch_size, self.hidden_size, device=device)
        return h0, c0
    ```
    The fix adds `device=<parameter>` to the factory. It is marked unsafe: it changes where the
    tensor is made, which is the point, but review that the caller does not need it on the
    host (lengths for `pack_padded_sequence`, indices used with NumPy).
    """

    code = "DL311"
    name = "device-parameter-ignored"
    severity = Severity.WARNING
    summary = "A function that takes a device makes a tensor without it and returns it (or mixes it with that device's tensors)."
    fix_safety = "unsafe"
    yields_to = ("DL202",)
    valid = (
        "import torch\ndef init_hidden(n, device: torch.device):\n    return torch.zeros(2, n, device=device)\n",
        # a parameter only named `device` and never used: another smell (an unused argument)
        "import torch\ndef init_hidden(n, device):\n    return torch.zeros(2, n)\n",
        # moved before it is returned
        "import torch\ndef make(n, device):\n    mask = torch.ones(n, n).tril()\n    return mask.to(device)\n",
        # a 0-dim tensor mixes with anything
        "import torch\ndef start(x, device):\n    x = x.to(device)\n    return x, torch.tensor(0.0)\n",
        # `p` converts the dtype, it is not a device
        "import torch\ndef cast(x, p):\n    y = torch.zeros(3, dtype=p)\n    return x.to(p), y\n",
        # `other` is a tensor to follow, not a device
        # Python data returned as host metadata (lightning's parity test returns its timings)
        "import torch\ndef timed_run(model, batches, device):\n    model.to(device)\n    timings = [0.1 for _ in batches]\n"
        "    return model.state_dict(), torch.tensor(timings)\n",
        "import torch\ndef pad_like(x, other):\n    pad = torch.zeros(other.shape[0], 2)\n    return x.to(other), pad\n",
        # the default device is chosen for the whole block
        "import torch\ndef make(x, n, device):\n    x = x.to(device)\n    with torch.device(device):\n        return x, torch.zeros(n)\n",
        # diffusers' schedulers keep their sigmas on the CPU on purpose and use them there: an
        # element is a 0-dim tensor, which arithmetic with the sample accepts
        "import torch\nclass Scheduler:\n    def set_timesteps(self, n, device):\n        self.timesteps = torch.arange(n).to(device)\n"
        "        self.sigmas = torch.linspace(1.0, 0.0, n).to(\"cpu\")\n"
        "    def step(self, output, sample):\n        sigma = self.sigmas[0]\n        return sample + sigma * output\n",
        # stacked with host tensors only
        "import torch\nclass Scheduler:\n    def set_timesteps(self, n, device):\n        self.timesteps = torch.arange(n).to(device)\n"
        "        self.sigmas = torch.linspace(1.0, 0.0, n).to(\"cpu\")\n"
        "    def step(self, sample):\n        rks = [torch.ones(())]\n        rks.append(self.sigmas[0])\n        return torch.stack(rks)\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.LSTM(8, 16)\n    def init_hidden(self, batch_size: int, device: torch.device):\n"
            "        h0 = torch.zeros(1, batch_size, 16)  # expect: DL311\n"
            "        c0 = torch.zeros(1, batch_size, 16)  # expect: DL311\n        return h0, c0\n",
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.LSTM(8, 16)\n    def init_hidden(self, batch_size: int, device: torch.device):\n"
            "        h0 = torch.zeros(1, batch_size, 16, device=device)  # expect: DL311\n"
            "        c0 = torch.zeros(1, batch_size, 16, device=device)  # expect: DL311\n        return h0, c0\n",
        ),
        Example(
            "import torch\ndef causal_mask(size, device):\n    ones = torch.ones(size, size, device=device)\n"
            "    keep = torch.arange(size)  # expect: DL311\n    return ones.tril(), keep\n",
            "import torch\ndef causal_mask(size, device):\n    ones = torch.ones(size, size, device=device)\n"
            "    keep = torch.arange(size, device=device)  # expect: DL311\n    return ones.tril(), keep\n",
        ),
        # a scheduler module's constructor takes the device and mixes a CPU tensor with one made
        # there (in a plain class's constructor that is DL202's)
        Example(
            "import torch\nfrom torch import nn\nclass Sampler(nn.Module):\n    def __init__(self, steps, device):\n"
            "        super().__init__()\n"
            "        self.betas = torch.linspace(1e-4, 0.02, steps, device=device)\n"
            "        self.alphas = 1.0 - self.betas * torch.ones(steps)  # expect: DL311\n"
        ),
        # the method that takes the device moves the sigmas to the CPU, and another method stacks
        # a 0-dim tensor made from them with one on the sample's device (diffusers #13450)
        Example(
            "import torch\nclass Scheduler:\n    def set_timesteps(self, n, device: torch.device):\n"
            "        self.timesteps = torch.arange(n).to(device)\n"
            "        self.sigmas = torch.linspace(1.0, 0.0, n).to(\"cpu\")  # expect: DL311\n"
            "    def step(self, sample: torch.Tensor):\n        h = self.sigmas[0] - self.sigmas[1]\n"
            "        rks = [torch.ones((), device=sample.device)]\n        rks.append(torch.ones_like(h))\n"
            "        return torch.stack(rks)\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per function node: its parameters that are devices
        self._device_parameters: dict[int, tuple[_DeviceParameter, ...]] = {}
        self._reported: set[int] = set()
        #: ``.to("cpu")``/``.cpu()`` calls in functions that take a device: the function and the device parameter
        self._moves_to_host: dict[int, tuple[cst.FunctionDef, _DeviceParameter]] = {}
        #: per caller function: its names used as devices (see _check_handed_device)
        self._caller_devices: dict[tuple[str, int], frozenset[str]] = {}

    # ------------------------------------------------------------------ events

    def on_return(self, node: cst.Return, value: Value) -> None:
        function = self.ctx.current_function.node
        if function is None:
            return
        # a tensor of Python data handed back (`torch.tensor(lengths)`, timings, counts) is
        # host metadata as often as not: only its meeting the device is evidence
        factories = [found for found in map(lambda item: self._own_factory(item, function), _tensors_in(value)) if found is not None and found[1] not in api.DATA_FACTORIES]
        if not factories:
            return  # (asked first: finding a function's device parameters walks its body)
        devices = self._devices_of(function)
        if not devices:
            return
        for factory in factories:
            self._report(factory, devices[0], f"it returns the tensor at line {self.ctx.line(node)}")

    def on_binary(self, event: BinaryEvent) -> None:
        self._check_operands([(event.left_node, event.left), (event.right_node, event.right)], event.node)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        """``distance_fn = pairwise_distance`` in a function that takes a device, where every call
        of ``distance_fn`` there leaves the helper's own device parameter - which defaults to the
        CPU - out (see _check_helper)."""
        if not isinstance(target, cst.Name) or not isinstance(value_node, cst.Name):
            return
        function = self.ctx.current_function.node
        if function is None or value.kind != Kind.FUNCTION or not isinstance(value.info, cst.FunctionDef):
            return
        calls = _calls_of(function, target.value)
        if calls:
            self._check_helper(function, value.info, calls, statement)

    def on_call(self, event: CallEvent) -> None:
        function = self.ctx.current_function.node
        if function is not None and isinstance(event.node.func, cst.Name) and event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._check_helper(function, event.callee.info, [event.node], event.node)
        if function is not None:
            own = self._own_method(event.node)
            if own is not None:
                self._check_handed_device(function, own, event.node)
        if event.method in ("to", "cpu") and _moved_to_host(event.result, event.node):
            self._note_move_to_host(event.node)
        if event.qualname in api.CONCATENATING and event.args and event.args[0][0].keyword is None:
            self._check_entries_apart(event.args[0][1], event.node)
        if event.qualname in api.MIXING_FUNCTIONS:
            self._check_operands(event.operands(api.OPERAND_KEYWORDS), event.node)
        elif event.method in api.BINARY_TENSOR_METHODS and isinstance(event.node.func, cst.Attribute) and event.receiver is not None:
            self._check_operands([(event.node.func.value, event.receiver), *event.operands(api.OPERAND_KEYWORDS)], event.node)

    def _check_helper(self, function: cst.FunctionDef, helper: cst.FunctionDef, calls: list[cst.Call], at: cst.CSTNode) -> None:
        """A function that takes a device runs a helper of the file whose own device parameter
        defaults to the CPU and which moves the tensors it is handed there (``def
        pairwise_distance(a, b, device=torch.device("cpu"))``), and ``calls`` all leave that
        parameter out: the helper's
        work runs on the CPU whatever device the function was given (the operands are copied to
        the host and back, or its results meet the device's tensors). Reported at ``at``: the
        call, or the binding of the helper that the calls run."""
        if helper is function or id(at) in self._reported:
            return
        defaulted = _cpu_defaulted(helper)
        if not defaulted:
            return
        devices = self._devices_of(function)
        if not devices:
            return
        helper_devices = {found.name for found in self._devices_of(helper)}
        positional = [param.name.value for param in (*helper.params.posonly_params, *helper.params.params)]
        for name in defaulted:
            if name not in helper_devices or not _moves_its_inputs(helper, name):
                continue
            index = positional.index(name) if name in positional else None
            if any(_binds(call, name, index) for call in calls):
                continue
            self._reported.add(id(at))
            self.ctx.report(
                at,
                f"`{helper.name.value}()` takes `{name}` and defaults it to the CPU, but `{function.name.value}()`, which takes "
                f"the device `{devices[0].name}` ({devices[0].evidence}), leaves it out: the helper's work runs on the CPU, "
                f"not where the caller asked; pass `{name}={devices[0].name}` (`functools.partial` for a helper handed on)",
            )
            return

    def _own_method(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The method of the current class that ``self.name(...)`` runs."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.ctx.current_function.class_info
        if info is None:
            return None
        return info.methods.get(func.attr.value)

    def _check_handed_device(self, function: cst.FunctionDef, callee: cst.FunctionDef, call: cst.Call) -> None:
        """``self.prepare_latents(image, ..., device)`` where the caller uses ``device`` as a device
        (``x.to(device)``, ``device=device``) and the callee never reads the parameter it binds,
        but places its tensors on another device spelled out (``image.to(device=self.device)``,
        ``torch.randn(..., device=self.device)``): the device the caller chose is dropped and the
        tensors go elsewhere (diffusers' execution device under CPU offload against
        ``self.device``, where the first module's weights sit). Reported at each placement."""
        if callee is function or any(arg.star for arg in call.args):
            return
        handed = {arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)}
        if not handed:
            return
        key = ("handed", id(function))
        if key not in self._caller_devices:
            uses = _DeviceUses(_local_names(function))
            walk.visit(function.body, uses)
            self._caller_devices[key] = frozenset(set(uses.evidence) - uses.not_devices)
        caller_devices = self._caller_devices[key]
        if not handed & caller_devices:
            return
        params = [*callee.params.posonly_params, *callee.params.params, *callee.params.kwonly_params]
        positional = [param.name.value for param in (*callee.params.posonly_params, *callee.params.params)]
        offset = 1 if positional and positional[0] in ("self", "cls") and isinstance(call.func, cst.Attribute) else 0
        bound: Optional[str] = None
        index = 0
        for arg in call.args:
            name = None
            if arg.keyword is None:
                if offset + index < len(positional):
                    name = positional[offset + index]
                index += 1
            else:
                name = arg.keyword.value
            if name is not None and isinstance(arg.value, cst.Name) and arg.value.value in caller_devices:
                bound = name
                break
        if bound is None or bound not in {param.name.value for param in params}:
            return
        if _reads_name(callee.body, bound):
            return  # the callee uses what it was handed
        handed_name = next(arg.value.value for arg in call.args if isinstance(arg.value, cst.Name) and arg.value.value in caller_devices)
        elsewhere = set()
        for placement, spelled in _explicit_placements(callee):
            elsewhere.add(spelled)
            if id(placement) in self._reported:
                continue
            self._reported.add(id(placement))
            self.ctx.report(
                placement,
                f"`{callee.name.value}()` is handed the device `{bound}` (`{function.name.value}()` passes the device it uses "
                f"at line {self.ctx.line(call)}), never reads it, and puts this tensor on `{spelled}` instead: the device the "
                f"caller chose is dropped; use `{bound}`",
            )
        # the caller's own placements on that other device drop its device the same way
        for placement, spelled in _explicit_placements(function):
            if spelled not in elsewhere or id(placement) in self._reported:
                continue
            self._reported.add(id(placement))
            self.ctx.report(
                placement,
                f"`{function.name.value}()` places its tensors on `{handed_name}` and hands it to `{callee.name.value}()` "
                f"(line {self.ctx.line(call)}), which drops it for `{spelled}`; this tensor goes to `{spelled}` too, not "
                f"where the others are: use `{handed_name}`",
            )

    def _check_operands(self, operands: list[tuple[cst.BaseExpression, Value]], node: cst.CSTNode) -> None:
        function = self.ctx.current_function.node
        if function is None or len(operands) < 2:
            return
        devices = self._devices_of(function)
        if not devices:
            return
        by_name = {device.name: device for device in devices}
        for operand, value in operands:
            if value.scalar is not False:
                continue  # a 0-dim CPU tensor mixes with anything
            factory = self._own_factory(value, function)
            if factory is None:
                continue
            for other, other_value in operands:
                device = other_value.device
                if other is operand or device is None or device.kind not in ("follows", "accel") or device.label not in by_name:
                    continue
                self._report(
                    factory,
                    by_name[device.label],
                    f"it meets `{self.ctx.source_of(other)}`, on `{device.label}`, at line {self.ctx.line(node)}",
                )
                return

    def _note_move_to_host(self, move: cst.Call) -> None:
        """``self.sigmas = self.sigmas.to("cpu")`` in a function that takes a device: kept
        until the program stacks what it moved beside an accelerator tensor."""
        function = self.ctx.current_function.node
        if function is None or "cpu" not in self.ctx.source_of(move):
            return
        devices = self._devices_of(function)
        if devices:
            self._moves_to_host[id(move)] = (function, devices[0])

    def _check_entries_apart(self, listed: Value, node: cst.Call) -> None:
        """``torch.stack(rks)`` where the list holds a tensor derived from one that a function
        taking a device moved to the CPU (diffusers' ``set_timesteps(n, device)`` ending with
        ``self.sigmas = self.sigmas.to("cpu")``) beside one that may be on an accelerator: the
        concatenating functions reject tensors on two devices, 0-dim ones too. The move is
        reported: it is where the device the caller asked for was dropped. Tensors moved to the
        CPU on purpose and only used there (indexed on the host, mixed as 0-dim scalars in
        arithmetic) are not reported."""
        if listed.kind != Kind.CONTAINER or not isinstance(listed.info, Homogeneous):
            return
        apart = listed.info.apart
        if apart is None or apart.position is not None or apart.host.origin is None:
            return
        move = apart.host.origin.node
        found = self._moves_to_host.get(id(move))
        if found is None or id(move) in self._reported:
            return
        self._reported.add(id(move))
        function, device = found
        accelerator = apart.accelerator
        beside = where(accelerator, self.ctx) if accelerator.device is not None else "on an accelerator"
        self.ctx.report(
            move,
            f"`{function.name.value}()` takes the device `{device.name}` ({device.evidence}), but moves this tensor to the CPU; "
            f"`{dotted_name(node.func) or 'torch.stack'}` at line {self.ctx.line(node)} puts a tensor made from it beside one {beside}, "
            f"which it rejects on a GPU (even 0-dim tensors): move it to `{device.name}`",
            related=((node, "stacked here"),),
        )

    # ------------------------------------------------------------------ helpers

    def _own_factory(self, value: Value, function: cst.FunctionDef) -> Optional[tuple[cst.Call, str]]:
        """The device-less factory call of ``function`` itself that made this tensor."""
        if value.kind != Kind.TENSOR or value.scalar is True:
            return None
        made = self.ctx.analyzer.device_less_factory(value)
        if made is None:
            return None
        call, qualname, home = made
        if home is not function or qualname not in _FACTORIES:
            return None
        return call, qualname

    def _devices_of(self, function: cst.FunctionDef) -> tuple[_DeviceParameter, ...]:
        key = id(function)
        if key not in self._device_parameters:
            self._device_parameters[key] = self._find_device_parameters(function)
        return self._device_parameters[key]

    def _find_device_parameters(self, function: cst.FunctionDef) -> tuple[_DeviceParameter, ...]:
        params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
        names = {param.name.value for param in params} - {"self", "cls"}
        if not names:
            return ()
        state = self.ctx.analyzer.module_state
        if _DEVICE_USE_TEXT.search(self.ctx.analyzer.body_text(function)) is None and not any(
            api.TORCH_DEVICE in self._annotation_names(param, state) for param in params if param.name.value in names
        ):
            return ()  # no `device=`, `.to(`, `.cuda(` in the body, no `torch.device` parameter: nothing to walk it for
        uses = _DeviceUses(names)
        walk.visit(function.body, uses)
        found = []
        for param in params:
            name = param.name.value
            if name not in names or name in uses.not_devices:
                continue
            annotated = self._annotation_names(param, state)
            if annotated & _NOT_DEVICE_ANNOTATIONS:
                continue
            if api.TORCH_DEVICE in annotated:
                found.append(_DeviceParameter(name, "annotated `torch.device`"))
            elif name in uses.evidence:
                how, node = uses.evidence[name]
                found.append(_DeviceParameter(name, f"{how} at line {self.ctx.line(node)}"))
        return tuple(found)

    def _annotation_names(self, param: cst.Param, state: dict) -> frozenset[str]:
        """The qualified names an annotation mentions (``Optional[torch.device]`` ->
        ``typing.Optional``, ``torch.device``); string annotations are parsed."""
        if param.annotation is None:
            return frozenset()
        annotation: cst.BaseExpression = param.annotation.annotation
        if isinstance(annotation, cst.SimpleString):
            try:
                annotation = cst.parse_expression(annotation.evaluated_value)
            except Exception:  # not an expression: says nothing
                return frozenset()
        collector = NamesRead(into_lambdas=False)
        walk.visit(annotation, collector)
        qualnames = (self.ctx.analyzer.qualname_of(node, state) for node in collector.nodes)
        return frozenset(name for name in qualnames if name is not None)

    def _report(self, found: tuple[cst.Call, str], device: _DeviceParameter, what: str) -> None:
        factory, qualname = found
        if id(factory) in self._reported:
            return
        self._reported.add(id(factory))
        function = self.ctx.current_function.node
        assert function is not None
        spelled = dotted_name(factory.func) or qualname
        self.ctx.report(
            factory,
            f"`{function.name.value}()` takes the device `{device.name}` ({device.evidence}), but `{spelled}` "
            f"here has no `device=`: it makes a CPU tensor whatever device the caller asks for, and {what}; "
            f"pass `device={device.name}`",
            fix=_fix(factory, device.name),
        )


def _moved_to_host(result: Value, move: cst.Call) -> bool:
    """Did this ``.to(...)``/``.cpu()`` put a tensor on the CPU (the origin it gives)?"""
    return result.kind == Kind.TENSOR and result.device is not None and result.device.is_cpu and result.origin is not None and result.origin.node is move


def _fix(factory: cst.Call, device: str) -> Optional[FixSpec]:
    if not factory.args or any(arg.star for arg in factory.args):
        return None
    last = factory.args[-1]
    return FixSpec(f"Create it on `{device}`", (NodeEdit(last, "after", f", device={device}"),), safe=False)


def _tensors_in(value: Value) -> list[Value]:
    """The value itself, or the elements of a returned tuple/list of known elements."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return list(value.info)
    return [value]


#: text that any device use of a parameter needs (`device=p`, `x.to(p)`, `x.cuda(p)`)
_DEVICE_USE_TEXT = re.compile(r"device\s*=|\.\s*(to|cuda)\s*\(")


class _DeviceUses(OwnScopeVisitor):
    """Where a function body uses its parameters as devices (``device=p``, ``x.to(p)``,
    ``x.cuda(p)``), and which it uses as dtypes (``dtype=p``) instead."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.evidence: dict[str, tuple[str, cst.CSTNode]] = {}
        self.not_devices: set[str] = set()

    def _seen(self, node: cst.BaseExpression, how: str, call: cst.Call) -> None:
        if isinstance(node, cst.Name) and node.value in self.names:
            self.evidence.setdefault(node.value, (how, call))

    def visit_Call(self, node: cst.Call) -> None:
        device = keyword_arg(node, "device")
        if device is not None:
            self._seen(device.value, "passed as `device=`", node)
        dtype = keyword_arg(node, "dtype")
        if dtype is not None and isinstance(dtype.value, cst.Name):
            self.not_devices.add(dtype.value.value)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
            positional = positional_args(node)
            # `x.to(p)` also converts to a dtype: a parameter spelled like one is not taken
            if positional and not (func.attr.value == "to" and looks_like_dtype_name(positional[0].value)):
                self._seen(positional[0].value, f"used in `.{func.attr.value}()`", node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in self.names and node.attr.value in _TENSOR_ATTRIBUTES:
            self.not_devices.add(node.value.value)


def _local_names(function: cst.FunctionDef) -> set[str]:
    """The parameters of ``function`` and the plain names it assigns."""
    params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    names = {param.name.value for param in params} - {"self", "cls"}
    finder = _AssignedNames()
    walk.visit(function.body, finder)
    return names | finder.names


class _AssignedNames(OwnScopeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)


def _reads_name(body: cst.CSTNode, name: str) -> bool:
    """Is ``name`` read anywhere in ``body`` (nested functions too; keyword names of calls and
    attribute names are not reads)?"""
    finder = _NameReads(name)
    walk.visit(body, finder)
    return finder.found


class _NameReads(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.value is not None:
            walk.visit(node.value, self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk.visit(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found = True


def _explicit_placements(function: cst.FunctionDef) -> list[tuple[cst.Call, str]]:
    """The calls of ``function``'s own body that place a tensor on the object's own device
    (``x.to(device=self.device)``, ``x.to(self.device)``, ``torch.randn(...,
    device=self.device)``): a device other than a parameter or local."""
    found = []
    for call in own_scope_calls(function.body):
        target: Optional[cst.BaseExpression] = None
        device = keyword_arg(call, "device")
        if device is not None:
            target = device.value
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
            positional = positional_args(call)
            if positional:
                target = positional[0].value
        # the object's own device (``self.device``, ``self.unet.device``); ``x.device`` of a
        # tensor follows that tensor, which may well be on the device handed
        spelled = dotted_name(target) if isinstance(target, cst.Attribute) and target.attr.value == "device" else None
        if spelled is not None and spelled.startswith("self."):
            found.append((call, spelled))
    return found


def _cpu_defaulted(function: cst.FunctionDef) -> list[str]:
    """The parameters of ``function`` whose default is the CPU device (``device="cpu"``,
    ``device=torch.device("cpu")``)."""
    params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    return [param.name.value for param in params if param.default is not None and device_spelling(param.default) == "cpu"]


def _moves_its_inputs(helper: cst.FunctionDef, device: str) -> bool:
    """Does ``helper`` move a tensor it is handed to its parameter ``device``
    (``data1.to(device)``)? Then a caller's tensors on the accelerator are copied to the host
    and worked on there. A helper that only makes new tensors there (``random_boxes(n,
    device="cpu")``) leaves its caller free to build them on the host and move them after."""
    params = parameter_names(helper)
    for call in own_scope_calls(helper.body):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "to" or not isinstance(func.value, cst.Name):
            continue
        if func.value.value not in params or func.value.value == device:
            continue
        target = next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "device"), None)
        if isinstance(target, cst.Name) and target.value == device:
            return True
    return False


def _binds(call: cst.Call, name: str, index: Optional[int]) -> bool:
    """Does ``call`` hand the parameter ``name`` (at position ``index``) a value, or may it
    (``*args``, ``**kwargs``)?"""
    positional = 0
    for arg in call.args:
        if arg.star:
            return True
        if arg.keyword is None:
            positional += 1
        elif arg.keyword.value == name:
            return True
    return index is not None and positional > index


def _calls_of(function: cst.FunctionDef, name: str) -> list[cst.Call]:
    """The calls ``name(...)`` in ``function``'s own body; none where the name is handed on
    uncalled (to another function, returned, stored): its callers elsewhere may pass the device."""
    finder = _NameCalls(name)
    walk.visit(function.body, finder)
    return [] if finder.escapes else finder.calls


class _NameCalls(OwnScopeVisitor):
    """The calls of one name in a body, and whether the name is also read otherwise (handed
    on, returned, stored, compared): its assignments aside."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[cst.Call] = []
        self.escapes = False
        self._not_reads: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            self.calls.append(node)
            self._not_reads.add(id(node.func))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._not_reads.add(id(node.target))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self._not_reads:
            self.escapes = True
