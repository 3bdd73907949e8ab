from __future__ import annotations

import libcst as cst

from devicelint.analysis.facts import CriterionInfo
from devicelint.analysis.names import keyword_arg
from devicelint.analysis.values import Kind
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


class UnmovedCriterionWeight(Rule):
    """
    ## What it does
    Flags a loss built with a CPU tensor in `weight=` or `pos_weight=` (`CrossEntropyLoss`,
    `NLLLoss`, `BCELoss`, `BCEWithLogitsLoss`, `MultiMarginLoss`, ...) that is never moved,
    in a file that moves its model or data to an accelerator. Weights created with `device=`,
    criteria moved later (`criterion.to(device)`), criteria registered as submodules of a model
    (`self.loss = ...` in an `nn.Module`) and files that never leave the CPU are left alone.
    When such a loss is handed to an object that keeps it as an attribute (a trainer or
    wrapper that moves only its network), the call of the loss through that attribute
    (`self.loss_fn(pred, y)`) is reported as well: that is where PyTorch raises.

    ## Why is this bad?
    The criterion keeps its weight as a buffer. When the model and the data go to the GPU and
    the criterion does not, the loss call raises `RuntimeError: Expected all tensors to be on
    the same device`.

    ## Example
    ```python
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0]))
    model.to(device)
    loss = criterion(model(x.to(device)), y.to(device))
    ```

    ## Use instead
    ```python
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0])).to(device)
    ```
    The fix appends `.to(device)` when a `device` variable is bound where the criterion is
    built; otherwise there is no fix. It is safe: a criterion's only state is its weight.
    """

    code = "DL104"
    name = "unmoved-criterion-weight"
    severity = Severity.ERROR
    summary = "A loss with a CPU `weight=` that is never moved while the model or data are."
    fix_safety = "safe"
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda')\n"
        "criterion = nn.CrossEntropyLoss(weight=torch.tensor([1., 3.], device=device))\nmodel = nn.Linear(2, 2).to(device)\n",
        "import torch\nfrom torch import nn\ncriterion = nn.CrossEntropyLoss(weight=torch.tensor([1., 3.]))\n"
        "criterion.cuda()\nmodel = nn.Linear(2, 2).cuda()\n",
        "import torch\nfrom torch import nn\ncriterion = nn.CrossEntropyLoss(weight=torch.tensor([1., 3.]))\nmodel = nn.Linear(2, 2)\n",
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.loss = nn.CrossEntropyLoss(weight=torch.tensor([1., 3.]))\nnet = Net().cuda()\n",
        # a helper that builds a weighted loss on one path and an unweighted one on the other:
        # moving what it returns moves the weighted one
        "import torch\nfrom torch import nn\ndef get_loss(weight=None):\n    if weight is not None:\n"
        "        return nn.CrossEntropyLoss(weight=weight)\n    return nn.CrossEntropyLoss()\n"
        "criterion = get_loss(torch.tensor([1., 3.])).cuda()\nmodel = nn.Linear(2, 2).cuda()\n",
        # a builder of losses, called with an optional weight; the criterion is moved
        "import torch\nfrom torch import nn\n"
        "LOSSES = {'ce': lambda **kwargs: nn.CrossEntropyLoss(**kwargs, ignore_index=-100),\n"
        "          'mse': lambda **kwargs: nn.MSELoss(**kwargs)}\n"
        "def get_loss(name, weight=None):\n    loss = LOSSES.get(name)\n"
        "    if weight is not None:\n        return loss(weight=weight)\n    return loss()\n"
        "def train(model, use_weights):\n    weights = torch.tensor([1., 3.]) if use_weights else None\n"
        "    criterion = get_loss('ce', weights).cuda()\n    model.cuda()\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda')\n"
            "criterion = nn.CrossEntropyLoss(weight=torch.Tensor([1, 3]))  # expect: DL104\n"
            "model = nn.Linear(2, 2).to(device)\n",
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda')\n"
            "criterion = nn.CrossEntropyLoss(weight=torch.Tensor([1, 3])).to(device)  # expect: DL104\n"
            "model = nn.Linear(2, 2).to(device)\n",
        ),
        Example(
            "import torch\nfrom torch.nn import BCEWithLogitsLoss as BCE\npos = torch.ones(5) * 3\n"
            "crit = BCE(pos_weight=pos)  # expect: DL104\nx = torch.randn(4, 5)\nx = x.cuda()\n"
        ),
        # a lambda that builds the loss from the keywords it is called with, and a weight that
        # is a CPU tensor or None
        Example(
            "import torch\nfrom torch import nn\n"
        "LOSSES = {'ce': lambda **kwargs: nn.CrossEntropyLoss(**kwargs, ignore_index=-100),\n"
        "          'mse': lambda **kwargs: nn.MSELoss(**kwargs)}\n"
        "def get_loss(name, weight=None):\n    loss = LOSSES.get(name)\n"
        "    if weight is not None:\n        return loss(weight=weight)  # expect: DL104\n    return loss()\n"
        "def train(model, use_weights):\n    weights = torch.tensor([1., 3.]) if use_weights else None\n"
        "    criterion = get_loss('ce', weights)\n    model.cuda()\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._fixes: dict[int, FixSpec] = {}
        # calls of a weighted criterion through an object's attribute (`self.loss_fn(pred, y)`):
        # a wrapper that keeps the loss handed to it; keyed by the criterion's constructor
        self._held_calls: dict[int, list] = {}

    def on_call(self, event) -> None:  # type: ignore[no-untyped-def]
        # remember, where each weighted criterion is built, whether a `device` is in scope
        callee = event.callee
        if (
            callee.kind == Kind.CRITERION
            and isinstance(callee.info, CriterionInfo)
            and isinstance(event.node.func, cst.Attribute)
            and callee.info.node is not event.node
        ):
            calls = self._held_calls.setdefault(id(callee.info.node), [])
            if all(c is not event.node for c in calls):
                calls.append(event.node)
        result = event.result
        if result.kind == Kind.CRITERION and isinstance(result.info, CriterionInfo) and result.info.node is event.node:
            device = self.ctx.analyzer.lookup("device", event.state)
            if device.kind == Kind.DEVICE:
                self._fixes[id(event.node)] = FixSpec(
                    "Move the criterion: append `.to(device)`", (NodeEdit(event.node, "after", ".to(device)"),)
                )

    def finish(self) -> None:
        moves = self.ctx.facts.accelerator_moves
        if not moves:
            return
        # a loop body is analysed more than once, so one constructor can have several records
        settled = {id(c.node) for c in self.ctx.facts.criteria if c.moved or c.escaped or c.registered}
        for criterion in self.ctx.facts.criteria:
            if id(criterion.node) in settled:
                continue
            weight = criterion.weight
            if weight.device is None or not weight.device.is_cpu:
                continue
            keyword = "pos_weight" if keyword_arg(criterion.node, "pos_weight") is not None else "weight"
            self.ctx.report(
                criterion.node,
                f"this loss keeps its `{keyword}` on the CPU and is never moved, but the file moves "
                f"tensors or modules to an accelerator (line {self.ctx.line(moves[0])}): the loss call "
                "will mix devices; move the criterion (`.to(device)`) or create the weight with `device=`",
                fix=self._fixes.get(id(criterion.node)),
            )
            for call in self._held_calls.pop(id(criterion.node), ()):
                self.ctx.report(
                    call,
                    f"this loss, kept by the object that holds it, has its `{keyword}` on the CPU "
                    f"(built at line {self.ctx.line(criterion.node)}) and is never moved, while the file moves "
                    f"tensors or modules to an accelerator (line {self.ctx.line(moves[0])}): this call mixes devices; "
                    "move the loss where its holder moves its model",
                )
