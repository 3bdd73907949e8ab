from __future__ import annotations

from devicelint.analysis.events import CallEvent
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})


class DataParallelPreferDdp(Rule):
    """
    ## What it does
    Points at every `nn.DataParallel(...)`.

    ## Why is this bad?
    DataParallel is single-process and multi-threaded: the GIL, re-replicating the model on
    every forward and gathering outputs on one GPU make it slower than
    `DistributedDataParallel`, which PyTorch's documentation recommends even on one machine
    (launched with `torchrun`).

    ## Example
    ```python
    model = nn.DataParallel(model).cuda()
    ```

    ## Use instead
    ```python
    torch.distributed.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = nn.parallel.DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])
    ```
    """

    code = "DL405"
    name = "dataparallel-prefer-ddp"
    severity = Severity.INFO
    summary = "`nn.DataParallel` is slower than DistributedDataParallel, which PyTorch recommends."
    valid = ("import torch\nm = torch.nn.parallel.DistributedDataParallel(net)\n",)
    invalid = (Example("import torch\nfrom torch import nn\nm = nn.DataParallel(net)  # expect: DL405\n"),)

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in _DATA_PARALLEL:
            self.ctx.report(
                event.node,
                "`DataParallel` is single-process and multi-threaded; PyTorch recommends "
                "`DistributedDataParallel` (launched with `torchrun`), even on one machine",
            )

