from __future__ import annotations

from devicelint.analysis.flow import IN_PROCESS_BUFFER, CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.analysis.values import Kind
from devicelint.engine import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(f)` called without `map_location`. Loading back an empty `io.BytesIO()`
    that the same code saved into (a same-process round trip) is left alone.

    ## Why is this bad?
    Without `map_location`, `torch.load` restores every tensor onto the device it was saved
    from. A checkpoint saved on `cuda:1` then fails on a CPU-only machine ("Attempting to
    deserialize object on a CUDA device but torch.cuda.is_available() is False") or on a
    machine with one GPU, and one saved on `cuda:0` lands on GPU 0 of every DDP rank.

    ## Example
    ```python
    state = torch.load("checkpoint.pt")
    ```

    ## Use instead
    ```python
    state = torch.load("checkpoint.pt", map_location="cpu")
    ```
    The fix adds `map_location="cpu"`, or `map_location=device` when a `device` variable
    holding a `torch.device` is in scope. Loading to the CPU and then moving the model is
    always correct; the fix is safe.
    """

    code = "DL301"
    name = "load-without-map-location"
    severity = Severity.WARNING
    summary = "`torch.load` without `map_location` restores tensors onto the device they were saved from."
    fix_safety = "safe"
    valid = (
        "import torch\nstate = torch.load('ckpt.pt', map_location='cpu')\n",
        "import torch\nstate = torch.load('ckpt.pt', 'cpu')\n",
        "import torch\nstate = torch.load('ckpt.pt', **kwargs)\n",
        "import pickle\nstate = pickle.load(f)\n",
        "import io\nimport torch\nbuffer = io.BytesIO()\ntorch.save(model, buffer)\nbuffer.seek(0)\ncopy = torch.load(buffer)\n",
    )
    invalid = (
        Example(
            "import torch\nstate = torch.load('ckpt.pt')  # expect: DL301\n",
            "import torch\nstate = torch.load('ckpt.pt', map_location=\"cpu\")  # expect: DL301\n",
        ),
        Example(
            "import torch as t\ndevice = t.device('cuda' if t.cuda.is_available() else 'cpu')\n"
            "state = t.load(path, weights_only=True)  # expect: DL301\n",
            "import torch as t\ndevice = t.device('cuda' if t.cuda.is_available() else 'cpu')\n"
            "state = t.load(path, weights_only=True, map_location=device)  # expect: DL301\n",
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        if event.qualname != "torch.load":
            return
        node = event.node
        if keyword_arg(node, "map_location") is not None or len(positional_args(node)) >= 2:
            return
        if any(arg.star for arg in node.args) or not node.args:
            return
        if event.args[0][1].info == IN_PROCESS_BUFFER:
            return  # saved and loaded by the same process: map_location would change the result
        location = '"cpu"'
        device = self.ctx.analyzer.lookup("device", event.state)
        if device.kind == Kind.DEVICE:
            location = "device"
        last = node.args[-1]
        fix = FixSpec(f"Add `map_location={location}`", (NodeEdit(last.value, "after", f", map_location={location}"),))
        self.ctx.report(
            node,
            "`torch.load` without `map_location` restores tensors onto the device they were saved from: "
            f"it fails on a machine without that GPU; pass `map_location={location}`",
            fix=fix,
        )
