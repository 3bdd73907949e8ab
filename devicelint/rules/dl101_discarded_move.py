from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.torch_semantics import moves_in_place
from devicelint.analysis.names import dotted_name, keyword_arg
from devicelint.analysis.values import Kind, Provenance, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_MOVES = frozenset({"cuda", "to", "cpu", "pin_memory"})
#: ``DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, ...)``
_COLLATE_FN_POSITION = 7


def _collated_by_default(batch: Value) -> bool:
    """Is a batch drawn from a DataLoader known to be made by default collation? A ``collate_fn`` - or a loader whose construction the analysis did not see,
    such as an annotated parameter - may build a batch object whose ``.to()`` moves it in place
    and returns it (transformers' ``BatchEncoding`` and ``BatchFeature``). Items of a dataset
    (not collated) and values of other origins are tensors as the analysis says."""
    origin = batch.origin
    if origin is None or origin.provenance is not Provenance.BATCH:
        return True
    call = origin.node
    if not isinstance(call, cst.Call):
        return False
    positional = [arg for arg in call.args if arg.keyword is None]
    return (
        keyword_arg(call, "collate_fn") is None
        and not any(arg.star for arg in call.args)
        and len(positional) < _COLLATE_FN_POSITION
    )


class DiscardedMove(Rule):
    """
    ## What it does
    Flags `t.cuda()`, `t.to(...)`, `t.cpu()` and `t.pin_memory()` on a tensor as a bare
    statement, and a parallel wrapper (`nn.DataParallel(model)`, `DistributedDataParallel(...)`)
    built and thrown away. The receiver must be known to be a tensor (device-flow analysis) or
    unable to be a module (a subscript such as `batch[0]`, a torch factory call); modules,
    optimizers and objects of unknown kind are left alone. A loop variable drawn from a
    DataLoader - also one handed to the function as a parameter (by its callers or an
    annotation) and iterated through `enumerate(...)` or `tqdm(...)` - is data, not a module:
    `for x, y in loader: x.to(device)` is flagged; `for m in models: m.to(device)` over modules
    is not. A batch object itself (`for batch in loader: batch.to(device)`; not an item taken
    from it, `batch["x"]`) is flagged only when the loader is known to use default collation: a `collate_fn` (or a loader built out of sight)
    may return an object whose `.to()` moves it in place and returns it, as transformers'
    `BatchEncoding` and `BatchFeature` do (read in transformers' source). A local of unknown
    kind (`t, w = sampler.sample(n)`) that its function binds once and uses as a tensor - an
    arithmetic operand (`loss * w`), a tensor-only method (`w.unsqueeze(0)`), the tensor operand
    of a torch function (`torch.unique(t)`) - is a tensor there too: no module, nor a batch
    object whose `.to()` works in place, supports those. So is a local unpacked by the same
    assignment as such a tensor (`t, w = sampler.sample(n)` with `loss * w` below: `t.to(d)`)
    that the function never uses as an object - it is never called and no attribute of it but
    a move or `.shape` is read: a model unpacked next to a tensor is called or its methods used.

    ## Why is this bad?
    On a tensor these methods return a new tensor and leave the original where it was: the moved
    copy is discarded and the code goes on with the CPU tensor. (`nn.Module.cuda()` and `.to()`
    move a module in place, which is why `model.cuda()` is fine.) A discarded wrapper means the
    model runs on one device.

    ## Example
    ```python
    x = torch.randn(4, 4)
    x.cuda()
    ```

    ## Use instead
    ```python
    x = torch.randn(4, 4)
    x = x.cuda()
    ```
    The fix assigns the result back to the receiver when it is a name or attribute
    (`x = x.cuda()`). It is safe: the statement's value was thrown away, so only the name now
    refers to the moved tensor, which is what the line meant to do.
    """

    code = "DL101"
    name = "discarded-move"
    severity = Severity.ERROR
    summary = "A tensor move (`.cuda()`, `.to()`, `.cpu()`) whose result is thrown away."
    fix_safety = "safe"
    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.cuda()\n",
        "import torch\nx = torch.randn(4, 4)\nx = x.cuda()\n",
        "import torch\ndef f(model):\n    model.to('cuda')\n",
        # a transformers BatchEncoding moves in place (its `to` returns the batch itself)
        "import torch\nfrom transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('gpt2')\n"
        "inputs = tokenizer(prompt, return_tensors='pt')\ninputs.to('cuda')\n",
        # used only as a module is, and a name bound twice: no evidence it is a tensor
        "import torch\ndef f(build, x):\n    head = build()\n    head.to(x.device)\n    return head(x)\n",
        "import torch\ndef f(build, x):\n    y = build()\n    y.to(x.device)\n    y = x * 2\n    return y\n",
        # unpacked next to a tensor, but used as a model is (called, its methods read)
        "import torch\ndef f(build, device):\n    net, x = build()\n    net.to(device)\n    return net(x * 2)\n",
        "import torch\ndef f(load, device):\n    model, w = load()\n    model.cuda()\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    return w * 2\n",
        # a subscript of an object nothing says is data may hold modules, whatever its name
        "import torch\ndef f(batch):\n    batch[0].to('cuda')\n",
        "import torch\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained('x')\nm.cuda()\n",
        "import torch\nclass Net(torch.nn.Module):\n    pass\nnet = Net()\nnet.to('cuda')\n",
        "import torch\nlayers = torch.nn.ModuleList([torch.nn.Linear(2, 2)])\nlayers[0].cuda()\n",
        "import torch\ndef f(self):\n    self.blocks[0].cuda()\n",
        "import torch\ndef update(self, key, value):\n    self[key].to(value.device)\n",
        "import torch\nopt = torch.optim.SGD([], lr=0.1)\nmodel = torch.nn.Linear(2, 2)\nmodel.to('cuda')\n",
        # loop variables that are modules move in place
        "import torch\nfrom torch import nn\nmodels = [nn.Linear(2, 2), nn.Linear(2, 2)]\nfor m in models:\n    m.to('cuda')\n",
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def place(self):\n        for child in self.children():\n            child.cuda()\n",
        # a collate_fn may build a batch object whose `.to()` works in place (transformers' BatchEncoding)
        "import torch\nfrom torch.utils.data import DataLoader\ndef collate(texts):\n    return tokenizer(texts, padding=True, return_tensors='pt')\n"
        "for batch in DataLoader(texts, batch_size=8, collate_fn=collate):\n    batch.to('cuda')\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.randn(4, 4)\nx.cuda()  # expect: DL101\n",
            "import torch\nx = torch.randn(4, 4)\nx = x.cuda()  # expect: DL101\n",
        ),
        Example("import torch\ntorch.zeros(3).cuda()  # expect: DL101\n"),
        Example("import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nnn.DataParallel(model)  # expect: DL101\n"),
        Example("import torch as t\nfor x, y in t.utils.data.DataLoader(ds):\n    x.cuda(non_blocking=True)  # expect: DL101\n"),
        # the loader is a parameter: its caller hands it a DataLoader
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\ndef train(model, loader, device):\n"
            "    for step, (x, y) in enumerate(loader):\n        x.to(device)  # expect: DL101\n        loss = model(x)\n"
            "train(torch.nn.Linear(2, 2), DataLoader(ds, batch_size=4), 'cuda')\n",
            "import torch\nfrom torch.utils.data import DataLoader\ndef train(model, loader, device):\n"
            "    for step, (x, y) in enumerate(loader):\n        x = x.to(device)  # expect: DL101\n        loss = model(x)\n"
            "train(torch.nn.Linear(2, 2), DataLoader(ds, batch_size=4), 'cuda')\n",
        ),
        # the file's collate_fn pads the items into one tensor: each batch is that tensor
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\ndef collate(items):\n    return torch.tensor(items)\n"
            "def train(model, data, device):\n    for step, ids in enumerate(DataLoader(data, collate_fn=collate)):\n"
            "        ids.to(device)  # expect: DL101\n        model(ids)\n",
            "import torch\nfrom torch.utils.data import DataLoader\ndef collate(items):\n    return torch.tensor(items)\n"
            "def train(model, data, device):\n    for step, ids in enumerate(DataLoader(data, collate_fn=collate)):\n"
            "        ids = ids.to(device)  # expect: DL101\n        model(ids)\n",
        ),
        # returned by code the analysis cannot see, but multiplied into the loss: a tensor
        Example(
            "import torch\ndef step(sampler, batch, losses):\n    t, w = sampler.sample(len(batch))\n"
            "    w.to(batch.device)  # expect: DL101\n    return (losses * w).mean()\n"
        ),
        # unpacked from one call with `w`, which is multiplied into the loss: data of one sort
        Example(
            "import torch\ndef step(sampler, model, batch):\n    t, w = sampler.sample(len(batch))\n"
            "    t.to(batch.device)  # expect: DL101\n    w.to(batch.device)  # expect: DL101\n"
            "    return (model(batch, t) * w).mean()\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nfrom tqdm import tqdm\n"
            "def evaluate(model, loader: DataLoader):\n    for images, labels in tqdm(loader):\n"
            "        images.cuda()  # expect: DL101\n        labels.cuda()  # expect: DL101\n"
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        if not event.discarded:
            return
        if event.method in _MOVES and event.receiver is not None:
            self._check_move(event)
            return
        qualname = event.qualname
        if qualname is not None and (qualname in api.PARALLEL_WRAPPERS or qualname.endswith("DataParallel")):
            leaf = qualname.rsplit(".", 1)[-1]
            self.ctx.report(
                event.node,
                f"`{leaf}(...)` is built and thrown away: the wrapper is lost and the model runs on one "
                f"device; assign it (`model = {leaf}(...)`)",
            )

    def _check_move(self, event: CallEvent) -> None:
        assert isinstance(event.node.func, cst.Attribute) and event.receiver is not None
        receiver_node = event.node.func.value
        evidence = None
        evidence_note = ""
        if event.receiver.kind not in (Kind.TENSOR, Kind.BATCH) and not self._cannot_be_module(receiver_node, event.receiver.kind, event.state):
            found = self._used_as_tensor(receiver_node, event.receiver)
            if found is None:
                return
            sibling, evidence = found
            where = f"`{self.ctx.source_of(evidence)}` at line {self.ctx.line(evidence)}"
            if sibling is None:
                evidence_note = f" (a tensor: {where} uses it as one)"
            else:
                evidence_note = f" (unpacked with `{sibling}`, a tensor: {where} uses it as one)"
        # a batch object itself may move in place; an item taken from it by subscript is a tensor
        if event.receiver.kind == Kind.BATCH and not isinstance(receiver_node, cst.Subscript) and not _collated_by_default(event.receiver):
            return
        if moves_in_place(event.receiver):
            return  # a tokenizer's BatchEncoding: its `to` moves it in place and returns it
        shown = f"`{self.ctx.source_of(receiver_node)}`{evidence_note}"
        target = dotted_name(receiver_node)
        fix = None
        advice = ""
        if target is not None:
            fix = FixSpec(f"Assign the result to `{target}`", (NodeEdit(event.node, "before", f"{target} = "),))
            advice = f"; assign it: `{target} = {self.ctx.source_of(event.node)}`"
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(event.node)}` returns a moved copy that is thrown away: {shown} stays where it was{advice}",
            fix=fix,
        )

    def _used_as_tensor(self, receiver_node: cst.BaseExpression, receiver: Value) -> Optional[tuple[Optional[str], cst.CSTNode]]:
        """A local of unknown kind that its function binds once and uses as a tensor elsewhere
        (`loss * weights`, `torch.unique(labels)`, `labels.unsqueeze(1)`): not a module, whose
        `.to()` would move it in place. Failing that, one unpacked from the same call as such
        a tensor and never used as an object (see the analysis' `sibling_tensor_use`): the
        sibling's name comes back with the evidence. Objects the analysis knows anything about
        beyond their kind (an object of a class of the file, a moved model's output) are left
        to it."""
        if receiver.kind != Kind.UNKNOWN or not receiver.is_bare or not isinstance(receiver_node, cst.Name):
            return None
        use = self.ctx.analyzer.tensor_use(receiver_node.value)
        if use is not None:
            return None, use
        return self.ctx.analyzer.sibling_tensor_use(receiver_node.value)

    def _cannot_be_module(self, receiver_node: cst.BaseExpression, kind: Kind, state: dict) -> bool:
        """A subscript of data (a batch, a tensor, a list of tensors; never judged by a name's
        spelling: `models[0].cuda()` moves a module in place): containers of modules (`self.blocks[0]`, a dict of metrics) move their items in place."""
        if kind in (Kind.MODULE, Kind.CRITERION, Kind.OPTIMIZER, Kind.CLASS, Kind.REF):
            return False
        if not isinstance(receiver_node, cst.Subscript):
            return False
        base = self.ctx.analyzer.eval(receiver_node.value, state) if isinstance(receiver_node.value, (cst.Name, cst.Attribute)) else None
        if base is not None and base.kind in (Kind.BATCH, Kind.TENSOR):
            return True
        return False
