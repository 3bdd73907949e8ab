from __future__ import annotations

import re

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import helpers, walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.names import bound_names, dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import Kind
from devicelint.findings import Severity
from devicelint.rules._cuda_code import is_cuda_literal
from devicelint.rules.base import Example, Rule


class StoredDeviceInForward(Rule):
    """
    ## What it does
    Flags the `forward` of an `nn.Module` subclass that creates a tensor with
    `device=self.device` or moves one with `.to(self.device)`, where `self.device` (or another `self.*device` attribute) is a plain
    attribute stored in `__init__` (its own or a base's) - from an argument or a config - and
    the method has an input to take the device from. A `device` property derived from the
    parameters, as many libraries define it, is not a stored attribute and is left alone, as is
    an attribute that another method updates, and a module whose `__init__` (or that of a
    module class of the file it builds) places weights itself (`nn.Linear(...).to(device)`,
    `self.to(self.device)`): for a model-parallel shard or a model that moves itself at
    construction, the stored device is where its weights are - unless the file moves the object
    again after building it (`loss = SOTLoss(); loss.to(device)`), or the model that builds it
    as a submodule, which leaves the stored device stale.

    Also flagged: `forward` handing such an attribute to a function of the file that places its
    tensors with the parameter it binds (`kan_conv2d(x, self.conv, self.device)` where
    `kan_conv2d` does `torch.zeros(...).to(device)`).

    Also flagged, at its binding: a device `forward` gets from a function of the file that
    answers CUDA whenever the machine has a GPU (`_device = get_device()` with `get_device`
    testing `torch.cuda.is_available()` and reading no tensor's device) and creates or moves
    tensors with: they follow the machine, not the module's weights or inputs.

    And a construction of such a module class of the file that leaves its device parameter at
    a hard-coded CUDA default (`device="cuda"`), stored in `__init__` and used by `forward` to
    move its input, in a function that hands its own parameter of that name to another
    construction (`FeedForward(dim, device=device)`, then `Attention(dim)`): the submodule keeps
    sending its inputs to that GPU whatever device the model was built for.

    ## Why is this bad?
    The stored device is where the module was meant to run when it was built, not where its
    inputs are. Under `nn.DataParallel` every replica creates these tensors on the stored GPU
    while its input sits on its own GPU, and after `model.to(other_device)` the attribute still
    names the old device: "Expected all tensors to be on the same device".

    ## Example
    ```python
    class Decoder(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.device = config.device

        def forward(self, x):
            mask = torch.ones(x.shape[0], device=self.device)
    ```

    ## Use instead
    ```python
        def forward(self, x):
            mask = torch.ones(x.shape[0], device=x.device)
    ```
    """

    code = "DL206"
    name = "stored-device-in-forward"
    severity = Severity.WARNING
    summary = "`forward` creates or moves tensors with a device stored in `__init__` instead of the input's device."
    valid = (
        # a pipeline shard placed at construction moves its input onto its own device
        "import torch\nfrom torch import nn\nclass Shard(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.device = device\n        self.seq = nn.Linear(4, 4).to(self.device)\n"
        "    def forward(self, x_rref):\n        x = x_rref.to_here().to(self.device)\n        return self.seq(x).cpu()\n",
        # device taken from the input
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.device = device\n    def forward(self, x):\n        return torch.ones(3, device=x.device)\n",
        # a property derived from the parameters
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    @property\n    def device(self):\n"
        "        return next(self.parameters()).device\n    def forward(self, x):\n        return torch.ones(3, device=self.device)\n",
        # not forward: no input to take the device from, or a deliberate placement (an EMA copy)
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.device = device\n    def sample(self):\n        return torch.randn(3, device=self.device)\n",
        "import torch\nfrom torch import nn\nclass Ema(nn.Module):\n    def __init__(self, model, device=None):\n        super().__init__()\n"
        "        self.device = device\n    def update(self, model):\n        for v in model.state_dict().values():\n"
        "            v = v.to(device=self.device)\n",
        # kept up to date by the module itself
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.device = device\n    def to(self, device):\n        self.device = device\n        return super().to(device)\n"
        "    def forward(self, x):\n        return x + torch.ones(3, device=self.device)\n",
        # not a module
        "import torch\nclass Sampler:\n    def __init__(self, device):\n        self.device = device\n"
        "    def __call__(self, x):\n        return torch.ones(3, device=self.device)\n",
    )
    invalid = (
        # placed at construction on the stored device, then moved by its user: the stored device
        # is stale (spectral optimal transport's loss, whose base class stores the device)
        Example(
            "import torch\nfrom torch import nn\nclass Base(nn.Module):\n    def __init__(self, device='cpu'):\n        super().__init__()\n"
            "        self.device = device\nclass SOTLoss(Base):\n    def __init__(self, device='cpu'):\n        super().__init__(device)\n"
            "        self.proj = nn.Linear(4, 4)\n        self.to(device)\n    def forward(self, x):\n"
            "        x = x.to(self.device)  # expect: DL206\n        return self.proj(x).mean()\n"
            "loss_fn = SOTLoss()\nloss_fn.to('cuda' if torch.cuda.is_available() else 'cpu')\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Decoder(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
            "        self.device = config.device\n    def forward(self, x):\n"
            "        mask = torch.ones(x.shape[0], device=self.device)  # expect: DL206\n        return x * mask\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self, target_device):\n"
            "        super().__init__()\n        self.target_device = target_device\n    def forward(self, features, labels):\n"
            "        labels = labels.to(self.target_device)  # expect: DL206\n        return features, labels\n"
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        context = self.ctx.current_function
        class_info = context.class_info
        function = context.node
        if event.callee.kind == Kind.CLASS and isinstance(event.callee.info, ClassInfo) and function is not None:
            self._check_construction(event, function)
            return
        if class_info is None or function is None or not class_info.is_module or function.name.value != "forward":
            return  # other methods (an EMA update, a generate loop) may use a stored device on purpose
        inputs = _tensor_inputs(function)
        if not inputs:
            return
        device_node = self._device_argument(event)
        helper = None
        if device_node is None:
            device_node = self._handed_to_placing_helper(event, function)
            helper = self.ctx.source_of(event.node.func) if device_node is not None else None
        if device_node is None:
            return
        if isinstance(device_node, cst.Name) and helper is None:
            self._check_availability_helper(device_node.value, function, inputs[0])
            return
        attribute = _self_attribute(device_node, function)
        if attribute is None or not _names_a_device(attribute, class_info):
            return
        stored = _stored_at(class_info, attribute)
        if stored is None or _updated_elsewhere(class_info, attribute):
            return
        if self._placed_at_construction(class_info):
            # a model-parallel shard: its weights are where its stored device says - unless the
            # file moves the object after building it (decided once every construction is seen)
            self._placed_candidates.append((class_info, device_node, stored, inputs[0]))
            return
        self._report(device_node, stored, inputs[0], helper=helper)

    def finish(self) -> None:
        for class_info, device_node, stored, input_name in self._placed_candidates:
            moved = self._moved_after_construction(class_info)
            if moved is not None:
                self._report(device_node, stored, input_name, moved)

    def _report(
        self, device_node: cst.BaseExpression, stored: cst.CSTNode, input_name: str, moved: Optional[cst.Call] = None, helper: Optional[str] = None
    ) -> None:
        spelled = self.ctx.source_of(device_node)
        if moved is None:
            handed = f", and `{helper}()` places its tensors on it" if helper is not None else ""
            self.ctx.report(
                device_node,
                f"`{spelled}` was stored in `__init__` (line {self.ctx.line(stored)}){handed}: under DataParallel every replica "
                f"uses that one device, and after `model.to(...)` it is stale; take the device from the "
                f"input (`{input_name}.device`)",
            )
            return
        self.ctx.report(
            device_node,
            f"`{spelled}` was stored in `__init__` (line {self.ctx.line(stored)}), where the module was placed, but the "
            f"file moves it again (itself or the model that holds it) at line {self.ctx.line(moved)}: from then on the stored device is stale and this "
            f"moves the input back to it; take the device from the input (`{input_name}.device`)",
            related=((moved, "moved again here"),),
        )

    def _moved_after_construction(self, class_info: ClassInfo) -> Optional[cst.Call]:
        """The move the file makes of an object of the class (or of a subclass) after building
        it (``loss = SOTLoss(); loss.to(device)``), or of the model that builds it as a submodule."""
        seen: set[int] = set()
        pending = [class_info]
        while pending:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            for built in self.ctx.facts.module_constructions.values():
                if built.class_info is None or (built.class_info is not current and current not in built.class_info.ancestors()):
                    continue
                if built.moved_by is not None:
                    return built.moved_by
                if built.submodule_of is not None:
                    pending.append(built.submodule_of)
        return None

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: uses of a stored device in a module placed at construction: (class, the device
        #: expression, where it was stored, the input to take the device from)
        self._placed_candidates: list[tuple[ClassInfo, cst.BaseExpression, cst.CSTNode, str]] = []
        self._reported_bindings: set[int] = set()

    def _placed_at_construction(self, class_info: ClassInfo) -> bool:
        """Does ``__init__`` (or the ``__init__`` of a class of this file it builds) move
        modules or itself (``nn.Linear(...).to(device)``, ``self.to(self.device)``)? Then the
        stored device is where the weights are by construction (RPC shards, detectron2 models)."""
        init = class_info.methods.get("__init__")
        if init is None:
            return False
        text = self.ctx.analyzer.body_text(init)
        if _MOVES_SOMETHING.search(text):
            return True
        for other in self.ctx.analyzer.file_classes():
            if other is not class_info and other.is_module and re.search(rf"\b{re.escape(other.name)}\s*\(", text):
                other_init = other.methods.get("__init__")
                if other_init is not None and _MOVES_SOMETHING.search(self.ctx.analyzer.body_text(other_init)):
                    return True
        return False

    def _check_construction(self, event: CallEvent, function: cst.FunctionDef) -> None:
        """``Attention(dim, heads)`` in a function that hands its own ``device`` to the other
        modules it builds (``FeedForward(dim, device=device)``), where the class built takes a
        device whose default is a hard-coded CUDA string and its ``forward`` moves the input to
        the stored one: this submodule keeps sending its inputs to that GPU whatever device the
        model was built for or moved to."""
        built = event.callee.info
        assert isinstance(built, ClassInfo)
        if not built.is_module or any(arg.star for arg, _ in event.args):
            return
        init = built.methods.get("__init__")
        forward = built.methods.get("forward")
        if init is None or forward is None:
            return
        given = set(name for name in helpers.argument_parameters(init, event.args, skip_first=True) if name is not None)
        own = {param.name.value for param in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]}
        for param in [*init.params.posonly_params, *init.params.params, *init.params.kwonly_params][1:]:
            name = param.name.value
            if name in given or name not in own or param.default is None or not is_cuda_literal(param.default):
                continue
            attribute = _stored_from(init, name)
            if attribute is None or not re.search(_PLACED_BY_PARAMETER.format(r"self\." + re.escape(attribute)), self.ctx.analyzer.body_text(forward)):
                continue
            sibling = _handing_on(function, name, event.node)
            if sibling is None:
                continue
            self.ctx.report(
                event.node,
                f"`{self.ctx.source_of(event.node.func)}(...)` leaves `{name}` at its default "
                f"{self.ctx.source_of(param.default)}, while `{self.ctx.source_of(sibling.func)}(...)` at line "
                f"{self.ctx.line(sibling)} is handed this function's `{name}`: its `forward` moves the input to the stored "
                f"{self.ctx.source_of(param.default)} whatever device the model was built for or moved to; pass `{name}={name}`",
                related=((sibling, f"`{name}` handed on here"),),
            )
            return

    def _handed_to_placing_helper(self, event: CallEvent, function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
        """``kan_conv2d(x, ..., self.device)``: a ``self.*`` argument bound to a parameter that a
        function of the file places its tensors with (``.to(device)``, ``device=device``): the
        helper creates or moves them on the stored device, just as ``forward`` would itself."""
        callee = event.callee
        if callee is None or callee.kind != Kind.FUNCTION or not isinstance(callee.info, cst.FunctionDef):
            return None
        helper = callee.info
        body = None
        for (arg, _), param in zip(event.args, helpers.argument_parameters(helper, event.args, skip_first=False)):
            if param is None or _self_attribute(arg.value, function) is None:
                continue
            if body is None:
                body = self.ctx.analyzer.body_text(helper)
            if re.search(_PLACED_BY_PARAMETER.format(re.escape(param)), body):
                return arg.value
        return None

    def _check_availability_helper(self, name: str, function: cst.FunctionDef, input_name: str) -> None:
        """``_device = get_device()`` in ``forward``, where ``get_device`` is a function of the
        file that answers CUDA whenever the machine has a GPU: the tensors made with it follow
        the machine, not the module's weights or inputs. Reported at that binding, once."""
        finder = _Bindings(name)
        walk.visit(function.body, finder)
        if len(finder.values) != 1 or not isinstance(finder.values[0][1], cst.Call):
            return
        statement, call = finder.values[0]
        if id(statement) in self._reported_bindings or not isinstance(call.func, cst.Name) or call.args:
            return
        helper = self.ctx.analyzer.lookup(call.func.value, self.ctx.analyzer.module_state)
        if helper.kind != Kind.FUNCTION or not isinstance(helper.info, cst.FunctionDef):
            return
        body = self.ctx.analyzer.body_text(helper.info)
        if not (_ASKS_AVAILABILITY.search(body) and _NAMES_CUDA.search(body)) or _TAKES_A_TENSOR_DEVICE.search(body):
            return
        self._reported_bindings.add(id(statement))
        self.ctx.report(
            statement,
            f"`{name}` comes from `{call.func.value}()`, which answers CUDA whenever the machine has a GPU, not where this "
            f"module's weights and inputs are: a model kept or loaded on the CPU of a GPU machine, or put on another GPU, "
            f"gets these tensors on the wrong device; take the device from the input (`{input_name}.device`)",
        )

    def _device_argument(self, event: CallEvent) -> Optional[cst.BaseExpression]:
        if event.qualname is not None and event.qualname in api.FACTORIES:
            keyword = keyword_arg(event.node, "device")
            return keyword.value if keyword is not None else None
        if event.method in ("to", "cuda") and event.receiver is not None and event.receiver.kind in (Kind.TENSOR, Kind.BATCH, Kind.UNKNOWN):
            keyword = keyword_arg(event.node, "device")
            if keyword is not None:
                return keyword.value
            positional = positional_args(event.node)
            return positional[0].value if positional else None
        return None


#: a parameter (formatted in, escaped) that a body places tensors with: `.to(d)`, `.to(device=d)`,
#: `.cuda(d)`, `device=d`
_PLACED_BY_PARAMETER = r"(?:\.(?:to|cuda)\(\s*(?:device\s*=\s*)?{0}\s*[,)]|\bdevice\s*=\s*{0}\s*[,)])"
#: a move in a constructor: `.to(` or `.cuda(`
_MOVES_SOMETHING = re.compile(r"\.(to|cuda)\(")


#: a test of whether a GPU exists
_ASKS_AVAILABILITY = re.compile(r"\bis_available\s*\(")
#: CUDA written as a device string
_NAMES_CUDA = re.compile(r"""["']cuda(:\d+)?["']""")
#: a device taken from a tensor or module (`x.device`, `next(model.parameters())`)
_TAKES_A_TENSOR_DEVICE = re.compile(r"\.device\b(?!\s*\()|\.parameters\s*\(|\.get_device\s*\(")


class _Bindings(cst.CSTVisitor):
    """The statements binding a plain name, with the value bound."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[tuple[cst.CSTNode, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == self.name:
                self.values.append((node, node.value))
            elif self.name in bound_names(target.target):
                self.values.append((node, cst.Name("_")))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _tensor_inputs(function: cst.FunctionDef) -> list[str]:
    """Parameters after ``self`` that could carry a device (not annotated as plain Python data)."""
    params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    names = []
    for param in params[1:]:
        annotation = param.annotation
        if annotation is not None and dotted_name(annotation.annotation) in ("int", "float", "bool", "str"):
            continue
        names.append(param.name.value)
    return names


def _self_attribute(node: cst.BaseExpression, function: cst.FunctionDef) -> Optional[str]:
    positional = [*function.params.posonly_params, *function.params.params]
    if not positional:
        return None
    name = dotted_name(node)
    if name is None:
        return None
    owner, _, attribute = name.partition(".")
    if owner != positional[0].name.value or not attribute or "." in attribute:
        return None
    return attribute


def _names_a_device(attribute: str, class_info: ClassInfo) -> bool:
    value = class_info.attributes.get(attribute)
    if value is None:
        # set by a base's `__init__` (`super().__init__(device)`)
        return any(_names_a_device(attribute, base) for base in class_info.bases)
    return value.kind == Kind.DEVICE or attribute == "device" or attribute.endswith("_device")


def _stored_at(class_info: ClassInfo, attribute: str) -> Optional[cst.CSTNode]:
    """The ``self.<attribute> = ...`` statement in the class's ``__init__``, or in a base's that
    it hands the value to (``super().__init__(device)``)."""
    init = class_info.methods.get("__init__")
    if init is not None:
        finder = _AssignmentFinder(attribute)
        walk.visit(init, finder)
        if finder.node is not None:
            return finder.node
    for base in class_info.bases:
        found = _stored_at(base, attribute)
        if found is not None:
            return found
    return None


def _updated_elsewhere(class_info: ClassInfo, attribute: str) -> bool:
    """Another method (an overridden ``to``, a ``set_device``), of the class or a base, keeps
    the attribute current."""
    for owner in (class_info, *class_info.ancestors()):
        for name, method in owner.methods.items():
            if name == "__init__":
                continue
            finder = _AssignmentFinder(attribute)
            walk.visit(method, finder)
            if finder.node is not None:
                return True
    return False


class _AssignmentFinder(cst.CSTVisitor):
    def __init__(self, attribute: str) -> None:
        self.attribute = attribute
        self.node: Optional[cst.CSTNode] = None

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and name.split(".", 1)[-1] == self.attribute and "." in name and self.node is None:
                self.node = node


def _stored_from(init: cst.FunctionDef, parameter: str) -> Optional[str]:
    """The attribute ``__init__`` keeps the parameter in (``self.device = device``)."""
    for statement in helpers.body_statements(init):
        if not isinstance(statement, helpers.SIMPLE_LINES):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name) and small.value.value == parameter:
                name = dotted_name(small.targets[0].target)
                if name is not None and name.count(".") == 1 and name.startswith("self."):
                    return name.split(".", 1)[1]
    return None


class _Handing(cst.CSTVisitor):
    def __init__(self, parameter: str, besides: cst.Call) -> None:
        self.parameter = parameter
        self.besides = besides
        self.found: Optional[cst.Call] = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None or node is self.besides:
            return
        keyword = keyword_arg(node, self.parameter)
        if keyword is not None and isinstance(keyword.value, cst.Name) and keyword.value.value == self.parameter:
            self.found = node


def _handing_on(function: cst.FunctionDef, parameter: str, besides: cst.Call) -> Optional[cst.Call]:
    """A call in ``function`` that hands it its own parameter by keyword (``FeedForward(dim, device=device)``)."""
    finder = _Handing(parameter, besides)
    walk.visit(function, finder)
    return finder.found
