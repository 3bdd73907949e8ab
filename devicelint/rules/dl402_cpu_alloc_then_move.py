from __future__ import annotations

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.analysis.values import Kind
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: factories whose values come from the random generator of the device they run on
_RANDOM = frozenset({"torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.normal"})


class CpuAllocThenMove(Rule):
    """
    ## What it does
    Flags a torch factory called without `device=` whose result is moved at once -
    `torch.zeros(...).cuda()`, `torch.randn(...).to(device)`, `torch.arange(n).to(device)` -
    where the code runs again and again: in a loop body, or in a method of an `nn.Module`
    other than `__init__` (`forward` and what it calls). One-off set-up code is left alone,
    and so is a copy whose result is thrown away (`_ = torch.zeros(n).to(device)`): that one
    is made for the transfer itself, to warm the path up,
    and a loop-invariant constant that DL401 reports (move it out of the loop) is not reported
    twice. Code inside `with torch.cpu.amp.autocast():` / `with torch.autocast("cpu"):` is
    left alone too: it is written to compute on the CPU (Intel's IPEX training scripts), where
    the move copies nothing.

    ## Why is this bad?
    The tensor is allocated and filled on the CPU, then copied to the GPU: twice the work and a
    host-to-device transfer, for a tensor the GPU could have created in place.

    ## Example
    ```python
    noise = torch.randn(batch, 128).to(device)
    ```

    ## Use instead
    ```python
    noise = torch.randn(batch, 128, device=device)
    ```
    The fix passes the move's target as `device=` and drops the move. It is safe for
    deterministic factories (`zeros`, `ones`, `full`, `arange`, `tensor`, ...). For random
    factories it is marked unsafe: the numbers then come from the GPU's generator, so a
    seeded run produces different values. Moves that also change the dtype get no fix.
    Constructors from Python data (`torch.tensor([...])`, `torch.as_tensor`,
    `torch.FloatTensor([...])`) are left alone: they build the values on the host and copy
    them even when given `device=`, so there is nothing to save.
    """

    code = "DL402"
    name = "cpu-alloc-then-move"
    # the code works, only slower: advice, opt in like every info rule (and, per step, a
    # small allocation and copy; random factories are often drawn on the CPU on purpose, so
    # that a seeded run draws the same numbers on every device)
    severity = Severity.INFO
    default_enabled = False
    summary = "A factory builds a tensor on the CPU only to move it at once; pass `device=`."
    fix_safety = "safe"
    # a constant rebuilt and moved in every iteration is DL401's (hoist it); creating it on the
    # device each time would still allocate it each time
    yields_to = ("DL401",)
    valid = (
        "import torch\nx = torch.zeros(3, device='cuda')\n",
        "import torch\ntable = torch.arange(10).to('cuda')  # once, at set-up\n",
        "import torch\nx = torch.zeros(3).to(torch.float16)\n",
        "import torch\nx = torch.zeros(3)\ny = x.cuda()\n",
        "import torch\nx = torch.randn(3, generator=g).cuda()\n",
        "import torch\nx = torch.zeros(3).cpu()\n",
        "import torch\nfor ids in batches:\n    t = torch.as_tensor(ids, dtype=torch.long).to('cuda', non_blocking=True)\n",
        # the copy is the point: warming up the host-to-device path, the result thrown away
        "import torch\nfor shape in shapes:\n    _ = torch.zeros(shape).to('cuda')\n",
        # a training loop written for the CPU (an IPEX bfloat16 script): the move copies nothing
        "import torch\ndevice = torch.device(args.device)\nfor batch in loader:\n"
        "    with torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16):\n"
        "        latents = encoder(batch.to(device))\n        noise = torch.randn(latents.shape).to(latents.device)\n",
        "import torch\ndevice = torch.device(args.device)\nfor batch in loader:\n"
        "    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "        noise = torch.randn(4).to(device)\n",
    )
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda')\nfor step in range(9):\n    x = torch.zeros(step, 4).to(device)  # expect: DL402\n",
            "import torch\ndevice = torch.device('cuda')\nfor step in range(9):\n    x = torch.zeros(step, 4, device=device)  # expect: DL402\n",
        ),
        Example(
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        mask = torch.ones(8, dtype=torch.bool).to(x.device)  # expect: DL402\n        return x\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        mask = torch.ones(8, dtype=torch.bool, device=x.device)  # expect: DL402\n        return x\n",
        ),
        Example(
            "import torch\nfor n in sizes:\n    w = torch.eye(n).cuda(1)  # expect: DL402\n",
            "import torch\nfor n in sizes:\n    w = torch.eye(n, device=\"cuda:1\")  # expect: DL402\n",
        ),
        Example("import torch as t\nfor i in range(3):\n    noise = t.randn(2, 3).to('cuda', non_blocking=True)  # expect: DL402\n"),
        # autocast for the GPU, or CPU autocast switched off: the copy is real
        Example(
            "import torch\nfor batch in loader:\n    with torch.autocast('cuda'):\n"
            "        noise = torch.randn(4).to('cuda')  # expect: DL402\n"
        ),
        Example(
            "import torch\ndevice = torch.device(args.device)\nfor batch in loader:\n"
            "    with torch.cpu.amp.autocast(enabled=False):\n"
            "        noise = torch.randn(4).to(device)  # expect: DL402\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: findings held until the statement is complete: a copy whose result is thrown away
        #: (`_ = torch.zeros(n).to(device)`) is made for the transfer itself - a warm-up
        self._pending: dict[int, tuple[cst.Call, str, "FixSpec | None"]] = {}

    def _repeats(self) -> bool:
        return bool(self.ctx.loop_stack) or self.ctx.in_module_method

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: object) -> None:
        if isinstance(target, cst.Name) and target.value == "_" and isinstance(value_node, cst.Call):
            self._pending.pop(id(value_node), None)

    def finish(self) -> None:
        for node, message, fix in self._pending.values():
            self.ctx.report(node, message, fix=fix)
        self._pending.clear()

    def on_call(self, event: CallEvent) -> None:
        if event.method not in ("cuda", "to") or event.receiver is None or event.receiver.kind != Kind.TENSOR:
            return
        if event.discarded or not self._repeats() or self.ctx.in_cpu_autocast:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        factory = func.value
        origin = event.receiver.origin
        if not isinstance(factory, cst.Call) or origin is None or origin.node is not factory:
            return
        qualname = self.ctx.analyzer.qualname_of(factory.func, event.state)
        if qualname not in api.FACTORIES or qualname in api.DATA_FACTORIES:
            return  # from Python data the values are built on the host either way
        if keyword_arg(factory, "device") is not None or keyword_arg(factory, "generator") is not None:
            return
        target = event.result.device
        if target is None or not target.may_be_accelerator:
            return
        factory_text = self.ctx.source_of(factory, 60)
        self._pending[id(event.node)] = (
            event.node,
            f"`{factory_text}` is allocated and filled on the CPU, then copied to {target.describe()}; "
            f"create it there: pass `device=` to the factory",
            self._fix(event, factory, qualname),
        )

    def _fix(self, event: CallEvent, factory: cst.Call, qualname: str) -> "FixSpec | None":
        if qualname in api.LEGACY_TYPED_CONSTRUCTORS or not factory.args:
            return None
        node = event.node
        func = node.func
        assert isinstance(func, cst.Attribute)
        if func.attr.value == "cuda":
            positional = positional_args(node)
            if node.args and (len(node.args) > 1 or not positional):
                return None
            device = f'"cuda:{self.ctx.source_of(positional[0].value)}"' if positional and isinstance(positional[0].value, cst.Integer) else '"cuda"'
            if positional and not isinstance(positional[0].value, cst.Integer):
                return None
        else:
            extra = [arg for arg in node.args if not (arg.keyword is not None and arg.keyword.value == "non_blocking")]
            if len(extra) != 1:
                return None
            device_arg = extra[0]
            if device_arg.keyword is not None and device_arg.keyword.value != "device":
                return None
            device = self.ctx.module.code_for_node(device_arg.value)
        last = factory.args[-1]
        replacement = self.ctx.module.code_for_node(
            factory.with_changes(
                args=[
                    *factory.args[:-1],
                    last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(keyword=cst.Name("device"), value=cst.parse_expression(device), equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))),
                ]
            )
        )
        return FixSpec(
            f"Create it on the device: `device={device}`",
            (NodeEdit(node, "replace", replacement),),
            safe=qualname not in _RANDOM,
        )
