from __future__ import annotations


from devicelint.findings import Severity
from devicelint.rules._optimizer_order import BuiltBeforeMove, OptimizerOrderRule, OrderCase
from devicelint.rules.base import Example


class OptimizerBuiltBeforeMove(OptimizerOrderRule):
    """
    ## What it does
    Points at an optimizer built from `model.parameters()` (or from parameter groups of them)
    before `model.cuda()` / `model.to(...)` - in the same function, in a function the model is
    handed to, in the `__init__` of a class of the file (or a base class's, through
    `super().__init__(...)`), or in a method of a class whose `__init__` built the optimizer
    over `self.network` (`trainer.cuda()`) - where nothing makes that order crash: no state is
    restored before the move and the optimizer creates its state at its first `step()` (SGD,
    Adam, AdamW, RMSprop, ...). The orders that do crash (state restored before the move,
    Adagrad) are DL407's errors. Off by default, like every info rule: enable it with
    `--extend-select DL409`.

    ## Why is this bad?
    It does not crash with PyTorch's default `Module.to()` / `.cuda()`: they keep each parameter
    object and move its data, so the optimizer updates the moved parameters and creates its
    state on their device at the first step. It is advice: PyTorch's `Module.cuda`
    documentation says to call it before constructing the optimizer "if the module will live on
    GPU while being optimized", because a conversion that makes new parameter objects (onto
    `meta`, `to_empty()`, `torch.__future__.set_overwrite_module_params_on_conversion(True)`)
    leaves the optimizer updating tensors the model no longer uses. Moving first also keeps the
    order right when a state restore or an optimizer that creates its state eagerly is added
    later (DL407).

    ## Example
    ```python
    optimizer = torch.optim.Adam(model.parameters())
    model.to(device)
    ```

    ## Use instead
    ```python
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters())
    ```
    """

    code = "DL409"
    name = "optimizer-built-before-move"
    severity = Severity.INFO
    default_enabled = False  # advice: opt in, like every info rule
    summary = "An optimizer built before its model is moved (it works, but PyTorch's docs advise moving first)."
    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nother.cuda()\n",
        # the name is rebound to another model before the move
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "model = torch.nn.Linear(4, 4)\nmodel.cuda()\n",
        # an object of another package that takes the parameters without a learning rate is
        # not taken for an optimizer (an exponential moving average)
        "import torch\nfrom torch_ema import ExponentialMovingAverage\nmodel = torch.nn.Linear(2, 2)\n"
        "ema = ExponentialMovingAverage(model.parameters(), decay=0.99)\nmodel.cuda()\n",
        # the loading helper moves the restored state itself: the code took care of the order
        "import torch\ndef resume(path, model, opt, device):\n    ckpt = torch.load(path, map_location='cpu')\n"
        "    opt.load_state_dict(ckpt['opt'])\n    for state in opt.state.values():\n"
        "        for k, v in state.items():\n            if torch.is_tensor(v):\n                state[k] = v.to(device)\n"
        "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "resume('c.pt', model, opt, 'cuda')\nmodel.cuda()\n",
    )
    invalid = (
        Example(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: DL409\n"
            "model.cuda()\n"
        ),
        Example(
            "import torch\ndef train(model, optimizer):\n    model = model.cuda()\n    optimizer.step()\n"
            "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: DL409\n"
            "train(model, opt)\n"
        ),
        # parameter groups built from named_parameters(), an optimizer of another package
        Example(
            "import torch\nfrom pytorch_pretrained_bert import BertAdam\nmodel = torch.nn.Linear(2, 2)\n"
            "groups = [{'params': [p for n, p in model.named_parameters() if 'bias' not in n], 'weight_decay': 0.01},\n"
            "          {'params': [p for n, p in model.named_parameters() if 'bias' in n], 'weight_decay': 0.0}]\n"
            "opt = BertAdam(groups, lr=1e-4)  # expect: DL409\nmodel.cuda()\n"
        ),
        # a configuration builder handed `torch.optim` and the trainable parameters; the trainer's
        # base class moves the model in its `__init__` (victoresque/pytorch-template#82)
        Example(
            "import torch\nclass BaseTrainer:\n    def __init__(self, model, optimizer, device):\n"
            "        self.model = model.to(device)\n        self.optimizer = optimizer\n"
            "class Trainer(BaseTrainer):\n    def __init__(self, model, optimizer, device, loader):\n"
            "        super().__init__(model, optimizer, device)\n        self.loader = loader\n"
            "def main(config, loader):\n    model = config.init_obj('arch')\n"
            "    params = filter(lambda p: p.requires_grad, model.parameters())\n"
            "    optimizer = config.init_obj('optimizer', torch.optim, params)  # expect: DL409\n"
            "    Trainer(model, optimizer, 'cuda', loader)\n"
        ),
        # a plain class builds the optimizer in `__init__`; its `cuda()`, called afterwards,
        # moves the network
        Example(
            "import torch\nclass Trainer:\n    def __init__(self):\n        self.net = torch.nn.Linear(2, 2)\n"
            "        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)  # expect: DL409\n"
            "    def cuda(self):\n        self.net.cuda()\ntrainer = Trainer()\ntrainer.cuda()\n"
        ),
        # the crashing orders are DL407's, not this rule's
        Example(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nlazy = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: DL409\n"
            "eager = torch.optim.Adagrad(model.parameters(), lr=0.1)  # expect: DL407\n"
            "restored = torch.optim.Adam(model.parameters())  # expect: DL407\n"
            "restored.load_state_dict(torch.load('opt.pt', map_location='cpu'))\nmodel.cuda()\n"
        ),
    )

    def _report(self, case: OrderCase) -> None:
        """An optimizer built before the move where nothing leaves state on the CPU."""
        if not isinstance(case, BuiltBeforeMove) or case.state_load is not None or case.eager_state is not None:
            return
        self.ctx.report(
            case.optimizer,
            f"{case.described}; that works for an optimizer that makes its state at its first `step()`, as every "
            "`torch.optim` one but Adagrad does (the move keeps the parameter objects), but PyTorch's `Module.cuda` "
            "docs advise moving the model before building its optimizer",
            related=((case.move, case.move_note),),
        )
