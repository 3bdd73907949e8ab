from __future__ import annotations

import libcst as cst

from devicelint.analysis.values import Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: predicates whose uncalled function object is always true
PREDICATES = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.is_initialized",
        "torch.cuda.is_bf16_supported",
        "torch.backends.mps.is_available",
        "torch.backends.mps.is_built",
        "torch.backends.cudnn.is_available",
        "torch.backends.cuda.is_built",
        "torch.distributed.is_available",
        "torch.distributed.is_initialized",
        "torch.xpu.is_available",
        "torch.mps.is_available",
        "torch.is_grad_enabled",
        "torch.is_inference_mode_enabled",
    }
)


class IsAvailableNotCalled(Rule):
    """
    ## What it does
    Flags `torch.cuda.is_available` (and `torch.backends.mps.is_available`,
    `torch.cuda.is_initialized`, `torch.distributed.is_initialized`, ...) used as a condition
    without being called: in `if`/`while`/`assert`, conditional expressions, and the operands of
    `and`/`or`/`not`.

    ## Why is this bad?
    A function object is always true. `if torch.cuda.is_available:` takes the GPU branch on
    every machine, and the CPU-only machine crashes in it.

    ## Example
    ```python
    device = "cuda" if torch.cuda.is_available else "cpu"
    ```

    ## Use instead
    ```python
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ```
    The fix adds the call parentheses. It is safe: the condition was always true, and now asks
    the question it was written to ask.
    """

    code = "DL307"
    name = "is-available-not-called"
    severity = Severity.ERROR
    summary = "`torch.cuda.is_available` (or a similar predicate) used as a condition without calling it."
    fix_safety = "safe"
    valid = (
        "import torch\nif torch.cuda.is_available():\n    x = 1\n",
        "import torch\ncheck = torch.cuda.is_available\nif check():\n    x = 1\n",
        "import torch\npredicates = [torch.cuda.is_available]\n",
    )
    invalid = (
        Example(
            "import torch\nif torch.cuda.is_available:  # expect: DL307\n    x = 1\n",
            "import torch\nif torch.cuda.is_available():  # expect: DL307\n    x = 1\n",
        ),
        Example(
            "from torch.backends import mps\nuse_mps = mps.is_available and flag  # expect: DL307\n",
            "from torch.backends import mps\nuse_mps = mps.is_available() and flag  # expect: DL307\n",
        ),
        Example("import torch as t\nwhile not t.distributed.is_initialized:  # expect: DL307\n    pass\n"),
    )

    def on_condition(self, node: cst.BaseExpression, value: Value) -> None:
        if value.kind != Kind.REF or value.qualname not in PREDICATES or not isinstance(node, (cst.Attribute, cst.Name)):
            return
        spelled = self.ctx.source_of(node)
        self.ctx.report(
            node,
            f"`{spelled}` is a function and always true here; call it: `{spelled}()`",
            fix=FixSpec("Call it: add `()`", (NodeEdit(node, "after", "()"),)),
        )
