from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: typed CUDA constructors and the dtype each makes
CUDA_TYPED_CONSTRUCTORS = {
    "torch.cuda.FloatTensor": "torch.float32",
    "torch.cuda.DoubleTensor": "torch.float64",
    "torch.cuda.HalfTensor": "torch.float16",
    "torch.cuda.BFloat16Tensor": "torch.bfloat16",
    "torch.cuda.ByteTensor": "torch.uint8",
    "torch.cuda.CharTensor": "torch.int8",
    "torch.cuda.ShortTensor": "torch.int16",
    "torch.cuda.IntTensor": "torch.int32",
    "torch.cuda.LongTensor": "torch.int64",
    "torch.cuda.BoolTensor": "torch.bool",
}
RENAMED = {
    "torch.cuda.memory_cached": "memory_reserved",
    "torch.cuda.max_memory_cached": "max_memory_reserved",
    "torch.cuda.reset_max_memory_cached": "reset_peak_memory_stats",
}
_LAUNCHER = re.compile(r"-m\s+torch\.distributed\.launch\b")


class LegacyDeviceApi(Rule):
    """
    ## What it does
    Flags device APIs that PyTorch replaced: the typed CUDA constructors
    (`torch.cuda.FloatTensor(...)`, `torch.cuda.LongTensor(...)`, ...);
    `torch.set_default_tensor_type` with a CUDA type; `.cuda(device_id=...)`, whose keyword is
    `device`; the CPU typed constructors (`torch.Tensor(...)`, `torch.FloatTensor(...)`) given a
    `device=` that can be the GPU, which they refuse; `torch.cuda.memory_cached` / `max_memory_cached` / `reset_max_memory_cached`; and
    `python -m torch.distributed.launch` in strings (launch commands built by scripts; docstrings
    are left alone). A typed CUDA constructor kept in a variable to make tensors later
    (`self.Tensor = torch.cuda.FloatTensor if gpu_ids else torch.Tensor`) is flagged where it is
    kept when the program puts its work on a GPU it picks by index (`net.cuda(gpu_ids[0])`)
    and never makes that GPU current (`torch.cuda.set_device`, `with torch.cuda.device(...)`):
    the constructor allocates on the current GPU, GPU 0, so its tensors and that work end up
    on different GPUs ("Some of weight/gradient/input tensors are located on different GPUs").
    Kept without such an index, it is left alone: it allocates where `.cuda()` puts the rest.
    Kept in a program that puts nothing else on a GPU (no `.cuda()`, `.to(device)`, `device=`,
    default device or DataParallel), it is flagged: its tensors go to the GPU whenever one is
    available, while the model they are fed to stays where it is (pytorch-summary: "Input type
    (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"); a choice
    that follows a tensor's placement (`... if mu.is_cuda else torch.FloatTensor`) is left alone.
    It also flags a check that refuses what is not a CPU typed tensor, `if not isinstance(mask,
    torch.BoolTensor): raise ...`: those classes are the host types, and a GPU tensor is an
    instance of `torch.cuda.BoolTensor` only. A positive test (`isinstance(t, (int,
    torch.LongTensor))`) and one that also names the CUDA type or `torch.Tensor` are left alone.

    ## Why is this bad?
    The typed constructors are legacy: they ignore `torch.set_default_device`, mix
    "sizes or data" in one signature, and cannot say which GPU. `set_default_tensor_type` is
    deprecated since PyTorch 2.1 in favour of `torch.set_default_device` and
    `torch.set_default_dtype`. `.cuda(device_id=1)` raises `TypeError` (the parameter is
    `device`); `torch.Tensor(data, device=x.device)` raises RuntimeError once `x` is on the
    GPU ("legacy constructor expects device type: cpu but device type: cuda was passed"). The
    `*_cached` memory functions are deprecated aliases of the `*_reserved` ones, and
    `torch.distributed.launch` is deprecated in favour of `torchrun`.

    ## Example
    ```python
    mask = torch.cuda.BoolTensor([True, False])
    model.cuda(device_id=1)
    print(torch.cuda.memory_cached())
    ```

    ## Use instead
    ```python
    mask = torch.tensor([True, False], dtype=torch.bool, device="cuda")
    model.cuda(device=1)
    print(torch.cuda.memory_reserved())
    ```
    Fixes, all safe (each keeps what the code did): a typed constructor called with one list or
    tuple literal becomes `torch.tensor(data, dtype=..., device="cuda")`, and one called with
    integer sizes becomes `torch.empty(sizes, dtype=..., device="cuda")` (both leave the values
    as the constructor did); `device_id=` becomes `device=`; a `*_cached` function becomes its
    `*_reserved` name (`reset_max_memory_cached` becomes `reset_peak_memory_stats`, which it
    calls). Other constructor calls, `set_default_tensor_type` (one call becomes two) and
    launch commands (torchrun's flags differ) are left to you.
    """

    code = "DL306"
    name = "legacy-device-api"
    severity = Severity.WARNING
    summary = "Legacy device APIs: typed CUDA constructors, a CPU typed constructor given a GPU `device=`, `set_default_tensor_type`, `.cuda(device_id=)`, `memory_cached`, `torch.distributed.launch`; `not isinstance(x, torch.BoolTensor)`, which rejects GPU tensors."
    fix_safety = "safe"
    # a typed CUDA constructor in code its caller places is hard-coded CUDA first: DL302 says
    # where the tensor belongs (the input's device), where this rule's fix would write "cuda"
    yields_to = ("DL302",)
    valid = (
        "import torch\nmask = torch.tensor([True, False], device='cuda')\n",
        "import torch\nx = torch.FloatTensor([1.0])\n",
        "import torch\ntorch.set_default_tensor_type(torch.DoubleTensor)\n",
        "import torch\nmodel.cuda(device=1)\n",
        "import torch\nused = torch.cuda.memory_reserved()\n",
        "import torch\ncommand = 'torchrun --nproc_per_node 2 train.py'\n",
        'import torch\ndef main():\n    """Run with `python -m torch.distributed.launch --nproc_per_node 2`."""\n',
        "import torch\nclass Pool:\n    def cuda(self, device_id=0):\n        return self\nPool().cuda(device_id=1)\n",
        # kept for later in a program that puts its work on the current GPU
        "import torch\ncuda = torch.cuda.is_available()\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\nnet = Net().cuda()\n",
        # kept for later, chosen by where a tensor is: follows that tensor (PyTorch-GAN's UNIT)
        "import torch\ndef sample(mu):\n    Tensor = torch.cuda.FloatTensor if mu.is_cuda else torch.FloatTensor\n"
        "    return mu + Tensor(mu.size()).normal_()\n",
        # kept for later, and the chosen GPU is made current
        "import torch\ntorch.cuda.set_device(rank)\nTensor = torch.cuda.FloatTensor\nnet = Net().cuda(rank)\n",
        # a legacy constructor told the CPU, or a device left at None, makes its host tensor
        "import torch\nx = torch.Tensor([0.0, 1.0], device='cpu')\ny = torch.LongTensor(4, device=torch.device('cpu'))\n",
        "import torch\ndef scores(n, device=None):\n    return torch.Tensor([0.0] * n, device=device)\nscores(3)\n",
        # a type test that picks host integer tensors out, or names the CUDA type as well
        "import torch\ndef step(t):\n    if isinstance(t, (int, torch.LongTensor)):\n        raise ValueError(t)\n",
        "import torch\ndef check(m):\n    if not isinstance(m, (torch.BoolTensor, torch.cuda.BoolTensor)):\n        raise TypeError(m)\n",
    )
    invalid = (
        Example(
            "import torch\nTensor = torch.cuda.FloatTensor if gpu >= 0 else torch.FloatTensor  # expect: DL306\n"
            "net = Net().cuda(gpu)\nlabels = Tensor(4).fill_(1.0)\n"
        ),
        Example(
            "import torch\nmask = torch.cuda.BoolTensor([True, False])  # expect: DL306\n",
            "import torch\nmask = torch.tensor([True, False], dtype=torch.bool, device=\"cuda\")  # expect: DL306\n",
        ),
        Example(
            "import torch as t\nbuffer = t.cuda.FloatTensor(4, 16)  # expect: DL306\n",
            "import torch as t\nbuffer = t.empty(4, 16, dtype=t.float32, device=\"cuda\")  # expect: DL306\n",
        ),
        Example("import torch\nids = torch.cuda.LongTensor(batch)  # expect: DL306\n"),
        # a CPU typed constructor given a device that can be the GPU raises (joeynmt's beam
        # search; diffusers' Wuerstchen pipeline for numpy image embeddings)
        Example(
            "import torch\ndef beam(encoder_output, size):\n"
            "    return torch.Tensor([0.0] + [float('-inf')] * (size - 1), device=encoder_output.device)  # expect: DL306\n"
        ),
        Example(
            "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "def embed(array):\n    return torch.FloatTensor(array, device=device)  # expect: DL306\n"
        ),
        # kept for later in a program that puts nothing else on a GPU (pytorch-summary): the
        # input goes to the GPU when one is available, the model stays where it was built
        Example(
            "import torch\nfrom torch import nn\ndef summary(model, size):\n    if torch.cuda.is_available():\n"
            "        dtype = torch.cuda.FloatTensor  # expect: DL306\n    else:\n        dtype = torch.FloatTensor\n"
            "    return model(torch.rand(2, *size).type(dtype))\nsummary(nn.Linear(4, 2), (4,))\n"
        ),
        Example("from torch import cuda\nids = cuda.LongTensor([1, 2])  # expect: DL306\n"),
        Example(
            "import torch\ndef masked_mean(x, keep):\n    if not isinstance(keep, torch.BoolTensor):  # expect: DL306\n"
            "        raise TypeError('keep must be boolean')\n    return x[keep].mean()\n"
        ),
        Example("import torch\ntorch.set_default_tensor_type('torch.cuda.FloatTensor')  # expect: DL306\n"),
        Example(
            "import torch\nmodel.cuda(device_id=1)  # expect: DL306\n",
            "import torch\nmodel.cuda(device=1)  # expect: DL306\n",
        ),
        Example(
            "from torch import cuda\nprint(cuda.max_memory_cached())  # expect: DL306\n",
            "from torch import cuda\nprint(cuda.max_memory_reserved())  # expect: DL306\n",
        ),
        Example(
            "import torch\nimport os\nos.system('python -m torch.distributed.launch --nproc_per_node 2 train.py')  # expect: DL306\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._defines_cuda: Optional[bool] = None
        #: typed CUDA constructors stored to build tensors later (``Tensor = torch.cuda.FloatTensor``)
        self._stored: dict[int, tuple[cst.BaseExpression, str]] = {}
        #: moves onto a GPU chosen by index (``net.cuda(gpu_ids[0])``) and the index
        self._indexed_moves: dict[int, tuple[cst.Call, cst.BaseExpression]] = {}
        #: the program makes a GPU current (``torch.cuda.set_device``, ``with torch.cuda.device``)
        self._sets_current_device = False
        #: the program puts something on a GPU other than through a kept typed constructor
        #: (``.cuda()``, ``.to(device)``, ``device=``, a default device, DataParallel)
        self._places_on_gpu = False

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        # `self.Tensor = torch.cuda.FloatTensor if gpu_ids else torch.Tensor`: kept to be called
        # (or handed to `.type()`) later, which is where it allocates
        for candidate in (value_node.body, value_node.orelse) if isinstance(value_node, cst.IfExp) else (value_node,):
            if not isinstance(candidate, cst.Attribute):
                continue
            qualname = self.ctx.analyzer.qualname_of(candidate, self.ctx.analyzer.module_state)
            if qualname in CUDA_TYPED_CONSTRUCTORS:
                self._stored.setdefault(id(candidate), (candidate, qualname))

    def on_condition(self, node: cst.BaseExpression, value: Value) -> None:
        """`if not isinstance(mask, torch.BoolTensor): raise ...`: the CPU typed tensor classes
        are the host types (a tensor on the GPU is a `torch.cuda.BoolTensor`, which is no
        subclass of them), so the check rejects every GPU tensor. Only the negated test - the
        one that refuses what is not a host tensor - is flagged: a positive test that picks
        host integer tensors out (`isinstance(t, (int, torch.LongTensor))`) lets a GPU one
        through, not away."""
        if not (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)):
            return
        call = node.expression
        if not (isinstance(call, cst.Call) and dotted_name(call.func) == "isinstance" and len(call.args) == 2):
            return
        classes = call.args[1].value
        elements = [element.value for element in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        names = [self.ctx.analyzer.qualname_of(element, self.ctx.analyzer.module_state) for element in elements]
        host_types = [name for name in names if name in api.LEGACY_TYPED_CONSTRUCTORS and name != "torch.Tensor"]
        if not host_types or any(name not in api.LEGACY_TYPED_CONSTRUCTORS for name in names) or "torch.Tensor" in names:
            return  # also a CUDA type, `torch.Tensor`, or a class of its own: GPU tensors may pass
        spelled = self.ctx.source_of(call.args[1].value)
        cuda_type = "torch.cuda." + host_types[0].rsplit(".", 1)[1]
        dtype = api_dtype(host_types[0])
        self.ctx.report(
            call,
            f"`{spelled}` is the CPU tensor type: a tensor on the GPU is a `{cuda_type}`, not an instance of it, so this "
            f"check rejects every GPU tensor; test the dtype instead (`{self.ctx.source_of(call.args[0].value)}.dtype == {dtype}`)",
        )

    def on_call(self, event: CallEvent) -> None:
        qualname = event.qualname
        if qualname in ("torch.cuda.set_device", "torch.cuda.device"):
            self._sets_current_device = True
        elif event.method == "cuda":
            index = _gpu_index(event.node)
            if index is not None:
                self._indexed_moves.setdefault(id(event.node), (event.node, index))
        if not self._places_on_gpu and _may_place_on_gpu(event):
            self._places_on_gpu = True
        if qualname in CUDA_TYPED_CONSTRUCTORS:
            self._typed_constructor(event, qualname)
        elif qualname in api.LEGACY_TYPED_CONSTRUCTORS:
            self._legacy_constructor_given_device(event)
        elif qualname == "torch.set_default_tensor_type":
            self._default_tensor_type(event)
        elif qualname in RENAMED:
            self._renamed(event, qualname)
        elif event.method == "cuda" and keyword_arg(event.node, "device_id") is not None:
            self._device_id_keyword(event)

    def finish(self) -> None:
        self._report_stored_constructors()
        if "torch.distributed.launch" not in self.ctx.source:
            return  # the common case costs a text search, not a walk
        finder = _LaunchStrings()
        walk.visit(self.ctx.module, finder)
        for node in finder.found:
            self.ctx.report(
                node,
                "`python -m torch.distributed.launch` is deprecated; launch with `torchrun` "
                "(it sets LOCAL_RANK in the environment instead of passing --local-rank)",
            )

    def _report_stored_constructors(self) -> None:
        """A typed CUDA constructor kept for later, in a program that puts its work on a GPU it
        picks by index without making that GPU current: the constructor allocates on the
        current device (GPU 0), so its tensors and the model's end up on different GPUs. Or in
        a program that puts nothing else on a GPU: its tensors meet modules and tensors that
        stay on the CPU."""
        if not self._stored:
            return
        if not self._places_on_gpu:
            self._report_only_gpu_tensors()
            return
        if not self._indexed_moves or self._sets_current_device:
            return
        move, index = min(self._indexed_moves.values(), key=lambda found: self.ctx.line(found[0]))
        for node, qualname in self._stored.values():
            spelled = self.ctx.source_of(node)
            self.ctx.report(
                node,
                f"`{spelled}` is a legacy typed constructor, kept here to make tensors later: it allocates on the current "
                f"GPU (GPU 0 unless `torch.cuda.set_device` says otherwise), but this program puts its work on GPU "
                f"`{self.ctx.source_of(index)}` (line {self.ctx.line(move)}): when that is another GPU, the tensors it makes "
                f"cannot meet that work; make that GPU current with `torch.cuda.set_device`, or create tensors with "
                f"`device=` and `dtype={CUDA_TYPED_CONSTRUCTORS[qualname]}`",
                related=((move, "placed on a GPU chosen by index here"),),
            )

    def _report_only_gpu_tensors(self) -> None:
        """The program reaches the GPU only through the kept constructor (pytorch-summary's
        `dtype = torch.cuda.FloatTensor` when a GPU is available): the tensors it makes go to
        the GPU whatever device the model they are fed to is on, and nothing here moves a model
        there ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should
        be the same"). A choice that follows a tensor's placement (`torch.cuda.FloatTensor if
        mu.is_cuda else torch.FloatTensor`) is right where that tensor is, and is left alone."""
        tests = _EnclosingTests({id(node) for node, _ in self._stored.values()})
        walk.visit(self.ctx.module, tests)
        for node, qualname in self._stored.values():
            if any(_PLACEMENT_TEST.search(self.ctx.module.code_for_node(test)) for test in tests.found.get(id(node), ())):
                continue
            spelled = self.ctx.source_of(node)
            self.ctx.report(
                node,
                f"`{spelled}` is a legacy typed constructor, kept here to make tensors later: they go to the GPU "
                f"whenever this runs on one, but nothing else in this file is put on a GPU, so the model and "
                f"tensors they meet stay where they are (a model that was not moved: \"Input type "
                f"(torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same\"); take the "
                f"device from the model (`next(model.parameters()).device`) and create tensors with `device=` "
                f"and `dtype={CUDA_TYPED_CONSTRUCTORS[qualname]}`",
            )

    def _typed_constructor(self, event: CallEvent, qualname: str) -> None:
        spelled = self.ctx.source_of(event.node.func)
        self.ctx.report(
            event.node,
            f"`{spelled}` is a legacy typed constructor; create the tensor with a factory and "
            f"`dtype={CUDA_TYPED_CONSTRUCTORS[qualname]}, device=\"cuda\"`",
            fix=self._constructor_fix(event, qualname),
        )

    def _legacy_constructor_given_device(self, event: CallEvent) -> None:
        """`torch.Tensor(data, device=x.device)`: the CPU typed constructors make host tensors
        only; handed any other device they raise "legacy constructor expects device type: cpu
        but device type: cuda was passed" (checked on torch 2.13 for `torch.Tensor`,
        `torch.FloatTensor`, `torch.LongTensor` with data and with sizes, for cuda and meta).
        Reported where the device the call is given can be an accelerator; the CPU, `None` and
        a device the analysis cannot place are left alone."""
        given = keyword_arg(event.node, "device")
        made = event.result.device
        if given is None or event.result.kind != Kind.TENSOR or made is None or made.is_cpu:
            return
        spelled = self.ctx.source_of(event.node.func)
        self.ctx.report(
            event.node,
            f"`{spelled}` is a legacy constructor that makes tensors only on the CPU: given "
            f"`device={self.ctx.source_of(given.value)}`, which can be the GPU, it raises \"legacy constructor expects "
            f"device type: cpu but device type: cuda was passed\"; use `torch.tensor(data, device=...)` (or "
            f"`torch.empty(sizes, device=...)`) with the dtype it should have",
        )

    def _constructor_fix(self, event: CallEvent, qualname: str) -> Optional[FixSpec]:
        node = event.node
        args = list(node.args)
        if not args or any(arg.keyword is not None or arg.star for arg in args):
            return None
        parts = self.ctx.module.code_for_node(node.func).split(".")
        if len(parts) < 3 or parts[-2] != "cuda":
            return None  # spelled through `from torch import cuda`: no torch name to build on
        torch_prefix = ".".join(parts[:-2])  # `torch` or its alias
        dtype = torch_prefix + CUDA_TYPED_CONSTRUCTORS[qualname][len("torch") :]
        if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
            factory = "tensor"
        elif all(isinstance(arg.value, cst.Integer) for arg in args):
            factory = "empty"
        else:
            return None  # a name could hold sizes or data: the constructor decided at run time
        inner = ", ".join(self.ctx.module.code_for_node(arg.value) for arg in args)
        replacement = f'{torch_prefix}.{factory}({inner}, dtype={dtype}, device="cuda")'
        return FixSpec(f"Use `{torch_prefix}.{factory}(..., device=\"cuda\")`", (NodeEdit(node, "replace", replacement),))

    def _default_tensor_type(self, event: CallEvent) -> None:
        positional = positional_args(event.node)
        if not positional:
            return
        argument = positional[0].value
        spelled = (
            argument.evaluated_value
            if isinstance(argument, cst.SimpleString)
            else self.ctx.analyzer.qualname_of(argument, event.state)
        )
        if not isinstance(spelled, str) or not spelled.startswith("torch.cuda."):
            return
        self.ctx.report(
            event.node,
            "`torch.set_default_tensor_type` is deprecated since PyTorch 2.1; use "
            '`torch.set_default_device("cuda")` and `torch.set_default_dtype(...)`',
        )

    def _renamed(self, event: CallEvent, qualname: str) -> None:
        func = event.node.func
        new_name = RENAMED[qualname]
        old_name = qualname.rsplit(".", 1)[1]
        fix = None
        if isinstance(func, cst.Attribute):
            fix = FixSpec(f"Rename to `{new_name}`", (NodeEdit(func.attr, "replace", new_name),))
        self.ctx.report(event.node, f"`{old_name}` is a deprecated alias; use `torch.cuda.{new_name}`", fix=fix)

    def _device_id_keyword(self, event: CallEvent) -> None:
        if self._defines_cuda is None:
            self._defines_cuda = re.search(r"\bdef\s+cuda\s*\(", self.ctx.source) is not None
        if self._defines_cuda:
            return  # the file's own cuda() method may well take device_id
        keyword = keyword_arg(event.node, "device_id")
        assert keyword is not None and keyword.keyword is not None
        self.ctx.report(
            event.node,
            "`.cuda()` takes `device=`, not `device_id=`: this call raises TypeError",
            fix=FixSpec("Rename the keyword to `device`", (NodeEdit(keyword.keyword, "replace", "device"),)),
        )


#: a test that reads where a tensor is: a choice made by it follows that tensor
_PLACEMENT_TEST = re.compile(r"\.(is_cuda|device|get_device\s*\()")
#: keywords of `.to(...)` that do not name a device
_NOT_A_DEVICE = frozenset({"dtype", "non_blocking", "copy", "memory_format"})


def api_dtype(host_type: str) -> str:
    """The dtype of a CPU typed tensor class (`torch.BoolTensor` -> `torch.bool`)."""
    return CUDA_TYPED_CONSTRUCTORS.get("torch.cuda." + host_type.rsplit(".", 1)[1], "torch.float32")


def _may_place_on_gpu(event: CallEvent) -> bool:
    """Can this call put something on a GPU: `.cuda()`, `.to(<not the CPU>)`, `device=<not the
    CPU>`, a typed CUDA constructor, a default device, DataParallel? When in doubt, yes."""
    qualname = event.qualname or ""
    if event.method == "cuda" or qualname in CUDA_TYPED_CONSTRUCTORS or "DataParallel" in qualname:
        return True
    if qualname in ("torch.set_default_device", "torch.set_default_tensor_type", "torch.cuda.set_device"):
        return True
    for arg, value in event.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "device" or (event.method == "to" and keyword not in _NOT_A_DEVICE):
            if not _host_or_dtype(value):
                return True
    return False


def _host_or_dtype(value: Value) -> bool:
    """The CPU (`"cpu"`, `torch.device("cpu")`) or a dtype (`torch.float16`)."""
    if value.kind == Kind.STR and isinstance(value.literal, str):
        return value.literal.strip().startswith("cpu")
    if value.kind == Kind.DEVICE and value.device is not None:
        return value.device.is_cpu
    return value.kind == Kind.REF and isinstance(value.qualname, str) and value.qualname.startswith("torch.") and not value.qualname.endswith("Tensor")


class _EnclosingTests(cst.CSTVisitor):
    """The tests of the `if` statements and conditional expressions around some nodes."""

    def __init__(self, wanted: set[int]) -> None:
        self.wanted = wanted
        self.found: dict[int, tuple[cst.BaseExpression, ...]] = {}
        self._tests: list[cst.BaseExpression] = []

    def visit_If(self, node: cst.If) -> None:
        self._tests.append(node.test)

    def leave_If(self, original_node: cst.If) -> None:
        self._tests.pop()

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._tests.append(node.test)

    def leave_IfExp(self, original_node: cst.IfExp) -> None:
        self._tests.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self.wanted:
            self.found[id(node)] = tuple(self._tests)


def _gpu_index(node: cst.Call) -> Optional[cst.BaseExpression]:
    """The index of ``x.cuda(i)`` / ``x.cuda(device=i)`` when it need not be the current GPU
    (anything but a literal 0 or None)."""
    given = keyword_arg(node, "device")
    positional = positional_args(node)
    chosen = given if given is not None else (positional[0] if positional else None)
    if chosen is None:
        return None
    index = chosen.value
    if isinstance(index, cst.Integer) and index.evaluated_value == 0:
        return None
    return None if isinstance(index, cst.Name) and index.value == "None" else index


class _LaunchStrings(cst.CSTVisitor):
    """Launch commands in strings; docstrings and other bare string statements are prose
    (torch's own `torch/distributed/launch.py` documents itself), not commands."""

    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []

    def visit_Expr(self, node: cst.Expr) -> bool:
        return not isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if _LAUNCHER.search(node.value):
            self.found.append(node)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        if _LAUNCHER.search(node.value):
            self.found.append(node)
