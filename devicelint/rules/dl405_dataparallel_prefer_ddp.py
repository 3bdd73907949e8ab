from __future__ import annotations

from pathlib import PurePath

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})


class DataParallelPreferDdp(Rule):
    """
    ## What it does
    Points at `nn.DataParallel(...)` in a program. Left alone: test modules (`tests/`,
    `test_*.py`: a test of DataParallel support uses it on purpose) and a function that returns
    the wrapper it builds (a library offering DataParallel as its caller's choice).
    Off by default, like every info rule: enable it with `--extend-select DL405`.

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
    default_enabled = False  # advice: opt in, like every info rule
    summary = "`nn.DataParallel` is slower than DistributedDataParallel, which PyTorch recommends."
    valid = (
        "import torch\nm = torch.nn.parallel.DistributedDataParallel(net)\n",
        # a library returning DataParallel as one strategy its user picks
        "import torch\nclass DPStrategy:\n    def setup_module(self, module):\n        return torch.nn.DataParallel(module)\n",
    )
    invalid = (Example("import torch\nfrom torch import nn\nm = nn.DataParallel(net)  # expect: DL405\n"),)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._in_tests = _is_test_file(ctx.path)
        self._built: list[cst.Call] = []
        self._returned: set[int] = set()

    def on_return(self, node: cst.Return, value: Value) -> None:
        # `return DataParallel(module, ...)`: a library offering DataParallel as its caller's
        # choice (Lightning's DataParallelStrategy), not a program choosing it
        if isinstance(node.value, cst.Call):
            self._returned.add(id(node.value))

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in _DATA_PARALLEL:
            self._built.append(event.node)

    def finish(self) -> None:
        if self._in_tests:
            return  # a test of DataParallel support uses it on purpose
        for node in self._built:
            if id(node) in self._returned:
                continue
            self.ctx.report(
                node,
                "`DataParallel` is single-process and multi-threaded; PyTorch recommends "
                "`DistributedDataParallel` (launched with `torchrun`), even on one machine",
            )


def _is_test_file(path: str) -> bool:
    """``tests/...``, ``test_*.py``, ``*_test.py``: pytest's conventions for test modules."""
    pure = PurePath(path)
    return pure.name.startswith("test_") or pure.name.endswith("_test.py") or any(part in ("tests", "test") for part in pure.parts[:-1])
