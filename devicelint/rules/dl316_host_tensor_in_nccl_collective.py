from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Kind, Value, container_items
from devicelint.findings import Severity
from devicelint.rules._flag_paths import PlacementGuards
from devicelint.rules._cuda_code import NCCL_NAMED
from devicelint.rules.base import Example, Rule

#: torch.distributed collectives and point-to-point calls: every tensor they are handed must be
#: on a device the process group's backend serves
_COLLECTIVES = frozenset(
    "torch.distributed." + name
    for name in (
        "all_reduce all_gather all_gather_into_tensor all_to_all all_to_all_single broadcast reduce reduce_scatter "
        "reduce_scatter_tensor gather scatter send recv isend irecv"
    ).split()
)
#: a backend string per device type ("cpu:gloo,cuda:nccl" serves host tensors with gloo): the
#: file's NCCL (_cuda_code.NCCL_NAMED) does not take the host tensors then
_PER_DEVICE_BACKENDS = re.compile(r"""['"][^'"]*cpu\s*:""")
#: a process group of its own made with gloo (host collectives run there on purpose)
_GLOO_GROUP = re.compile(r"""new_group\s*\([^)]*['"]gloo['"]|new_subgroups\s*\([^)]*['"]gloo['"]""")


class HostTensorInNcclCollective(Rule):
    """
    ## What it does
    Flags a tensor known to be on the host - made by a factory without `device=` (or with
    `device="cpu"`), a legacy typed constructor (`torch.FloatTensor([...])`), `.cpu()` -
    handed to a `torch.distributed` collective or point-to-point call (`all_reduce`,
    `broadcast`, `all_gather`, `reduce`, `send`, ...) in a program that initialises its process
    group with the NCCL backend (`init_process_group("nccl")`, also `"nccl" if
    torch.cuda.is_available() else "gloo"`: NCCL on every GPU run).

    Where one factory of the same function made the tensor, the finding is at that factory,
    where the fix goes (make it on the GPU); otherwise (a tensor made in several places, or
    brought to the host) it is at the collective, naming where the tensor comes from.

    Also flags a device-less factory of the function on one path where the tensor handed to the
    collective is on the GPU on the others (`total = torch.tensor(0.0)` when a rank has no
    gradients, the norm of its gradients otherwise): a run that takes that path fails. Not
    where a test about placement selects that path (`if not x.is_cuda:`, a flag that also
    picks the device), nor where the other path is a move under a test (`if use_cuda: t =
    t.cuda()`).

    Left alone: files that call no `init_process_group` or never name NCCL (`"nccl"`,
    `dist.Backend.NCCL`): the backend is chosen elsewhere; a backend string per device type (`"cpu:gloo,cuda:nccl"`,
    which serves host tensors with gloo), and calls given a `group=` where the file makes a
    gloo group of its own (`dist.new_group(backend="gloo")`, the usual home of host
    collectives).

    ## Why is this bad?
    NCCL reduces, broadcasts and gathers GPU tensors only. A host tensor fails with
    "No backend type associated with device type cpu" (older versions: "Tensors must be CUDA
    and dense"), typically when a metric meter or a length is packed into a fresh tensor to be
    shared across ranks - on the first multi-GPU run, never on a CPU test with gloo.

    ## Example
    ```python
    dist.init_process_group("nccl")
    total = torch.tensor([meter.sum, meter.count])
    dist.all_reduce(total)
    ```

    ## Use instead
    ```python
    dist.init_process_group("nccl")
    total = torch.tensor([meter.sum, meter.count], device=torch.device("cuda", local_rank))
    dist.all_reduce(total)
    ```
    """

    code = "DL316"
    name = "host-tensor-in-nccl-collective"
    severity = Severity.ERROR
    summary = "A host tensor handed to a `torch.distributed` collective in a program whose process group uses NCCL, which takes GPU tensors only."
    valid = (
        # the host path is the one a run without a GPU takes, or the placed path a move under a flag
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl' if torch.cuda.is_available() else 'gloo')\n"
        "def share(x):\n    if x.is_cuda:\n        count = torch.ones(1, device=x.device)\n    else:\n        count = torch.ones(1)\n"
        "    dist.all_reduce(count)\n"
        "def share2(n, use_cuda):\n    t = torch.tensor([n])\n    if use_cuda:\n        t = t.cuda()\n    dist.all_reduce(t)\n",
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "total = torch.tensor([1.0, 2.0], device='cuda')\ndist.all_reduce(total)\n",
        # a file that never sets up the process group: its backend is chosen elsewhere
        "import torch\nimport torch.distributed as dist\nBACKEND = 'nccl'\n"
        "def reduce_sum(values):\n    total = torch.tensor(values)\n    dist.all_reduce(total)\n    return total\n",
        # gloo serves host tensors
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('gloo')\n"
        "total = torch.tensor([1.0, 2.0])\ndist.all_reduce(total)\n",
        # a backend per device type
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('cpu:gloo,cuda:nccl')\n"
        "total = torch.tensor([1.0, 2.0])\ndist.all_reduce(total)\n",
        # host collectives on a gloo group of their own (detectron2's comm helpers)
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "cpu_group = dist.new_group(backend='gloo')\n"
        "total = torch.tensor([1.0, 2.0])\ndist.all_reduce(total, group=cpu_group)\n",
        # the backend is chosen by another module: not known here
        "import torch\nimport torch.distributed as dist\ndef reduce_sum(values):\n"
        "    total = torch.tensor(values)\n    dist.all_reduce(total)\n    return total\n",
    )
    invalid = (
        # made on the host on the path where nothing was collected, on the GPU otherwise
        Example(
            "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
            "def total_loss(losses):\n    if not losses:\n        total = torch.zeros(())  # expect: DL316\n"
            "    else:\n        total = torch.stack(losses).sum()\n    dist.all_reduce(total)\n    return total\n"
            "def main(model, batches):\n    model.cuda()\n    return total_loss([model(b.cuda()).mean() for b in batches])\n"
        ),
        # pytorch/examples' ImageNet meters (the construction is where the fix went)
        Example(
            "import torch\nimport torch.distributed as dist\nclass Meter:\n    def all_reduce(self):\n"
            "        total = torch.FloatTensor([self.sum, self.count])  # expect: DL316\n"
            "        dist.all_reduce(total, dist.ReduceOp.SUM)\n"
            "dist.init_process_group('nccl' if torch.cuda.is_available() else 'gloo')\n"
        ),
        # made in two places: reported at the collective
        Example(
            "import torch\nimport torch.distributed as dist\ndef share_length(tokens, rank):\n"
            "    if rank == 0:\n        length = torch.tensor([len(tokens)])\n    else:\n        length = torch.tensor([0])\n"
            "    dist.broadcast(length, src=0)  # expect: DL316\n    return int(length.item())\n"
            "dist.init_process_group(backend='nccl')\n"
        ),
        # NCCL named by torch's constant
        Example(
            "import torch\nimport torch.distributed as dist\ndist.init_process_group(dist.Backend.NCCL)\n"
            "count = torch.zeros(1)  # expect: DL316\ndist.all_reduce(count)\n"
        ),
        # brought to the host on purpose, then shared
        Example(
            "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
            "def gather_norm(norm: torch.Tensor):\n    host = norm.detach().cpu()\n"
            "    dist.all_reduce(host)  # expect: DL316\n    return host\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: whether the file sets up an NCCL process group, and makes a gloo group of its own
        #: (each read from its text once)
        self._nccl: Optional[bool] = None
        self._gloo_group: Optional[bool] = None
        self._guards: Optional[PlacementGuards] = None

    def on_call(self, event: CallEvent) -> None:
        if event.qualname not in _COLLECTIVES or not self._uses_nccl():
            return
        if any(arg.keyword is not None and arg.keyword.value == "group" for arg, _ in event.args) and self._makes_gloo_group():
            return
        for arg, value in event.args:
            for tensor in container_items(value):
                if tensor.kind == Kind.TENSOR and tensor.device is not None and tensor.device.also_on_host and self._report_host_paths(event, arg, tensor):
                    return
                if tensor.kind != Kind.TENSOR or tensor.device is None or not tensor.device.is_cpu or tensor.device.only_on is not None:
                    continue
                self._report(event, arg, tensor)
                return

    def _report_host_paths(self, event: CallEvent, arg: cst.Arg, tensor: Value) -> bool:
        """A tensor made on the GPU on some paths and by a device-less factory of this function
        on another (``total = torch.tensor(0.0)`` when a rank has no gradients, the norm of its
        gradients otherwise): a run that takes the host path hands NCCL a CPU tensor (NeMo
        Automodel#793). Left alone where the host path is selected by a test about placement
        (``if not x.is_cuda:``, a flag that also picks the device: the path of a run without
        a GPU, and without NCCL), or where the placed path is a move under a test (``if
        use_cuda: t = t.cuda()``)."""
        origin = tensor.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return False
        if origin.moved and self._placement_guards().conditional(origin.node):
            return False
        here = self.ctx.current_function.node
        factories = [
            factory for factory, _, home in self.ctx.analyzer.device_less_factories(tensor, on_host_paths=True)
            if home is here and not self._placement_guards().guarded(factory)
        ]
        if not factories:
            return False
        spelled = self.ctx.source_of(arg.value)
        collective = self.ctx.source_of(event.node.func)
        for factory in factories:
            self.ctx.report(
                factory,
                f"`{self.ctx.source_of(factory.func)}` makes `{spelled}` on the CPU on this path (on the GPU on the others), "
                f"and `{collective}` shares it at line {self.ctx.line(event.node)} over a process group that uses NCCL, which "
                "takes GPU tensors only (\"No backend type associated with device type cpu\"): a run that takes this path "
                "fails there; make it on the device of the other paths (`device=`)",
                related=((event.node, "handed to the collective here"),),
            )
        return True

    def _placement_guards(self) -> PlacementGuards:
        if self._guards is None:
            self._guards = PlacementGuards(self.ctx.module)
        return self._guards

    def _report(self, event: CallEvent, arg: cst.Arg, tensor: Value) -> None:
        spelled = self.ctx.source_of(arg.value)
        collective = self.ctx.source_of(event.node.func)
        origin = tensor.origin
        factory = origin.node if origin is not None and not origin.alternatives and isinstance(origin.node, cst.Call) else None
        if (
            factory is not None
            and self.ctx.analyzer.factory_name(factory) is not None
            and self.ctx.analyzer.factory_home(factory) is self.ctx.current_function.node
        ):
            self.ctx.report(
                factory,
                f"`{self.ctx.source_of(factory.func)}` makes `{spelled}` on the CPU, and `{collective}` shares it at line "
                f"{self.ctx.line(event.node)} over a process group that uses NCCL, which takes GPU tensors only (\"No backend "
                "type associated with device type cpu\"); make it on the GPU (`device=`)",
                related=((event.node, "handed to the collective here"),),
            )
            return
        where = f" ({origin.how} at line {self.ctx.line(origin.node)})" if origin is not None else ""
        self.ctx.report(
            event.node,
            f"`{spelled}` is on the CPU{where}, but `{collective}` shares it over a process group that uses NCCL, which "
            "takes GPU tensors only (\"No backend type associated with device type cpu\"); move it to the GPU first",
        )

    def _makes_gloo_group(self) -> bool:
        if self._gloo_group is None:
            self._gloo_group = _GLOO_GROUP.search(self.ctx.source) is not None
        return self._gloo_group

    def _uses_nccl(self) -> bool:
        """Does the file initialise a process group and name NCCL, and no backend per device type?"""
        if self._nccl is None:
            source = self.ctx.source
            self._nccl = (
                "init_process_group" in source and NCCL_NAMED.search(source) is not None and _PER_DEVICE_BACKENDS.search(source) is None
            )
        return self._nccl

