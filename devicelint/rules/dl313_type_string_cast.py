from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import positional_args
from devicelint.analysis.torch_api import BINARY_TENSOR_METHODS, SAME_DEVICE_METHODS
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.rules.base import Example, Rule

#: legacy CUDA tensor type names: `.type()` with one of them picks the device *type* only
_CUDA_TYPE_PREFIXES = ("torch.cuda.",)


class TypeStringCast(Rule):
    """
    ## What it does
    Flags `t.type(x.type())` - casting a tensor to the legacy type string of another tensor to
    make it follow that tensor - and `t.type_as(x)`, which is the same call (PyTorch's
    documentation: "equivalent to `self.type(tensor.type())`"), where `t` is on the host and
    `x` may be on an accelerator - and, inside an `nn.Module`'s methods other than `__init__`,
    `t.type("torch.cuda.FloatTensor")` / `t.type(torch.cuda.FloatTensor)`, and
    `t.type(torch.FloatTensor)` (a CPU type name) on a tensor that may be on the accelerator:
    meant as a dtype cast, it copies the tensor back to the host. Either side of
    `t.type(x.type())` must be known to be a tensor; a `t` computed from `x` itself or made on
    its device (`F.interpolate(x).type(x.type())`, `torch.zeros(n, device=x.device).type(...)`),
    with no move on the way, is already there: the cast changes the dtype only and is left alone.
    A cast whose copy is moved on at once to a named place (`t.type(x.type()).to(x.device)`,
    also through calls that keep the device and take no other operand:
    `torch.sqrt(t.type(x.type())).to(x.device)`) ends where that move puts it: the detour through
    the current GPU wastes a copy but mixes nothing, and is left alone (a bare `.cuda()` names no
    place and does not count).

    A type string names the dtype and the device *type* (`torch.cuda.FloatTensor`), never the
    device index. PyTorch's `Tensor.type` (`THPVariable_type` in
    `torch/csrc/autograd/python_variable_methods.cpp`, read for torch 2.x) keeps the tensor's
    own device when its type already matches and otherwise builds a device from the type
    alone (`at::Device(device_type)`, no index), which CUDA resolves to the *current* device.
    So `t.type(x.type())` with `x` on `cuda:1` leaves a `cuda:0` tensor on `cuda:0` and moves
    a CPU tensor to the current GPU (usually `cuda:0`), not to `x`'s. (Fake tensors cannot
    check this on a CPU build: a `.type()` to a CUDA type initialises CUDA first; the reverse,
    `.type("torch.FloatTensor")` on a fake `cuda:1` tensor, gives a CPU float tensor, and
    `.to(x)` on a fake `cuda:0` float64 tensor gives `x`'s `cuda:1` and float32.)

    ## Why is this bad?
    On a machine with more than one GPU (a model on `cuda:1`, a process that never called
    `torch.cuda.set_device`) the cast lands on another GPU than the tensor it was meant to
    follow, and the next operation raises "Expected all tensors to be on the same device,
    but found at least two devices, cuda:1 and cuda:0". A literal CUDA type string in a
    module also breaks the model on the CPU.

    ## Example
    ```python
    mask = mask.type(scores.type())
    ```

    ## Use instead
    ```python
    mask = mask.to(scores)          # dtype and device of `scores`
    mask = mask.to(scores.device)   # device only
    ```

    For a CPU type name, `t.type(torch.FloatTensor)` -> `t.float()` (unsafe: the tensor then
    stays on its device, which is the point, but changes where the code after it computes).

    The fix, `t.type(x.type())` -> `t.to(x)`, is unsafe (applied with `--unsafe-fixes`): `.to(x)`
    takes `x`'s dtype and its full device, so the result differs from before exactly where `x`
    is not on the current device - the bug - which changes where multi-GPU code computes; review
    it there. The literal form has no fix: which tensor to follow is the program's to say.
    """

    code = "DL313"
    name = "type-string-cast"
    severity = Severity.WARNING
    summary = (
        "`.type(x.type())` / `.type('torch.cuda.FloatTensor')` picks the current GPU, not `x`'s; use `.to(x)`. "
        "`.type(torch.FloatTensor)` on a GPU tensor in a model copies it to the host; use `.float()`."
    )
    fix_safety = "unsafe"
    valid = (
        "import torch\nx = torch.randn(3, device='cuda:1')\ny = torch.zeros(3).to(x)\n",
        "import torch\nx = torch.randn(3)\nname = x.type()\n",
        "import torch\nx = torch.randn(3)\ny = x.type(torch.float16)\n",
        # unknown objects: `.type()` is not known to be a tensor's
        "def convert(a, b):\n    return a.type(b.type())\n",
        # a CUDA type string outside a module's methods: DL306/DL314 territory, not this rule's
        "import torch\nx = torch.randn(3).type(torch.cuda.FloatTensor)\n",
        # computed from the followed tensor, or made on its device: the cast changes the dtype only
        "import torch\nimport torch.nn.functional as F\nx = torch.randn(1, 3, 8, 8, device='cuda:1').half()\n"
        "y = F.interpolate(x.float(), scale_factor=2.0).type(x.type())\n"
        "z = torch.zeros(4, device=x.device).type(x.type())\n",
        # the cast's copy moved on to the right device at once (a wasted copy, not a mix)
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        table = torch.ones(x.size(-1))\n        return x + table.type_as(x).to(device=x.device)\n"
        "net = Net().to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n",
        # a type-string cast moved on at once (through a call that keeps the device)
        "import torch\nfrom torch import nn\nclass Attn(nn.Module):\n    def forward(self, q):\n"
        "        return q / torch.sqrt(torch.tensor(64).type(q.type())).to(q.device)\n",
        # type_as of a tensor already where the other is: a dtype cast
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        mask = (x > 0).type_as(x)\n        return x * mask\n",
    )
    invalid = (
        Example(
            "import torch\nscores = torch.randn(4, device='cuda:1')\nmask = torch.ones(4)\n"
            "mask = mask.type(scores.type())  # expect: DL313\n",
            "import torch\nscores = torch.randn(4, device='cuda:1')\nmask = torch.ones(4)\n"
            "mask = mask.to(scores)  # expect: DL313\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        noise = torch.randn(x.shape).type(torch.cuda.FloatTensor)  # expect: DL313\n        return x + noise\n"
        ),
        # a window built on the host follows the images by type_as: the current GPU, not theirs
        Example(
            "import torch\nfrom torch import nn\nclass SSIM(nn.Module):\n    def forward(self, img1, img2):\n"
            "        window = torch.ones(img1.size(1), 1, 11, 11) / 121.0\n"
            "        window = window.type_as(img1)  # expect: DL313\n        return (img1 - img2) * window.mean()\n"
            "loss = SSIM().to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n",
            "import torch\nfrom torch import nn\nclass SSIM(nn.Module):\n    def forward(self, img1, img2):\n"
            "        window = torch.ones(img1.size(1), 1, 11, 11) / 121.0\n"
            "        window = window.to(img1)  # expect: DL313\n        return (img1 - img2) * window.mean()\n"
            "loss = SSIM().to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Attn(nn.Module):\n    def forward(self, x, mask):\n"
            "        weights = x.softmax(-1)\n"
            "        return weights * mask.unsqueeze(1).type(torch.FloatTensor)  # expect: DL313\n",
            fixed="import torch\nfrom torch import nn\nclass Attn(nn.Module):\n    def forward(self, x, mask):\n"
            "        weights = x.softmax(-1)\n"
            "        return weights * mask.unsqueeze(1).float()  # expect: DL313\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: `x.type()` calls (no argument) whose receiver is a tensor, by node id
        self._tensor_type_queries: set[int] = set()
        #: `t.type_as(x)` of a host `t` following an `x` that may be on an accelerator: the call,
        #: `t` and `x` (reported in finish, unless moved on at once)
        self._type_as_casts: list[tuple[cst.Call, cst.BaseExpression, cst.BaseExpression]] = []
        #: receivers of a move (`.to(...)`, `.cuda(...)`), by node id
        self._moved_on: set[int] = set()
        #: casts whose result is moved to a named place (`.to(d)`, `.cuda(i)`), directly or through
        #: calls that keep the device (`torch.sqrt(t.type(x.type())).to(x.device)`), by node id
        self._placed_after: set[int] = set()
        #: `t.type(x.type())` findings waiting for the end of the file: the call, the followed tensor
        self._follow_casts: list[tuple[cst.Call, cst.BaseExpression]] = []

    def on_call(self, event: CallEvent) -> None:
        if event.method in ("to", "cuda") and isinstance(event.node.func, cst.Attribute):
            # `t.type_as(x).to(x.device)`: the cast's copy is moved on at once (see finish)
            self._moved_on.add(id(event.node.func.value))
            if event.node.args:
                self._mark_placed(event.node.func.value)
        if event.method == "type_as" and event.receiver is not None and isinstance(event.node.func, cst.Attribute):
            self._check_type_as(event)
            return
        if event.method != "type" or event.receiver is None or not isinstance(event.node.func, cst.Attribute):
            return
        if not event.node.args:
            if event.receiver.is_tensor_like:
                self._tensor_type_queries.add(id(event.node))
            return
        target = _type_argument(event)
        if target is None:
            return
        target_node, target_value = target
        if _is_type_query(target_node):
            self._check_follow(event, target_node)
        elif _names_cuda_type(target_node, target_value) and event.receiver.is_tensor_like and self.ctx.in_module_method:
            self.ctx.report(
                event.node,
                f"`.type({self.ctx.source_of(target_node)})` names the device type, not the device: the tensor "
                "lands on the current GPU (or stays on its own), not on the model's device, and the module breaks "
                "on the CPU; use `.to(device=x.device, dtype=...)` with an input `x`",
            )
        elif self.ctx.in_module_method and event.receiver.is_tensor_like:
            self._check_host_type(event, target_node, target_value)

    def _check_host_type(self, event: CallEvent, target_node: cst.BaseExpression, target_value: Value) -> None:
        """``mask.type(torch.FloatTensor)`` in a model's method, meant as a dtype cast: the legacy
        name is the *CPU* type, so on a GPU model the tensor comes back to the host."""
        name = _host_type_name(target_value)
        if name is None:
            return
        receiver = event.receiver
        if receiver is None or receiver.device is None or not receiver.device.may_be_accelerator:
            return
        method = _HOST_TYPE_METHODS.get(name)
        fix = None
        receiver_node = event.node.func.value  # type: ignore[union-attr]
        if method is not None and len(event.node.args) == 1:
            text = f"{self.ctx.module.code_for_node(receiver_node)}.{method}()"
            fix = FixSpec(f"Use `.{method}()`", (NodeEdit(event.node, "replace", text),), safe=False)
        advice = f"`.{method}()`" if method is not None else "`.to(dtype=...)`"
        self.ctx.report(
            event.node,
            f"`.type({self.ctx.source_of(target_node)})` names the CPU tensor type: on a GPU the tensor is copied "
            f"back to the host, and the next operation with the model's tensors mixes devices; cast with {advice}, "
            "which keeps the device",
            fix=fix,
        )

    def _check_follow(self, event: CallEvent, query: cst.Call) -> None:
        assert isinstance(query.func, cst.Attribute)
        followed = query.func.value
        if not (event.receiver is not None and event.receiver.is_tensor_like or id(query) in self._tensor_type_queries):
            return
        receiver_node = event.node.func.value  # type: ignore[union-attr]
        if self._derived_from(receiver_node, followed):
            return
        self._follow_casts.append((event.node, followed))

    def _report_follow(self, node: cst.Call, followed: cst.BaseExpression) -> None:
        receiver_node = node.func.value  # type: ignore[union-attr]
        fix = None
        if len(node.args) == 1:
            module = self.ctx.module
            text = f"{module.code_for_node(receiver_node)}.to({module.code_for_node(followed)})"
            fix = FixSpec(f"Use `.to({self.ctx.source_of(followed)})`", (NodeEdit(node, "replace", text),), safe=False)
        shown = self.ctx.source_of(followed)
        self.ctx.report(
            node,
            f"`.type({shown}.type())` copies `{shown}`'s dtype and device type but not its device index: the result "
            f"stays on its own GPU or goes to the current one, not necessarily `{shown}`'s; use `.to({shown})`",
            fix=fix,
        )

    def _check_type_as(self, event: CallEvent) -> None:
        """``t.type_as(x)`` is ``t.type(x.type())`` (PyTorch's documentation says so): where ``t``
        is on the host and ``x`` may be on an accelerator, the copy goes to the current GPU, not
        to ``x``'s. A tensor already where ``x`` is only changes its dtype: left alone."""
        receiver = event.receiver
        positional = [(arg, value) for arg, value in event.args if arg.keyword is None and not arg.star]
        if receiver is None or not receiver.is_tensor_like or receiver.device is None or not receiver.device.is_cpu or len(positional) != 1:
            return
        followed, followed_value = positional[0][0].value, positional[0][1]
        if not followed_value.is_tensor_like or followed_value.device is None or not followed_value.device.may_be_accelerator:
            return
        receiver_node = event.node.func.value  # type: ignore[union-attr]
        if self._derived_from(receiver_node, followed):
            return
        self._type_as_casts.append((event.node, receiver_node, followed))

    def _mark_placed(self, node: cst.BaseExpression) -> None:
        """The value moved to a named device, and the casts it is computed from by calls that keep
        the device and take no other operand: ``t.type(x.type()).float()``, ``torch.sqrt(...)``."""
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            self._placed_after.add(id(node))
            method = node.func.attr.value
            positional = positional_args(node)
            if method not in SAME_DEVICE_METHODS or method in BINARY_TENSOR_METHODS:
                return
            base = node.func.value
            if isinstance(base, cst.Name) and base.value == "torch" and len(positional) == 1 and len(node.args) == 1:
                node = positional[0].value  # `torch.sqrt(t)`
            elif not node.args and not (isinstance(base, cst.Name) and base.value == "torch"):
                node = base  # `t.float()`
            else:
                return

    def finish(self) -> None:
        for node, followed in self._follow_casts:
            # `t.type(x.type()).to(x.device)`: the copy ends where the move puts it; only a wasted copy
            if id(node) not in self._placed_after:
                self._report_follow(node, followed)
        module = self.ctx.module
        for node, receiver_node, followed in self._type_as_casts:
            if id(node) in self._moved_on:
                continue
            text = f"{module.code_for_node(receiver_node)}.to({module.code_for_node(followed)})"
            shown = self.ctx.source_of(followed)
            self.ctx.report(
                node,
                f"`.type_as({shown})` is `.type({shown}.type())`: it copies this host tensor to the current GPU, not "
                f"necessarily `{shown}`'s; use `.to({shown})`",
                fix=FixSpec(f"Use `.to({shown})`", (NodeEdit(node, "replace", text),), safe=False),
            )

    def _derived_from(self, receiver: cst.BaseExpression, followed: cst.BaseExpression) -> bool:
        """Is the receiver computed from the followed tensor (`F.interpolate(x).type(x.type())`,
        `torch.zeros(n, device=x.device).type(x.type())`) with no move on the way? Then it is
        already on that tensor's device and the cast changes the dtype only."""
        module = self.ctx.module
        wanted = module.code_for_node(followed)
        collector = _Mentions()
        walk.visit(receiver, collector)
        if collector.moves:
            return False
        return any(module.code_for_node(node) == wanted for node in collector.references)


def _type_argument(event: CallEvent) -> Optional[tuple[cst.BaseExpression, Value]]:
    for arg, value in event.args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "dtype":
            return arg.value, value
    return None


def _is_type_query(node: cst.BaseExpression) -> bool:
    """``x.type()``: the legacy type string of ``x``."""
    return (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "type"
    )


#: legacy CPU tensor type names and the cast that keeps the device
_HOST_TYPE_METHODS = {
    "FloatTensor": "float",
    "DoubleTensor": "double",
    "HalfTensor": "half",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "long",
    "IntTensor": "int",
    "ShortTensor": "short",
    "CharTensor": "char",
    "ByteTensor": "byte",
    "BoolTensor": "bool",
}


def _legacy_type_name(value: Value) -> Optional[str]:
    """The dotted name a ``.type()`` argument spells: ``"torch.cuda.FloatTensor"`` as a string or
    ``torch.FloatTensor`` as a name; None for anything else."""
    if value.kind == Kind.STR and isinstance(value.literal, str):
        return value.literal
    if value.kind == Kind.REF and value.qualname is not None:
        return value.qualname
    return None


def _host_type_name(value: Value) -> Optional[str]:
    """``torch.FloatTensor`` / ``"torch.FloatTensor"``: the CPU type's short name, else None."""
    prefix, _, name = (_legacy_type_name(value) or "").rpartition(".")
    return name if prefix == "torch" and name in _HOST_TYPE_METHODS else None


def _names_cuda_type(node: cst.BaseExpression, value: Value) -> bool:
    name = _legacy_type_name(value)
    if name is None or not name.startswith(_CUDA_TYPE_PREFIXES):
        return False
    return value.kind == Kind.STR or name.endswith("Tensor")


class _Mentions(cst.CSTVisitor):
    """The names, attributes and subscripts an expression mentions, and whether it moves a value."""

    def __init__(self) -> None:
        self.references: list[cst.BaseExpression] = []
        self.moves = False

    def visit_Name(self, node: cst.Name) -> None:
        self.references.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.references.append(node)
        if node.attr.value in ("to", "cuda", "cpu", "xpu", "mps"):
            self.moves = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.references.append(node)
