from __future__ import annotations

import math
from dataclasses import dataclass

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name, keyword_arg
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_VISIBLE = "CUDA_VISIBLE_DEVICES"


@dataclass(frozen=True)
class _DeviceCount:
    node: cst.CSTNode
    count: int
    spelled: str


def chunk_split(batch: int, devices: int) -> list[int]:
    """How `Tensor.chunk`, which DataParallel's scatter uses, splits a batch over devices."""
    size = math.ceil(batch / devices)
    shares = []
    remaining = batch
    while remaining > 0:
        shares.append(min(size, remaining))
        remaining -= size
    return shares


class OddGpuCount(Rule):
    """
    ## What it does
    Flags `device_ids=[0, 1, 2]`, `CUDA_VISIBLE_DEVICES="0,1,2"` and other device lists whose
    count an integer batch size in the file (`DataLoader(batch_size=128)`) does not divide, and
    odd device counts above one when no batch size is known. The message gives the split
    DataParallel will make. Files that use `DistributedDataParallel` (each rank takes a whole
    batch) are left alone for `CUDA_VISIBLE_DEVICES`.
    Off by default, like every info rule: enable it with `--extend-select DL304`.

    ## Why is this bad?
    DataParallel splits each batch with `Tensor.chunk`: a batch of 128 over 3 GPUs becomes
    43/43/42, a batch of 10 over 4 becomes 3/3/3/1. One card idles part of every step, and
    per-replica BatchNorm statistics are computed over unequal shares.

    ## Example
    ```python
    model = nn.DataParallel(net, device_ids=[0, 1, 2])
    loader = DataLoader(dataset, batch_size=128)
    ```

    ## Use instead
    ```python
    model = nn.DataParallel(net, device_ids=[0, 1])
    loader = DataLoader(dataset, batch_size=128)
    ```
    or a batch size the device count divides (`batch_size=129`, `batch_size=96`).
    """

    code = "DL304"
    name = "odd-gpu-count"
    severity = Severity.INFO
    default_enabled = False  # advice: opt in, like every info rule
    summary = "A device count that does not divide the batch: DataParallel splits it unevenly."
    valid = (
        "import torch\nmodel = torch.nn.DataParallel(net, device_ids=[0, 1])  # noqa: DL405\nloader = torch.utils.data.DataLoader(ds, batch_size=128)\n",
        "import torch\nmodel = torch.nn.DataParallel(net, device_ids=[0, 1, 2])  # noqa: DL405\nloader = torch.utils.data.DataLoader(ds, batch_size=96)\n",
        "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
        "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1,2'\nmodel = torch.nn.parallel.DistributedDataParallel(net)\n",
    )
    invalid = (
        Example(
            "import torch\nmodel = torch.nn.DataParallel(net, device_ids=[0, 1, 2])  # expect: DL304\n"
            "loader = torch.utils.data.DataLoader(ds, batch_size=128)\n"
        ),
        Example("import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1,2'  # expect: DL304\n"),
        Example(
            "import torch\nBATCH = 10\nmodel = torch.nn.DataParallel(net, device_ids=[0, 1, 2, 3])  # expect: DL304\n"
            "loader = torch.utils.data.DataLoader(ds, batch_size=BATCH)\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self.counts: list[_DeviceCount] = []
        self.batch_sizes: list[int] = []
        self.uses_ddp = False

    def on_call(self, event: CallEvent) -> None:
        qualname = event.qualname or ""
        if qualname.endswith("DistributedDataParallel"):
            self.uses_ddp = True
        ids = keyword_arg(event.node, "device_ids")
        if ids is not None and isinstance(ids.value, (cst.List, cst.Tuple)) and all(
            isinstance(element.value, cst.Integer) for element in ids.value.elements
        ):
            self._add(ids.value, len(ids.value.elements), f"device_ids={self.ctx.source_of(ids.value)}")
        if qualname in api.DATALOADER_NAMES:
            size = keyword_arg(event.node, "batch_size")
            if size is not None:
                value = next(value for arg, value in event.args if arg is size)
                if isinstance(value.literal, int) and value.literal > 0:
                    self.batch_sizes.append(value.literal)
        if qualname in ("os.environ.setdefault", "os.putenv") and len(event.args) >= 2:
            self._environment(event.args[0][1], event.args[1][0].value, event.args[1][1])

    def on_subscript_assign(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        if dotted_name(target.value) != "os.environ" or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            self._environment(Value(Kind.STR, literal=index.value.evaluated_value), value_node, value)

    def _environment(self, key: Value, value_node: cst.BaseExpression, value: Value) -> None:
        if key.literal != _VISIBLE or not isinstance(value.literal, str):
            return
        ids = [part for part in value.literal.replace(" ", "").split(",") if part]
        if ids:
            self._add(value_node, len(ids), f'{_VISIBLE}="{value.literal}"')

    def _add(self, node: cst.CSTNode, count: int, spelled: str) -> None:
        if count > 1:
            self.counts.append(_DeviceCount(node, count, spelled))

    def finish(self) -> None:
        for count in self.counts:
            if self.uses_ddp and count.spelled.startswith(_VISIBLE):
                continue
            uneven = [batch for batch in sorted(set(self.batch_sizes)) if batch % count.count]
            if uneven:
                batch = uneven[0]
                shares = chunk_split(batch, count.count)
                idle = f"; {count.count - len(shares)} GPU(s) get nothing" if len(shares) < count.count else ""
                self.ctx.report(
                    count.node,
                    f"{count.spelled}: batch {batch} over {count.count} GPUs splits "
                    f"{'/'.join(map(str, shares))}{idle}: one card idles part of each step and "
                    "per-replica BatchNorm statistics differ",
                )
            elif not self.batch_sizes and count.count % 2 == 1:
                shares = chunk_split(128, count.count)
                self.ctx.report(
                    count.node,
                    f"{count.spelled}: {count.count} devices split power-of-two batches unevenly "
                    f"(DataParallel splits a batch of 128 as {'/'.join(map(str, shares))})",
                )
