from __future__ import annotations

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg
from devicelint.analysis.values import Kind, Provenance
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


class NonBlockingWithoutPinnedMemory(Rule):
    """
    ## What it does
    Flags `.to(device, non_blocking=True)` / `.cuda(non_blocking=True)` on batches drawn from a
    `DataLoader` built in the file without `pin_memory=True`.
    Off by default, like every info rule: enable it with `--extend-select DL404`.

    ## Why is this bad?
    A host-to-device copy can only run asynchronously from page-locked (pinned) memory. From
    pageable memory the copy is synchronous, so `non_blocking=True` buys nothing and the
    overlap of data transfer and compute that it promises never happens.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
    ```
    """

    code = "DL404"
    name = "non-blocking-without-pinned-memory"
    severity = Severity.INFO
    default_enabled = False  # advice: opt in, like every info rule
    summary = "`non_blocking=True` copies from a DataLoader without `pin_memory=True` are not asynchronous."
    valid = (
        "import torch\nfrom torch.utils.data import DataLoader\nfor x in DataLoader(ds, pin_memory=True):\n"
        "    x = x.to('cuda', non_blocking=True)\n",
        "import torch\nfrom torch.utils.data import DataLoader\nfor x in DataLoader(ds, pin_memory=flag):\n"
        "    x = x.to('cuda', non_blocking=True)\n",
        "import torch\ndef f(loader):\n    for x in loader:\n        x = x.to('cuda', non_blocking=True)\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\nfor x, y in loader:\n"
            "    x = x.to('cuda', non_blocking=True)  # expect: DL404\n"
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        if event.method not in ("to", "cuda") or event.receiver is None:
            return
        flag = keyword_arg(event.node, "non_blocking")
        if flag is None or not (isinstance(flag.value, cst.Name) and flag.value.value == "True"):
            return
        receiver = event.receiver
        origin = receiver.origin
        if receiver.kind not in (Kind.TENSOR, Kind.BATCH) or origin is None or origin.provenance is not Provenance.BATCH:
            return
        loader = origin.node
        if not isinstance(loader, cst.Call) or self.ctx.analyzer.qualname_of(loader.func, event.state) not in api.DATALOADER_NAMES:
            return
        pinned = keyword_arg(loader, "pin_memory")
        if pinned is not None and not (isinstance(pinned.value, cst.Name) and pinned.value.value == "False"):
            return
        self.ctx.report(
            event.node,
            f"`non_blocking=True` needs pinned memory, but the DataLoader built at line {self.ctx.line(loader)} has no "
            "`pin_memory=True`: the copy is synchronous anyway",
        )
