from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule

#: index ops, as tensor methods: the index argument's position after the receiver and its keyword
_INDEX_METHODS: dict[str, tuple[int, str]] = {
    **{name: (1, "index") for name in (
        "index_select gather scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_ "
        "index_add index_add_ index_copy index_copy_ index_fill index_fill_"
    ).split()},
    "take": (0, "index"),
    "put_": (0, "index"),
    "take_along_dim": (0, "indices"),
    "masked_select": (0, "mask"),
}
#: the same ops as torch functions: the indexed tensor is the first argument
_INDEX_FUNCTIONS: dict[str, tuple[int, str]] = {
    f"torch.{name}": (position + 1, keyword)
    for name, (position, keyword) in _INDEX_METHODS.items()
    if not name.endswith("_") and name != "put_"
}
#: ops that accept an accelerator self with a mask on the host (masked_select indexes with it)
_HOST_MASK_ALLOWED = frozenset({"masked_select"})


class IndexDeviceMismatch(Rule):
    """
    ## What it does
    Flags indexing where the index and the indexed tensor sit on devices PyTorch will not mix:

    * `table[idx]`, `table[:, idx]`, `table[mask]` (also the read of `table[idx] += v`) where
      `table` is a tensor pinned to the host (a factory without `device=`, `torch.tensor(list)`,
      `torch.from_numpy`, a tensor attribute that `model.to(device)` does not move) and the
      index or mask is a tensor that can be on the accelerator (on the model's device, moved to
      a device the code chose, made with `device=...`);
    * the index ops `index_select`, `gather`, `take`, `take_along_dim`, `scatter`/`scatter_`/
      `scatter_add_`/`scatter_reduce_`, `index_add_`, `index_copy_`, `index_fill_`, `put_`
      (methods and `torch.*` functions) whose index is on another device than the tensor they
      index - in either direction - and `masked_select` with an accelerator mask on a host
      tensor;
    * in a module that `nn.DataParallel` replicates over several GPUs (or a submodule of one),
      an index op between a tensor moved to a GPU the code names itself
      (`.cuda(self.device_ids[0])`, `.to("cuda:0")`) and the replica's inputs or weights: every
      replica but the one on that GPU mixes two GPUs.

    An accelerator tensor indexed with a host index or mask (`gpu_table[cpu_idx]`) and an
    assignment `cpu_table[gpu_idx] = v` (PyTorch moves the indices of `index_put_` to the
    table's device) are allowed and left alone, as are 0-dim host tensors in the index ops,
    indices whose device is unknown and a free function's index argument (its callers decide
    where it lives). A host tensor made without `device=` in a function and handed to an
    index op with an accelerator tensor is DL202's finding (it says where to add `device=`);
    other operands of these ops (`src` of `scatter_`, `source` of `index_add_`) are DL201's.
    There is no fix: whether to move the table (register it as a buffer, pass `device=`) or
    the index (`.cpu()`) is the author's choice.

    Verified on torch 2.13 fake CUDA tensors (`FakeTensorMode`): `index_select`, `gather`,
    `take`, `take_along_dim`, `scatter_`, `scatter_add_`, `index_add_`, `index_copy_`,
    `index_fill_`, `put_` and `masked_fill` raise for a CPU self with a CUDA index and for a
    CUDA self with a CPU index (0-dim CPU indices pass). Fake and meta tensors do not model the
    subscript check (`cpu_table[cuda_idx]` passes there); in ATen it is
    `check_indices_on_cpu_or_selfdevice`, run by `index` (reads) only, since torch 1.13 - its
    message "indices should be either on cpu or on the same device as the indexed tensor" is
    in torch 2.13's libtorch - while `index_put_` (assignments) moves the indices to the
    table's device.

    ## Why is this bad?
    On a GPU machine the lookup raises `RuntimeError: indices should be either on cpu or on
    the same device as the indexed tensor (cpu)` (subscripts) or `Expected all tensors to be on
    the same device` (index ops). A table kept as a plain tensor attribute stays on the CPU
    when the model is moved, so the timestep or position lookup that worked on a laptop fails
    on the first GPU run.

    ## Example
    ```python
    class Diffusion(nn.Module):
        def __init__(self, betas):
            super().__init__()
            self.alphas_cumprod = torch.cumprod(1 - betas, 0)

        def forward(self, x, t):
            a = self.alphas_cumprod[t]
    ```

    ## Use instead
    ```python
    class Diffusion(nn.Module):
        def __init__(self, betas):
            super().__init__()
            self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0))

        def forward(self, x, t):
            a = self.alphas_cumprod[t]
    ```
    """

    code = "DL207"
    name = "index-device-mismatch"
    severity = Severity.ERROR
    follows_call_sites = True
    summary = "A tensor indexed with an index or mask on a device PyTorch rejects for it."
    valid = (
        # an accelerator tensor indexed with a host index: PyTorch allows it
        "import torch\ntable = torch.randn(10, 4, device='cuda')\nidx = torch.tensor([1, 2])\nrows = table[idx]\n",
        # both on the host
        "import torch\ntable = torch.randn(10, 4)\nidx = torch.tensor([1, 2])\nrows = table[idx]\nrows = table.index_select(0, idx)\n",
        # the index is brought to the host first
        "import torch\ntable = torch.randn(10, 4)\nidx = torch.randint(0, 10, (3,), device='cuda')\nrows = table[idx.cpu()]\n",
        # a free function's index argument: its caller decides where it lives
        "import torch\nTABLE = torch.randn(10, 4)\ndef lookup(idx: torch.Tensor):\n    return TABLE[idx]\n",
        # an assignment: PyTorch moves the indices to the table's device
        "import torch\nseen = torch.zeros(10)\nlabels = torch.randint(0, 10, (4,), device='cuda')\nseen[labels] = 1.0\n",
        # masked_select on an accelerator tensor with a host mask
        "import torch\nx = torch.randn(8, device='cuda')\nkeep = torch.ones(8, dtype=torch.bool)\ny = x.masked_select(keep)\n",
        # a device taken from the input
        (
            "import torch\nfrom torch import nn\nclass ArcHead(nn.Module):\n    def __init__(self, gpu_ids):\n"
            "        super().__init__()\n        self.gpu_ids = gpu_ids\n        self.fc = nn.Linear(8, 4)\n"
            "    def forward(self, x, labels):\n        logits = self.fc(x)\n"
            "        one_hot = torch.zeros_like(logits).to(x.device)\n"
            "        one_hot.scatter_(1, labels.view(-1, 1), 1)\n        return one_hot * logits\n"
            "class Net(nn.Module):\n    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.head = ArcHead(gpu_ids)\n    def forward(self, x, labels):\n        return self.head(x, labels)\n"
            "GPUS = [0, 1]\nnet = nn.DataParallel(Net(GPUS), device_ids=GPUS).cuda()\n"
        ),
        # one GPU only: the named device is the replica's
        (
            "import torch\nfrom torch import nn\nclass ArcHead(nn.Module):\n    def __init__(self, gpu_ids):\n"
            "        super().__init__()\n        self.gpu_ids = gpu_ids\n        self.fc = nn.Linear(8, 4)\n"
            "    def forward(self, x, labels):\n        logits = self.fc(x)\n"
            "        one_hot = torch.zeros_like(logits).cuda(self.gpu_ids[0])\n"
            "        one_hot.scatter_(1, labels.view(-1, 1), 1)\n        return one_hot * logits\n"
            "class Net(nn.Module):\n    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.head = ArcHead(gpu_ids)\n    def forward(self, x, labels):\n        return self.head(x, labels)\n"
            "GPUS = [0, 1]\nnet = nn.DataParallel(Net(GPUS), device_ids=[0]).cuda()\n"
        ),
    )
    invalid = (
        # labels of a loader of unknown batches, moved: only a tensor is moved and indexes a tensor
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\ndef one_hot_targets(loader):\n    for x, labels in loader:\n        labels = labels.to(device)\n        yield torch.eye(10)[labels]  # expect: DL207\n"
        ),
        # pairs found by a CPU clustering step (`nonzero` keeps its receiver's device), then
        # filtered by a mask computed from the model's scores
        Example(
            "import torch\nfrom torch import nn\ndef cluster(adjacent):\n"
            "    return torch.cat([row.nonzero().view(-1) for row in adjacent])\n"
            "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.score = nn.Linear(3, 1)\n"
            "    def forward(self, points):\n        pairs = cluster((torch.cdist(points, points) < 0.1).cpu())\n"
            "        keep = self.score(points)[:, 0] > 0\n        return pairs[keep]  # expect: DL207\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Diffusion(nn.Module):\n    def __init__(self, steps):\n"
            "        super().__init__()\n        self.net = nn.Linear(4, 4)\n"
            "        self.table = torch.linspace(0.0, 1.0, steps)  # expect: DL103\n"
            "    def forward(self, x):\n        t = torch.randint(0, 10, (x.shape[0],), device=x.device)\n"
            "        return self.net(x) * self.table[t].view(-1, 1)  # expect: DL207\n"
        ),
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "counts = torch.zeros(10)\nlabels = torch.randint(0, 10, (32,)).to(device)\n"
            "counts[labels] += 1.0  # expect: DL207\n"
        ),
        Example(
            # the module's own forward, called as `self(...)`, returns a tuple of tensors on its device
            "import torch\nfrom torch import nn\nclass Matcher(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
            "    def forward(self, a, b):\n        scores = self.proj(a) @ self.proj(b).T\n"
            "        return scores.max(1).indices, scores\n"
            "    def evaluate(self, a, b, truth):\n        indices, _ = self(a, b)\n"
            "        hits = torch.arange(0, indices.shape[0])[truth == indices]  # expect: DL207\n"
            "        return hits\n"
        ),
        Example(
            "import torch\nx = torch.randn(8, 4, device='cuda')\nidx = torch.tensor([0, 2, 4])\n"
            "rows = x.index_select(0, idx)  # expect: DL207\n"
        ),
        # a submodule of a model DataParallel replicates over two GPUs: the one-hot table sits on the
        # first GPU for every replica, the labels on each replica's own
        Example(
            "import torch\nfrom torch import nn\nclass ArcHead(nn.Module):\n    def __init__(self, gpu_ids):\n"
            "        super().__init__()\n        self.gpu_ids = gpu_ids\n        self.fc = nn.Linear(8, 4)\n"
            "    def forward(self, x, labels):\n        logits = self.fc(x)\n"
            "        one_hot = torch.zeros_like(logits).cuda(self.gpu_ids[0])\n"
            "        one_hot.scatter_(1, labels.view(-1, 1), 1)  # expect: DL207\n        return one_hot\n"
            "class Net(nn.Module):\n    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.head = ArcHead(gpu_ids)\n    def forward(self, x, labels):\n        return self.head(x, labels)\n"
            "GPUS = [0, 1]\nnet = nn.DataParallel(Net(GPUS), device_ids=GPUS).cuda()\n"
        ),
    )

    # ------------------------------------------------------------------ subscripts

    def on_index(self, node: cst.Subscript, base: Value, index_node: cst.BaseExpression, index: Value) -> None:
        if base.device is None or index.device is None or base.scalar is True or base.kind == Kind.NDARRAY:
            return
        if not index.device.may_be_accelerator or index.device.argument:
            return  # a host index is allowed into any tensor; an argument's is the caller's choice
        if not base.device.conflicts_with(index.device):
            return
        table = self.ctx.source_of(node.value)
        self.ctx.report(
            node,
            f"`{table}` is {where(base, self.ctx)}, but its index `{self.ctx.source_of(index_node)}` is "
            f"{where(index, self.ctx)}: PyTorch raises \"indices should be either on cpu or on the same device "
            f"as the indexed tensor\"; keep `{table}` where the index lives (a buffer, `device=`) or index "
            "with a host tensor",
        )

    # ------------------------------------------------------------------ index ops

    def on_call(self, event: CallEvent) -> None:
        if event.method is not None and event.method in _INDEX_METHODS and event.receiver is not None:
            if event.receiver.kind != Kind.TENSOR or not isinstance(event.node.func, cst.Attribute):
                return
            position, keyword = _INDEX_METHODS[event.method]
            self._check(event, event.method, event.node.func.value, event.receiver, position, keyword)
        elif event.qualname in _INDEX_FUNCTIONS:
            position, keyword = _INDEX_FUNCTIONS[event.qualname]
            first = _argument(event, 0, "input")
            if first is not None:
                self._check(event, event.qualname.rsplit(".", 1)[-1], first[0], first[1], position, keyword)

    def _check(self, event: CallEvent, op: str, self_node: cst.BaseExpression, tensor: Value, position: int, keyword: str) -> None:
        found = _argument(event, position, keyword)
        if found is None:
            return
        index_node, index = found
        if not index.is_tensor_like or tensor.device is None or index.device is None:
            return
        if not tensor.device.conflicts_with(index.device):
            return
        host, other = (tensor, index) if tensor.device.is_cpu else (index, tensor)
        if host.device is not None and host.device.is_cpu:
            if host.scalar is not False:
                return  # a 0-dim host tensor mixes with accelerator tensors
            if host is index and op in _HOST_MASK_ALLOWED:
                return
            if self._said_by_dl202(host, event):
                return
        if index.device.argument and not index.device.is_cpu or tensor.device.argument and not tensor.device.is_cpu:
            return  # a free function's argument: its caller decides where it lives
        self.ctx.report(
            event.node,
            f"`{op}` needs its {keyword} on the device of the tensor it indexes: `{self.ctx.source_of(self_node)}` is "
            f"{where(tensor, self.ctx)}, `{self.ctx.source_of(index_node)}` is {where(index, self.ctx)}; "
            "PyTorch raises \"Expected all tensors to be on the same device\"",
        )

    def _said_by_dl202(self, host: Value, event: CallEvent) -> bool:
        """A host tensor from a device-less factory made in a function, meeting an accelerator
        tensor in an op that DL202 checks: DL202 reports the factory and says where to add
        `device=`."""
        if event.method not in api.BINARY_TENSOR_METHODS and event.qualname not in api.MIXING_FUNCTIONS:
            return False
        if self.ctx.current_function.node is None:
            return False
        made = self.ctx.analyzer.device_less_factory(host)
        if made is None or made[2] is None or self.ctx.analyzer.constructs_module(made[2]):
            return False
        return made[1] in api.FUNCTION_HOST_FACTORIES


def _argument(event: CallEvent, position: int, keyword: str) -> Optional[tuple[cst.BaseExpression, Value]]:
    """The argument passed at ``position`` (counting positional arguments only) or as ``keyword``."""
    positional = 0
    for arg, value in event.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value, value
            continue
        if positional == position:
            return arg.value, value
        positional += 1
    return None
