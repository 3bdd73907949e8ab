from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_INITIALISING = frozenset(
    {
        "torch.cuda.set_device", "torch.cuda.device_count", "torch.cuda.is_available", "torch.cuda.current_device",
        "torch.cuda.init", "torch.cuda.synchronize", "torch.cuda.get_device_name", "torch.cuda.get_device_properties",
        "torch.cuda.mem_get_info", "torch.cuda.empty_cache", "torch.cuda.manual_seed_all",
    }
)
_VISIBLE = "CUDA_VISIBLE_DEVICES"


class VisibleDevicesAfterInit(Rule):
    """
    ## What it does
    Flags setting `os.environ["CUDA_VISIBLE_DEVICES"]` (or `setdefault` / `putenv`) after code
    in the same scope initialised CUDA: a `.cuda()`, a tensor created on a GPU,
    `torch.cuda.set_device`, `torch.cuda.device_count()`, `torch.cuda.is_available()`, ...
    Setting it right after `import torch` is fine.

    ## Why is this bad?
    The CUDA driver reads `CUDA_VISIBLE_DEVICES` once, when it initialises; `is_available()`
    and `device_count()` initialise it. Changing the variable afterwards has no effect on the
    running process: the job silently uses (and fights over) the wrong GPUs.

    ## Example
    ```python
    if torch.cuda.is_available():
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    ```

    ## Use instead
    ```python
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus   # before anything touches CUDA
    if torch.cuda.is_available():
        ...
    ```
    """

    code = "DL303"
    name = "visible-devices-after-init"
    severity = Severity.ERROR
    summary = "`CUDA_VISIBLE_DEVICES` set after CUDA was initialised has no effect."
    valid = (
        "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\nx = torch.zeros(3, device='cuda')\n",
        "import os\nimport torch\ndef setup():\n    torch.cuda.set_device(0)\ndef main():\n    os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n",
    )
    invalid = (
        Example(
            "import os\nimport torch\nn = torch.cuda.device_count()\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1'  # expect: DL303\n"
        ),
        Example(
            "import os\nimport torch\ndef main(gpus):\n    if torch.cuda.is_available():\n"
            "        os.environ.setdefault('CUDA_VISIBLE_DEVICES', gpus)  # expect: DL303\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per analysed function (None: module level), the first call that initialised CUDA
        self._initialised: dict[int, cst.CSTNode] = {}

    def _scope(self) -> int:
        return id(self.ctx.current_function.node)

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in ("os.environ.setdefault", "os.putenv") and len(event.args) >= 2:
            if event.args[0][1].literal == _VISIBLE:
                self._check(event.node)
            return
        initialises = event.qualname in _INITIALISING or event.method == "cuda" or (
            event.result.kind in (Kind.TENSOR, Kind.MODULE) and event.result.device is not None
            and event.result.device.is_accel and event.result.origin is not None and event.result.origin.node is event.node
        )
        if initialises:
            self._initialised.setdefault(self._scope(), event.node)

    def on_subscript_assign(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        if dotted_name(target.value) != "os.environ" or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and index.value.evaluated_value == _VISIBLE:
            self._check(target)

    def _check(self, node: cst.CSTNode) -> None:
        first: Optional[cst.CSTNode] = self._initialised.get(self._scope())
        if first is None:
            return
        self.ctx.report(
            node,
            f"`{_VISIBLE}` is set after CUDA was initialised (line {self.ctx.line(first)}): the running "
            "process keeps the devices it saw then; set it before anything touches CUDA",
        )
