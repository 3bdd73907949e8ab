from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.flow import BinaryEvent, CallEvent, has_decorator
from devicelint.analysis.names import dotted_name, keyword_arg
from devicelint.analysis.values import Kind, Value
from devicelint.engine import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: factories that put their result on the default device (the CPU) unless given ``device=``
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in "zeros ones empty full arange linspace logspace eye rand randn randint randperm tensor".split()
)
#: tensor methods and attributes whose result is Python data or metadata, not a tensor that
#: follows the model
_METADATA_METHODS = frozenset(
    {"size", "dim", "ndimension", "item", "tolist", "numel", "nelement", "stride", "element_size",
     "data_ptr", "get_device", "is_contiguous", "is_floating_point", "is_complex", "cpu", "numpy"}
)
_FOLLOWING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Flags, in a method of an `nn.Module` subclass other than `__init__`, a tensor made by a torch
    factory without `device=` (`torch.zeros`, `torch.arange`, `torch.tensor([...])`, ...) that
    is then combined - by an operator or a torch function - with a tensor that follows the
    model: the output of a submodule (`self.proj(x)`), a parameter or buffer of the module, an
    argument annotated `torch.Tensor`, or what is computed from those in the same method.
    A factory in a helper of the same file (a function, a static method, another method) is
    flagged when the helper returns its tensor to such a method and it meets the model's
    tensors there; the message names the helper and the line where they meet. In a free
    function or a static method, the factory's tensor is flagged when it meets a parameter
    annotated `torch.Tensor`: the function fails for every caller whose tensor is on a GPU.
    0-dim tensors (`torch.tensor(0.5)`), factories given `device=`, `*_like` and `x.new_*`
    factories, results used only for shapes or on the host, and code under
    `torch.set_default_device` / `with torch.device(...)` are left alone.

    ## Why is this bad?
    The factory makes a CPU tensor; the model's tensors are on the GPU once the model is
    moved. The method works on a laptop and fails on the first GPU run with "Expected all
    tensors to be on the same device".

    ## Example
    ```python
    def forward(self, x):
        hidden = self.embed(x)
        positions = torch.arange(x.size(1))
        return hidden + self.pos_embed(positions)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        hidden = self.embed(x)
        positions = torch.arange(x.size(1), device=x.device)
        return hidden + self.pos_embed(positions)
    ```
    The fix adds `device=<input>.device`, where `<input>` is the method's first argument that
    the code passes to a submodule or annotates as a tensor. It is marked unsafe: review that
    the tensor should live where that input lives.
    """

    code = "DL202"
    name = "factory-without-device"
    severity = Severity.ERROR
    summary = "A tensor made without `device=` meets the model's tensors or a tensor argument."
    fix_safety = "unsafe"
    valid = (
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        return h + torch.arange(4, device=h.device)\n",
        # 0-dim: PyTorch allows it with a GPU tensor
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.proj(x) * torch.tensor(0.5)\n",
        # used for shapes only
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        n = h.size(1) + torch.tensor([1, 2]).sum().item()\n        return h[:, :n]\n",
        # under a default device
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        with torch.device('cuda'):\n"
        "            return self.proj(x) + torch.ones(4)\n",
        # *_like factories follow their argument
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        return h + torch.zeros_like(h)\n",
        # not a module's method
        "import torch\ndef f(h):\n    return h + torch.ones(4)\n",
        # a zero-element placeholder for an argument the function ignores (transformers' WavLM)
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nclass A(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n    def forward(self, q):\n"
        "        return F.linear(self.proj(q), torch.empty([0]))\n",
        # the other side is an int argument
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x, offset: int):\n"
        "        return torch.arange(4) + offset\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(100, 8)\n        self.pos = nn.Embedding(16, 8)\n    def forward(self, x):\n"
            "        hidden = self.embed(x)\n        positions = torch.arange(x.size(1))  # expect: DL202\n"
            "        return hidden + self.pos(positions)\n",
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(100, 8)\n        self.pos = nn.Embedding(16, 8)\n    def forward(self, x):\n"
            "        hidden = self.embed(x)\n        positions = torch.arange(x.size(1), device=x.device)  # expect: DL202\n"
            "        return hidden + self.pos(positions)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Gate(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(4))\n    def forward(self, x: torch.Tensor):\n"
            "        mask = torch.ones(4)  # expect: DL202\n        return torch.mul(self.weight, mask) * x\n",
            "import torch\nfrom torch import nn\nclass Gate(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(4))\n    def forward(self, x: torch.Tensor):\n"
            "        mask = torch.ones(4, device=x.device)  # expect: DL202\n        return torch.mul(self.weight, mask) * x\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._module_calls: set[int] = set()
        #: per method: names that hold a tensor following the model
        self._following: dict[int, set[str]] = {}
        self._reported: set[int] = set()

    # ------------------------------------------------------------------ events

    def _method(self) -> Optional[cst.FunctionDef]:
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return None
        if context.node.name.value == "__init__":
            return None
        return context.node

    def _free_function(self) -> Optional[cst.FunctionDef]:
        """A free function or static method: there only its tensor-annotated parameters count
        as tensors that may be on a GPU."""
        context = self.ctx.current_function
        if context.node is None:
            return None
        if context.class_info is None or has_decorator(context.node, "staticmethod"):
            return context.node
        return None

    def _tensor_parameter(self, node: cst.BaseExpression, value: Value, function: cst.FunctionDef) -> Optional[str]:
        """``node`` is a parameter annotated ``torch.Tensor`` (or what the analysis cannot tell
        apart from it: computed from it without a move)."""
        if not isinstance(node, cst.Name) or value.kind != Kind.TENSOR or value.device is not None:
            return None
        params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
        for param in params:
            if param.name.value == node.value and self.ctx.analyzer.is_tensor_parameter(param):
                return node.value
        return None

    def _check_free_function(self, function: cst.FunctionDef, operands: list[tuple[cst.BaseExpression, Value]], node: cst.CSTNode) -> None:
        for operand, value in operands:
            factory = self._cpu_factory(value)
            if factory is None or factory[1] is not function:
                continue
            for other, other_value in operands:
                partner = None if other is operand else self._tensor_parameter(other, other_value, function)
                if partner is not None:
                    self._report(factory, function, node, partner=partner)
                    return

    def on_call(self, event: CallEvent) -> None:
        method = self._method()
        if method is None:
            free = self._free_function()
            if free is not None:
                operands = _positional_operands(event)
                if event.qualname in api.MIXING_FUNCTIONS:
                    self._check_free_function(free, operands, event.node)
                elif event.method in api.BINARY_TENSOR_METHODS and isinstance(event.node.func, cst.Attribute) and event.receiver is not None:
                    self._check_free_function(free, [(event.node.func.value, event.receiver), *operands], event.node)
            return
        if self._calls_a_module(event):
            self._module_calls.add(id(event.node))
            for _, value in event.args:
                # a submodule's weights meet even a 0-dim input (linear, embedding, conv)
                factory = self._cpu_factory(value, allow_unknown_rank=True)
                if factory is not None:
                    self._report(factory, method, event.node)  # the submodule's weights follow the model
                    return
            return
        values = _positional_operands(event)
        if event.qualname in api.MIXING_FUNCTIONS:
            self._check_operands(values, method, event.node)
        elif event.method in api.BINARY_TENSOR_METHODS and isinstance(event.node.func, cst.Attribute) and event.receiver is not None:
            self._check_operands([(event.node.func.value, event.receiver), *values], method, event.node)

    def _check_operands(self, values: list[tuple[cst.BaseExpression, Value]], method: cst.FunctionDef, node: cst.Call) -> None:
        for operand, value in values:
            factory = self._cpu_factory(value)
            if factory is None:
                continue
            if any(other is not operand and self._follows(other, other_value, method) for other, other_value in values):
                self._report(factory, method, node)
                return

    def on_binary(self, event: BinaryEvent) -> None:
        method = self._method()
        if method is None:
            free = self._free_function()
            if free is not None:
                self._check_free_function(free, [(event.left_node, event.left), (event.right_node, event.right)], event.node)
            return
        for mine, mine_value, other, other_value in (
            (event.left_node, event.left, event.right_node, event.right),
            (event.right_node, event.right, event.left_node, event.left),
        ):
            factory = self._cpu_factory(mine_value)
            if factory is not None and self._follows(other, other_value, method):
                self._report(factory, method, event.node)
                return

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        method = self._method()
        if method is None or not isinstance(target, cst.Name):
            return
        following = self._following.setdefault(id(method), set())
        if value.device is None and self._follows(value_node, value, method):
            following.add(target.value)
        else:
            following.discard(target.value)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _calls_a_module(event: CallEvent) -> bool:
        if event.callee.kind == Kind.MODULE:
            return True
        name = dotted_name(event.node.func)  # `self.proj(x)` is seen as a method call on self
        known = event.state.get(name) if name is not None else None
        return known is not None and known.kind == Kind.MODULE

    def _cpu_factory(self, value: Value, allow_unknown_rank: bool = False) -> Optional[tuple[cst.Call, cst.FunctionDef]]:
        """The device-less factory call a CPU tensor comes from; elementwise operators accept a
        0-dim CPU tensor, so there it must be known to have a dimension."""
        if value.kind != Kind.TENSOR or value.device is None or value.device.kind != "cpu":
            return None
        if value.scalar is True or (value.scalar is None and not allow_unknown_rank):
            return None
        origin = value.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return None
        # the analysis records every factory call with the function it ran in - also one in a
        # helper that a method's call summarised (the helper itself may be analysed later)
        made = self.ctx.analyzer.factory_calls.get(id(origin.node))
        if made is None or made[0] not in _FACTORIES or made[1] is None:
            return None
        call = origin.node
        if keyword_arg(call, "device") is not None or _empty_placeholder(call):
            return None
        return call, made[1]

    def _follows(self, node: cst.BaseExpression, value: Value, method: cst.FunctionDef) -> bool:
        """``node`` is a tensor that lives where the model lives (see the docs)."""
        if value.kind == Kind.TENSOR and value.device is None:
            return True  # a parameter, a buffer, an argument annotated as a tensor
        if value.device is not None:
            return False
        return self._follows_syntactically(node, method)

    def _follows_syntactically(self, node: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        if isinstance(node, cst.Call):
            if id(node) in self._module_calls:
                return True
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value not in _METADATA_METHODS:
                return self._follows_syntactically(func.value, method)
            return False
        if isinstance(node, cst.Name):
            return node.value in self._following.get(id(method), ())
        if isinstance(node, cst.BinaryOperation):
            return self._follows_syntactically(node.left, method) or self._follows_syntactically(node.right, method)
        if isinstance(node, cst.Subscript):
            return self._follows_syntactically(node.value, method)
        if isinstance(node, cst.Attribute) and node.attr.value in _FOLLOWING_ATTRIBUTES:
            return self._follows_syntactically(node.value, method)
        return False

    def _report(
        self, found: tuple[cst.Call, cst.FunctionDef], method: cst.FunctionDef, meeting: cst.CSTNode, partner: Optional[str] = None
    ) -> None:
        factory, home = found
        if id(factory) in self._reported:
            return
        self._reported.add(id(factory))
        spelled = self.ctx.source_of(factory.func)
        source = self._device_source(factory, home)
        if partner is not None:
            self.ctx.report(
                factory,
                f"`{spelled}` without `device=` makes a CPU tensor, and it meets the tensor argument `{partner}` "
                f"below; when `{partner}` is on a GPU this fails with mixed devices: pass `device=` "
                f"(e.g. `device={source or partner}.device`)",
                fix=self._fix(factory, source or partner),
            )
            return
        if home is method:
            where = "it meets the model's tensors below"
        else:
            where = (
                f"`{home.name.value}()` returns it to `{method.name.value}`, where it meets the model's "
                f"tensors at line {self.ctx.line(meeting)}"
            )
        self.ctx.report(
            factory,
            f"`{spelled}` without `device=` makes a CPU tensor, and {where}; "
            f"on a GPU this fails with mixed devices: pass `device=`"
            + (f" (e.g. `device={source}.device`)" if source else ""),
            fix=self._fix(factory, source),
        )

    def _device_source(self, factory: cst.Call, function: cst.FunctionDef) -> Optional[str]:
        """The parameter of the factory's function whose device to use: the one whose size the
        factory takes (``torch.arange(x.size(1))``), else the first after ``self`` that is
        annotated as a tensor or given to a submodule."""
        params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
        names = [param.name.value for param in params]
        sized = _SizedParameters(names)
        factory.visit(sized)
        if sized.found is not None:
            return sized.found
        finder = _ArgumentsOfModuleCalls(self._module_calls)
        function.visit(finder)
        for param in params[1:] if params and names[0] in ("self", "cls") else params:
            if self.ctx.analyzer.is_tensor_parameter(param) or param.name.value in finder.names:
                return param.name.value
        return None

    def _fix(self, factory: cst.Call, source: Optional[str]) -> Optional[FixSpec]:
        if source is None or not factory.args or any(arg.star for arg in factory.args):
            return None
        last = factory.args[-1]
        return FixSpec(f"Create it on `{source}.device`", (NodeEdit(last, "after", f", device={source}.device"),), safe=False)


def _positional_operands(event: CallEvent) -> list[tuple[cst.BaseExpression, Value]]:
    """Positional arguments, with the elements of a literal list or tuple (``torch.cat([a, b])``)."""
    operands: list[tuple[cst.BaseExpression, Value]] = []
    for arg, value in event.args:
        if arg.keyword is not None:
            continue
        if isinstance(arg.value, (cst.List, cst.Tuple)) and value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
            operands.extend((element.value, item) for element, item in zip(arg.value.elements, value.info))
        else:
            operands.append((arg.value, value))
    return operands


def _empty_placeholder(call: cst.Call) -> bool:
    """``torch.empty([0])``, ``torch.zeros(0)``: a zero-element placeholder for an unused argument."""
    for arg in call.args:
        if arg.keyword is not None:
            continue
        value = arg.value
        elements = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        if any(isinstance(e, cst.Integer) and e.evaluated_value == 0 for e in elements):
            return True
    return False


class _SizedParameters(cst.CSTVisitor):
    """The first of ``names`` whose shape an expression reads: ``x.size(1)``, ``x.shape[0]``."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names) - {"self", "cls"}
        self.found: Optional[str] = None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if (
            self.found is None
            and node.attr.value in ("size", "shape")
            and isinstance(node.value, cst.Name)
            and node.value.value in self.names
        ):
            self.found = node.value.value


class _ArgumentsOfModuleCalls(cst.CSTVisitor):
    """Plain names passed to a submodule call (``self.proj(x)`` -> ``x``)."""

    def __init__(self, module_calls: set[int]) -> None:
        self.module_calls = module_calls
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self.module_calls:
            for arg in node.args:
                if isinstance(arg.value, cst.Name):
                    self.names.add(arg.value.value)
