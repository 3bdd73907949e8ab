from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import Kind, Role
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_TO_HOST = ("cpu", "numpy")
_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy"})


class RoundTripInLoop(Rule):
    """
    ## What it does
    Flags, inside a loop, a tensor on an accelerator that goes to the host (`.cpu()`,
    `.numpy()`, a cast to a legacy CPU tensor type such as `.type(torch.FloatTensor)`, which
    copies as well as converts) and something computed from it - through names assigned in the same loop - that
    goes back to an accelerator (`.to(device)`, `.cuda()`, `torch.tensor(..., device=...)`).
    Only a tensor the analysis knows to be on an accelerator counts as leaving it. Host data
    handed across a boundary - to a method of another object (`env.step(action.cpu().numpy())`,
    a simulator, a socket) or to `torch.distributed` (RPC and collectives that take CPU
    tensors) - is not followed: what comes back is new data, and the trip is the design.

    ## Why is this bad?
    Each iteration pays two transfers and a synchronisation (`.cpu()` waits for the GPU to
    finish); for the small host-side step between them, the transfers usually cost more than the
    GPU saves, and the GPU idles while the host works.

    ## Example
    ```python
    for x, y in loader:
        logits = model(x.to(device))
        ranks = np.argsort(logits.cpu().numpy(), axis=1)
        top = torch.from_numpy(ranks[:, -5:]).to(device)
    ```

    ## Use instead
    ```python
    for x, y in loader:
        logits = model(x.to(device))
        top = logits.topk(5, dim=1).indices
    ```
    """

    code = "DL403"
    name = "round-trip-in-loop"
    severity = Severity.WARNING
    summary = "In a loop, a tensor goes to the host and what is computed from it goes back to the device."
    valid = (
        # to the host for metrics only
        "import torch\ndevice = torch.device('cuda')\nmodel = Net().to(device)\nfor x in loader:\n"
        "    out = model(x.to(device))\n    scores.append(out.cpu().numpy())\n",
        # device unknown: a parameter's tensors
        "import torch\ndef step(batches, device):\n    for out in batches:\n        host = out.cpu()\n        back = host.to(device)\n",
        # an attribute of self holds host data: self itself is not host data
        "import torch\ndevice = torch.device('cuda')\nclass Cache:\n    def fill(self, loader):\n        for t in loader:\n"
        "            u = t.to(device)\n            self.last = u.cpu()\n            self.out = self.proj(t).to(device)\n",
        # the host copy goes to an environment; the next observation it answers is new data
        "import torch\ndevice = torch.device('cuda')\nfor step in range(100):\n    action = policy(state).to(device)\n"
        "    obs, reward, done, info = env.step(action.cpu().numpy())\n    state = torch.as_tensor(obs).to(device)\n",
        # RPC takes CPU tensors: the gradients cross to the parameter server, the model comes back
        "import torch\nimport torch.distributed.rpc as rpc\nm = torch.nn.Linear(2, 2).cuda()\nfor x in batches:\n"
        "    m(x.cuda()).sum().backward()\n"
        "    m = rpc.rpc_sync('ps', update, args=([p.grad for p in m.cpu().parameters()],)).cuda()\n",
        # once, not in a loop
        "import torch\ndevice = torch.device('cuda')\nt = torch.ones(3, device=device)\nh = t.cpu()\nback = h.to(device)\n",
    )
    invalid = (
        Example(
            "import torch\nimport numpy as np\nfrom torch import nn\ndevice = torch.device('cuda')\nmodel = nn.Linear(8, 100).to(device)\nfor x in loader:\n"
            "    logits = model(x.to(device))\n    ranks = np.argsort(logits.cpu().numpy(), axis=1)\n"
            "    top = torch.from_numpy(ranks[:, -5:]).to(device)  # expect: DL403\n"
        ),
        Example(
            "import torch\nfor step in range(10):\n    t = torch.randn(4, device='cuda')\n"
            "    again = torch.tensor(t.cpu().tolist(), device='cuda')  # expect: DL403\n"
        ),
        Example(
            "import torch\nfor step in range(10):\n    t = torch.randn(4, device='cuda')\n"
            "    f = t.type(torch.FloatTensor).to('cuda')  # expect: DL403\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per outermost loop: the host-transfer calls seen, and names holding host data
        self._host_calls: dict[int, dict[int, cst.Call]] = {}
        #: calls whose arguments cross a boundary: their results are not computed from the arguments
        self._boundaries: set[int] = set()
        self._tainted: dict[int, dict[str, cst.Call]] = {}
        self._reported: set[int] = set()

    def _loop_key(self) -> Optional[int]:
        stack = self.ctx.loop_stack
        return id(stack[0].node) if stack else None

    def on_call(self, event: CallEvent) -> None:
        key = self._loop_key()
        if key is None:
            return
        if _crosses_boundary(event):
            self._boundaries.add(id(event.node))
        receiver = event.receiver
        if receiver is not None and receiver.device is not None and receiver.device.may_be_accelerator and (
            event.method in _TO_HOST or _cast_to_host_type(event)
        ):
            self._host_calls.setdefault(key, {})[id(event.node)] = event.node
            return
        moved = self._moved_back(event)
        if moved is None:
            return
        origin = self._host_origin(key, moved)
        if origin is None or id(event.node) in self._reported:
            return
        self._reported.add(id(event.node))
        loop = self.ctx.loop_stack[0]
        if origin is moved and _cast_to_host_type_node(origin):
            # `x.type(torch.FloatTensor).to(device)`: the cast alone is the detour
            self.ctx.report(
                event.node,
                f"`{self.ctx.source_of(origin)}` copies the tensor to the host (a CPU tensor type) and this call brings it "
                f"straight back, in every iteration of the loop at line {self.ctx.line(loop.node)}: two transfers and a "
                "sync per step; cast with a dtype instead (`.float()`, `.to(torch.float32)`), which keeps the device",
            )
            return
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(moved)}` comes back to the device from host data "
            f"(`{self.ctx.source_of(origin)}` at line {self.ctx.line(origin)}), in every iteration of the loop "
            f"at line {self.ctx.line(loop.node)}: two transfers and a sync per step; keep the work on one side",
        )

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: object) -> None:
        key = self._loop_key()
        if key is None:
            return
        origin = self._host_origin(key, value_node)
        if origin is None:
            return
        tainted = self._tainted.setdefault(key, {})
        for name in _target_names(target):
            tainted.setdefault(name, origin)

    def _moved_back(self, event: CallEvent) -> Optional[cst.BaseExpression]:
        """The expression being put on an accelerator by this call, if it is one."""
        result_device = event.result.device
        if event.method in ("to", "cuda") and isinstance(event.node.func, cst.Attribute):
            if result_device is not None and result_device.may_be_accelerator:
                return event.node.func.value
            return None
        if event.qualname in _FROM_DATA or (event.qualname is not None and event.qualname in api.FACTORIES):
            device = keyword_arg(event.node, "device")
            positional = positional_args(event.node)
            if device is not None and positional and result_device is not None and result_device.may_be_accelerator:
                return positional[0].value
        return None

    def _host_origin(self, key: int, node: cst.CSTNode) -> Optional[cst.Call]:
        """The host-transfer call that ``node`` is computed from: inside it, or through a name."""
        calls = self._host_calls.get(key, {})
        tainted = self._tainted.get(key, {})
        if not calls and not tainted:
            return None
        finder = _Origins(calls, tainted, self._boundaries)
        walk.visit(node, finder)
        return finder.found


def _crosses_boundary(event: CallEvent) -> bool:
    """A call that takes host data out of this computation: ``torch.distributed`` (RPC, send,
    collectives of objects), or a method of another object that is neither a tensor nor ``self``
    (``self.env.step(a)``, ``client.send(a)``); its result is whatever the other side answers."""
    if event.qualname is not None:
        return event.qualname.startswith("torch.distributed.")
    if event.method is None or not isinstance(event.node.func, cst.Attribute):
        return False
    owner = event.node.func.value
    if isinstance(owner, cst.Name) and owner.value == "self":
        return False
    receiver = event.receiver
    return receiver is not None and receiver.kind in (Kind.UNKNOWN, Kind.REF) and not receiver.is_tensor_like


def _cast_to_host_type(event: CallEvent) -> bool:
    """``x.type(torch.FloatTensor)``: a legacy CPU tensor type converts *and* copies to the host."""
    result = event.result
    return (
        event.method == "type"
        and result.role is Role.LEGACY_TYPE_CAST
        and result.device is not None
        and result.device.is_cpu
    )


def _cast_to_host_type_node(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "type"


def _target_names(target: cst.BaseExpression) -> list[str]:
    """The names and dotted names an assignment target binds (``a``, ``a, b``, ``self.cache``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    name = dotted_name(target)
    return [name] if name is not None else []


class _Origins(cst.CSTVisitor):
    def __init__(self, calls: dict[int, cst.Call], tainted: dict[str, cst.Call], boundaries: set[int]) -> None:
        self.calls = calls
        self.tainted = tainted
        self.boundaries = boundaries
        self.found: Optional[cst.Call] = None

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        if self.found is None and id(node) in self.calls:
            self.found = node
        return self.found is None and id(node) not in self.boundaries

    def visit_Name(self, node: cst.Name) -> None:
        if self.found is None and node.value in self.tainted:
            self.found = self.tainted[node.value]

    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        name = dotted_name(node)
        if self.found is None and name is not None and name in self.tainted:
            self.found = self.tainted[name]  # `self.cache`, assigned from host data
            return False
        walk.visit(node.value, self)  # `ranks.shape`: the object, not the attribute name
        return False
