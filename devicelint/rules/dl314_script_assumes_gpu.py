from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.findings import Severity
from devicelint.rules._cuda_code import is_cuda_literal
from devicelint.rules.base import Example, Rule

#: evidence that the file chooses its device: an availability check, a device count, or a
#: device taken from arguments, configuration or the environment
_CHOOSES_DEVICE = re.compile(
    r"is_available\s*\(|device_count\s*\(|\b(args|opt|opts|config|cfg|conf|hparams|settings|accelerator|fabric|trainer)\.device\b"
    r"|--device|os\.environ|LOCAL_RANK|get_device\s*\(|def\s+cuda\s*\("
)
_MAIN_GUARD = re.compile(r"""if\s+__name__\s*==\s*['"]__main__['"]""")


class ScriptAssumesGpu(Rule):
    """
    ## What it does
    Flags `.cuda()`, `.to("cuda")`, `device="cuda"` and `torch.device("cuda:0")` in a file that
    never asks whether a GPU is there (`torch.cuda.is_available()`, `torch.cuda.device_count()`)
    nor takes the device from arguments, configuration or the environment (`args.device`,
    `--device`, `os.environ`, `LOCAL_RANK`, `accelerator.device`). Only scripts are checked:
    files with an `if __name__ == "__main__":` block, or whose module-level code itself puts
    work on CUDA. A library module (functions and classes only) is left alone: its caller
    decides where it runs, and CUDA-only code (kernels, GPU back-ends) says "cuda" on purpose.
    Off by default: enable it with `--select DL314` (or `--extend-select DL314`). Hard-coded CUDA
    in code that is otherwise placed by its caller (a module's methods, a function of tensor
    arguments) is DL302's, in every file.

    ## Why is this bad?
    The script cannot run on a machine without a GPU - a laptop, CPU-only CI - even for a quick
    smoke test, and moving it to another accelerator means editing every line. Many scripts
    are written for one GPU box on purpose, which is why this rule is opt-in.

    ## Example
    ```python
    model = Net().cuda()
    batch = batch.to("cuda")
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    batch = batch.to(device)
    ```
    """

    code = "DL314"
    name = "script-assumes-gpu"
    severity = Severity.INFO
    summary = "`.cuda()` / `device=\"cuda\"` in a script that never checks for a GPU nor takes the device from configuration."
    default_enabled = False
    #: the same hard-coded device inside a module's or a tensor function's code is DL302's finding
    yields_to = ("DL302",)
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.zeros(3, device=device)\n",
        "import torch\nimport argparse\nx = torch.zeros(3).to(args.device)\ny = torch.ones(3).cuda()\n",
        "import torch\nx = torch.zeros(3)\n",
        # a library module: whoever calls it chooses where it runs
        "import torch\ndef pack(weights):\n    return weights.cuda()\nclass Kernel:\n"
        "    def run(self, x):\n        return x.to('cuda')\n",
    )
    invalid = (
        Example("import torch\nmodel = Net().cuda()  # expect: DL314\n"),
        Example(
            "import torch\ndef main():\n    model = Net().cuda()  # expect: DL314\n"
            "if __name__ == '__main__':\n    main()\n"
        ),
        Example(
            "import torch\nx = torch.zeros(3, device='cuda:0')  # expect: DL314\n"
            "y = x.to('cuda')  # expect: DL314\nd = torch.device('cuda')  # expect: DL314\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._found: list[cst.CSTNode] = []
        self._at_module_level = False

    def on_call(self, event: CallEvent) -> None:
        node = event.node
        found = None
        if event.method == "cuda":
            found = node
        else:
            device = keyword_arg(node, "device")
            positional = positional_args(node)
            if device is not None and is_cuda_literal(device.value):
                found = device.value
            elif positional and is_cuda_literal(positional[0].value) and (event.method == "to" or event.qualname == "torch.device"):
                found = positional[0].value
        if found is not None:
            self._found.append(found)
            context = self.ctx.current_function
            if context.node is None and context.class_info is None:
                self._at_module_level = True

    def finish(self) -> None:
        if not self._found or _CHOOSES_DEVICE.search(self.ctx.source):
            return
        if not self._at_module_level and not _MAIN_GUARD.search(self.ctx.source):
            return  # a library module
        for node in self._found:
            self.ctx.report(
                node,
                "CUDA is hard-coded and this file never checks for a GPU nor takes the device from "
                "configuration: it cannot run on a CPU-only machine; choose the device once "
                '(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`) and use it',
            )
