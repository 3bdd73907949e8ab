from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.values import Homogeneous, HostBesideAccelerator, Kind, Role, Value, tensor_where_given
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules._flag_paths import PlacementGuards, calls_without_gpu
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Flags, in a function or method (not a module's `__init__`, whose tensors are DL103's), a
    tensor made by a torch factory without `device=` (`torch.zeros`, `torch.arange`,
    `torch.tensor([...])`, ...) or a legacy constructor (`torch.LongTensor(ids)`) that is then
    combined - by an operator, a torch function, a tensor method such as
    `masked_fill` or `scatter_add_` (also `out.backward(gradient)`, whose gradient may be
    `None` on another path, and `torch.autograd.grad(outputs, inputs, grad_outputs=...)`, whose
    gradients must be on their outputs' device), a store at tensor indices into a tensor that can
    be on an accelerator (`scores[rows, cols] = values`: `index_put_` moves the indices but not
    the values), a submodule call, or a subscript whose index or mask is
    such a tensor (`table[idx]`: PyTorch reads it only with indices on the CPU or on the
    table's device; a factory subscripted where it is made is DL207's) - with a tensor that can be on an
    accelerator: the model's (a submodule's output, a parameter or buffer, a module method's
    tensor input), one placed on a device the code chose (`x.to(device)`, `device=args.device`),
    or a free function's tensor argument (annotated `torch.Tensor`, or used as one:
    `x.size(1)`) - the function then fails for every caller whose tensor is on a GPU.
    A factory in a helper of the same file is flagged when the helper returns its tensor to
    where it meets such a tensor; the message names the helper and the line where they meet.
    A module's `forward` that returns such a tensor (alone or in a tuple) is flagged too: its
    callers take the output to be on the model's device. A module class of the file that holds
    nothing of its own (a parameter-free loss) computes where each call's inputs are: a factory
    in its `forward` that meets the tensors a call hands it is flagged, naming that call.
    So is a factory on one path of a branch whose other path gives a tensor where the
    accelerator may be (`kernel = torch.ones(k)` in one arm, a kernel made on the inputs' device
    in the other) when the merged value meets a GPU tensor: a GPU run that takes the host path
    fails there. Left alone where the other path only moves a tensor under a test (`if use_cuda:
    x = x.cuda()`) or where the branch's test is about placement (`if x.is_cuda:`, a flag that also
    chooses the device).
    So is one registered (`register_parameter`, `register_buffer`, also as an `nn.Parameter`)
    into a module its caller already placed where the accelerator may be: registering moves
    nothing, and the module's computations with it mix devices (not on `self` in the module's
    own methods, which build it before it is moved).
    So is one kept in a list beside such tensors that `torch.cat`/`torch.stack` then join,
    also a 0-dim one (`losses.append(torch.tensor(0.0))` next to GPU losses): those functions
    take no 0-dim exception.
    So is a 0-dim one that an in-place operation writes with such a tensor (`total =
    torch.tensor(0.0)`, then `total += loss` or `total.add_(loss)`): PyTorch reads a 0-dim CPU
    tensor as an input of a GPU operation, never as the output it writes.
    A `*_like` factory (`torch.zeros_like(t)`) copies its argument's device: where that
    argument is a host tensor another factory made (a helper's index table), the `*_like`
    call is the factory flagged - the one that can be given `device=` - not the argument's.
    Elsewhere 0-dim tensors (`torch.tensor(0.5)`), factories given `device=`, other `*_like` and `x.new_*`
    factories (they follow their argument), results used only for shapes or on the host, code under
    `torch.set_default_device` / `with torch.device(...)`, a factory in the branch only a
    machine without a GPU takes (`else:` of `if torch.cuda.is_available():`), and a module
    class that a file which never names a device (no `cuda`, `device`, `.to(`) builds and runs
    itself on the CPU are left alone.

    ## Why is this bad?
    The factory makes a CPU tensor; the model's tensors are on the GPU once the model is
    moved. The method works on a laptop and fails on the first GPU run with "Expected all
    tensors to be on the same device".

    ## Example
    ```python
    def forward(self, x):
        hidden = self.embed(x)
        positions = torch.arange(x.size(1))
        return hidden + self.pos_embed(positions)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        hidden = self.embed(x)
        positions = torch.arange(x.size(1), device=x.device)
        return hidden + self.pos_embed(positions)
    ```
    The fix adds `device=<input>.device`, where `<input>` is the method's first argument that
    the code passes to a submodule or annotates as a tensor. It is marked unsafe: review that
    the tensor should live where that input lives.
    """

    code = "DL202"
    name = "factory-without-device"
    severity = Severity.ERROR
    summary = "A tensor made without `device=` meets the model's tensors or a tensor argument."
    fix_safety = "unsafe"
    #: a pass of a function on one call's values (a parameter-free loss handed GPU tensors)
    #: shows its host constants meeting them
    follows_call_sites = True
    valid = (
        # ... its constant made where the predictions are
        "import torch\nfrom torch import nn\nclass WeightedMSE(nn.Module):\n    def forward(self, pred, target):\n        w = torch.tensor([1.0, 2.0, 3.0, 4.0], device=pred.device)\n        return ((pred - target) ** 2 * w).mean()\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 4).to(device)\nloss = WeightedMSE()(model(torch.rand(2, 4, device=device)), torch.rand(2, 4, device=device))\n",
        # a host zero only in the branch a machine without a GPU takes, where the losses are on the host too
        "import torch\nfrom torch import nn\nclass Loss(nn.Module):\n    def forward(self, preds, counts):\n        losses = []\n"
        "        for j in range(preds.shape[0]):\n            if counts[j] == 0:\n                if torch.cuda.is_available():\n"
        "                    losses.append(torch.zeros((), device=preds.device))\n                else:\n                    losses.append(torch.tensor(0.0))\n"
        "            else:\n                losses.append(preds[j].abs().mean())\n        return torch.stack(losses).mean()\n",
        # a loss of the file without weights whose forward only scales its target (never meets
        # it with the predictions): the target may come in on any device
        "import torch\nfrom torch import nn\nclass Scaled(nn.Module):\n    def forward(self, pred, target):\n"
        "        return pred.mean(), target.float() * 2\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(8, 8)\n        self.loss_fn = Scaled()\n"
        "    def training_step(self, x):\n        return self.loss_fn(self.proj(x), torch.arange(x.size(0)))\n",
        # a module without weights of its own that keeps the encoder it is handed: the encoder's
        # forward may read an input on the host (the lengths of pack_padded_sequence)
        "import torch\nfrom torch import nn\nclass Search(nn.Module):\n    def __init__(self, encoder):\n"
        "        super().__init__()\n        self.encoder = encoder\n"
        "    def forward(self, x, lengths):\n        return self.encoder(x, lengths)\n"
        "class Net(nn.Module):\n    def __init__(self, encoder):\n        super().__init__()\n"
        "        self.proj = nn.Linear(8, 8)\n        self.search = Search(encoder)\n"
        "    def run(self, x):\n        return self.search(self.proj(x), torch.tensor([3, 2]))\n",
        # the default made where the data is
        "import torch\nfrom torch import nn\nclass Metric(nn.Module):\n"
        "    def update(self, preds, targets, weights=None):\n"
        "        weights = torch.ones(targets.shape[0], device=targets.device) if weights is None else weights\n"
        "        return ((preds - targets) * weights.view(-1, 1)).sum()\n",
        # a CPU-only program that builds and runs its own model
        "import torch\nfrom torch import nn\nclass Seq(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.cell = nn.LSTMCell(1, 8)\n    def forward(self, x):\n        h = torch.zeros(x.size(0), 8)\n"
        "        c = torch.zeros(x.size(0), 8)\n        return self.cell(x, (h, c))\nseq = Seq()\nseq(torch.ones(2, 1))\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        return h + torch.arange(4, device=h.device)\n",
        # 0-dim: PyTorch allows it with a GPU tensor
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.proj(x) * torch.tensor(0.5)\n",
        # used for shapes only
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        n = h.size(1) + torch.tensor([1, 2]).sum().item()\n        return h[:, :n]\n",
        # under a default device
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        with torch.device('cuda'):\n"
        "            return self.proj(x) + torch.ones(4)\n",
        # *_like factories follow their argument
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
        "        return h + torch.zeros_like(h)\n",
        # not a module's method
        "import torch\ndef f(h):\n    return h + torch.ones(4)\n",
        # a zero-element placeholder for an argument the function ignores (transformers' WavLM)
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nclass A(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n    def forward(self, q):\n"
        "        return F.linear(self.proj(q), torch.empty([0]))\n",
        # the other side is an int argument
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x, offset: int):\n"
        "        return torch.arange(4) + offset\n",
        # a dataclass of frames made where the input lives
        "import torch\nfrom dataclasses import dataclass\nfrom torch import nn\n@dataclass\nclass Frame:\n"
        "    rotations: torch.Tensor\nclass Structure(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layer = nn.Linear(3, 3)\n    def forward(self, single):\n"
        "        frames = Frame(torch.eye(3, device=single.device))\n        return self.layer(frames)\n",
        # drawn from the argument but never used as a tensor (numpy's `keepdims`): no evidence
        (
            "import torch\ndef build(p, indices):\n    ids, preds = [], []\n"
            "    for i, pi in enumerate(p):\n        ids.append(torch.ones(len(indices[i])) * i)\n"
            "        fg_pred = pi[indices[i], 0]\n        preds.append(fg_pred[:, :2].max(1, keepdims=True))\n"
            "    ids = torch.cat(ids, dim=0)\n    keep = torch.cat(preds, dim=0).sum(1) > 0.5\n    return ids[keep]\n"
        ),
        # rows used only as numpy arrays are used too (`keepdims=`): `prediction` may be numpy's
        # (and a row rebound to a tensor says nothing about it)
        (
            "import torch\ndef keep(prediction, threshold):\n    xc = prediction[..., 4] > threshold\n"
            "    output = [torch.zeros(0, 6)] * prediction.shape[0]\n"
            "    for i, x in enumerate(prediction):\n        x = x[xc[i]]\n        if not x.shape[0]:\n"
            "            continue\n        conf = x[:, 5:].max(1, keepdims=True)\n        x = torch.from_numpy(x)\n"
            "        output[i] = x[x[:, 4].long() > 0]\n    return output\n"
        ),
        # every entry of the pre-filled list is replaced on every iteration: no placeholder is left
        "import torch\ndef rows(x: torch.Tensor):\n    out = [torch.zeros(0, 6)] * x.shape[0]\n"
        "    for i in range(x.shape[0]):\n        out[i] = x[i]\n    return out\n",
        # the placeholder column is on the host in every row: each column is on one device
        "import torch\ndef gather(preds, targets, device):\n    stats = []\n    targets = targets.to(device)\n"
        "    for pred in preds:\n        labels = targets[:, 1:]\n        if pred.shape[0] == 0:\n"
        "            stats.append((labels[:, 0], *torch.zeros((2, 0))))\n            continue\n"
        "        stats.append((labels[:, 0], labels[:, 1].cpu(), labels[:, 2].cpu()))\n"
        "    return [torch.cat(column, 0) for column in zip(*stats)]\n",
        # an int index of unknown kind: `table[i]` may be a 0-dim tensor, which mixes with anything
        "import torch\ndef pick(x: torch.Tensor, i):\n    table = torch.zeros(3)\n    return x.add_(table[i])\n",
        # assigned through an accelerator index: `index_put_` moves the indices to the table
        "import torch\ndef mark(labels: torch.Tensor):\n    seen = torch.zeros(10)\n    seen[labels] = 1.0\n    return seen.sum().item()\n",
        # a module's constructor: its tensors are all on the host until the module is moved
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(4))\n        self.register_buffer('scaled', self.w.detach() * torch.ones(4))\n",
        # an object an imported class built, kept by the module but never called with a tensor
        "import torch\nfrom torch import nn\nfrom tokenizers import Tokenizer\nclass M(nn.Module):\n"
        "    def __init__(self, path):\n        super().__init__()\n        self.tokenizer = Tokenizer(path)\n"
        "    def encode(self, text):\n        ids = torch.tensor(self.tokenizer(text))\n        return ids\n",
        # the dummy input made where the model's parameters are
        "import torch\nfrom copy import deepcopy\nfrom thop import profile\ndef model_info(model):\n"
        "    img = torch.zeros(1, 3, 64, 64, device=next(model.parameters()).device)\n"
        "    return profile(deepcopy(model), inputs=(img,))[0]\n",
        # a helper the module keeps may take host tensors (a noise scheduler's timesteps): only
        # what it returns is on the model's device
        "import torch\nfrom torch import nn\nclass Noiser(nn.Module):\n    def __init__(self, scheduler):\n"
        "        super().__init__()\n        self.scheduler = scheduler\n        self.proj = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n        t = torch.randint(0, 1000, (x.size(0),))\n"
        "        return self.proj(self.scheduler.add_noise(x, torch.randn_like(x), t))\n",
        # a model handed to a function that never shows it is a module: it may be anything
        "import torch\nfrom thop import profile\ndef flops(net):\n    return profile(net, inputs=(torch.zeros(1, 3, 8, 8),))\n",
        # an accumulator a reset() starts on the device it is handed
        "import torch\nfrom torch import nn\nclass Meter:\n    def __init__(self, model, device):\n        self.model = model\n"
        "        self.device = device\n        self.reset()\n    def reset(self):\n        self.scores = torch.tensor([], device=self.device)\n"
        "    def update(self, x):\n        self.scores = torch.cat([self.scores, self.model(x).squeeze(1)])\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmeter = Meter(nn.Linear(4, 1).to(device), device)\n"
        "meter.update(torch.randn(8, 4, device=device))\n",
        # a shape tensor used on the host only (for a new shape)
        "import torch\nfrom torch import nn\nclass Flat(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('tail', torch.tensor([-1]))\n    def forward(self, x):\n"
        "        shape = torch.tensor(x.shape)\n        return x.reshape(tuple(shape[0:1].tolist()) + (-1,))\n",
        # the same normaliser, moving its statistics to the data where it uses them
        "import torch\ndef as_tensor(v):\n    return v if isinstance(v, torch.Tensor) else torch.tensor(v)\n"
        "class NormalizerConfig:\n    def __init__(self, shift, scale):\n"
        "        self.shift, self.scale = as_tensor(shift), as_tensor(scale)\n"
        "class Normalizer:\n    def __init__(self, config):\n        self.shift, self.scale = config.shift, config.scale\n"
        "    def __call__(self, x):\n        return (x - self.shift.to(x.device)) / self.scale.to(x.device)\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "normalize = Normalizer(NormalizerConfig([0.5, 1.0], [2.0, 3.0]))\nnormalize(torch.randn(4, 2, device=device))\n",
        # the same loss, building the classes where the predictions are
        "import torch\nfrom torch import nn\nfrom torch.nn.functional import cross_entropy, one_hot\n"
        "class MultiClassLoss(nn.Module):\n    def _forward(self, prediction, target):\n"
        "        classes = one_hot(torch.tensor([abs(int(v)) % 3 for v in target], device=prediction.device), 3)\n"
        "        return cross_entropy(prediction.float(), classes.float(), reduction='none')\n",
    )
    invalid = (
        # a loss module that holds nothing of its own runs where its inputs are: its host
        # constant meets the GPU predictions its call hands it
        Example(
            "import torch\nfrom torch import nn\nclass WeightedMSE(nn.Module):\n    def forward(self, pred, target):\n        w = torch.tensor([1.0, 2.0, 3.0, 4.0])  # expect: DL202\n        return ((pred - target) ** 2 * w).mean()\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 4).to(device)\nloss = WeightedMSE()(model(torch.rand(2, 4, device=device)), torch.rand(2, 4, device=device))\n"
        ),
        # a TorchScript helper places its tensors as the Python one would
        Example(
            "import torch\nfrom torch import nn\n@torch.jit.script\ndef ramp(n: int):\n    return torch.arange(n).float()  # expect: DL202\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.fc(x) * ramp(4)\n"
        ),
        # a host zero appended in the GPU branch beside the losses of the model's outputs:
        # torch.stack takes no 0-dim exception (retinanet's focal loss)
        Example(
            "import torch\nfrom torch import nn\nclass Loss(nn.Module):\n    def forward(self, preds, counts):\n        losses = []\n"
            "        for j in range(preds.shape[0]):\n            if counts[j] == 0:\n                if torch.cuda.is_available():\n"
            "                    losses.append(torch.tensor(0.0))  # expect: DL202\n                else:\n                    losses.append(torch.tensor(0.0))\n"
            "            else:\n                losses.append(preds[j].abs().mean())\n        return torch.stack(losses).mean()\n"
        ),
        # every host operand of one operation is reported
        Example(
            "import torch\ndef pad(x: torch.Tensor, n: int):\n"
            "    return torch.cat([torch.zeros(n, 4), torch.ones(n, 4), x])  # expect: DL202, DL202\n"
        ),
        # a host tensor made by a different factory on each branch: both need the device
        # (PyG's subgraph relabelling: one zeros per kind of subset)
        Example(
            "import torch\ndef relabel(subset: torch.Tensor, edge_index: torch.Tensor, num_nodes: int):\n"
            "    if subset.dtype == torch.bool:\n"
            "        n_idx = torch.zeros(subset.size(0), dtype=torch.long)  # expect: DL202\n"
            "    else:\n"
            "        n_idx = torch.zeros(num_nodes, dtype=torch.long)  # expect: DL202\n"
            "    n_idx[subset] = torch.arange(subset.size(0), device=subset.device)\n"
            "    return n_idx[edge_index]\n"
        ),
        # a contrastive loss of the file owns no weights: it computes with its inputs, and its
        # forward meets the targets with the similarities of the model's outputs (an N-pairs
        # loss handed `torch.arange` targets in training_step)
        Example(
            "import torch\nfrom torch import nn\nclass PairLoss(nn.Module):\n    def __init__(self, scale=10.0):\n"
            "        super().__init__()\n        self.ce = nn.CrossEntropyLoss()\n        self.scale = scale\n"
            "    def forward(self, embeddings, target):\n        a, b = embeddings\n"
            "        return self.ce(self.scale * a @ b.t(), target)\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.proj = nn.Linear(8, 8)\n        self.loss_fn = PairLoss()\n"
            "    def training_step(self, x1, x2):\n        pair = (self.proj(x1), self.proj(x2))\n"
            "        target = torch.arange(x1.size(0))  # expect: DL202\n        return self.loss_fn(pair, target)\n"
        ),
        # a loss module maps its targets to class indices in a Python list and one-hot encodes
        # them on the host; its predictions, cast to float, are on the model's device
        # (graphnet's MultiClassificationCrossEntropyLoss)
        Example(
            "import torch\nfrom torch import nn\nfrom torch.nn.functional import cross_entropy, one_hot\n"
            "class MultiClassLoss(nn.Module):\n    def _forward(self, prediction, target):\n"
            "        classes = one_hot(torch.tensor([abs(int(v)) % 3 for v in target]), 3)  # expect: DL202\n"
            "        return cross_entropy(prediction.float(), classes.float(), reduction='none')\n"
        ),
        # a normaliser's shift and scale, made from a config's lists by a helper and kept by the
        # config object, then by the normaliser's: on the host, where GPU data meets them
        # (noether's ShiftAndScaleNormalizer)
        Example(
            "import torch\ndef as_tensor(v):\n"
            "    return v if isinstance(v, torch.Tensor) else torch.tensor(v)  # expect: DL202\n"
            "class NormalizerConfig:\n    def __init__(self, shift, scale):\n"
            "        self.shift, self.scale = as_tensor(shift), as_tensor(scale)\n"
            "class Normalizer:\n    def __init__(self, config):\n        self.shift, self.scale = config.shift, config.scale\n"
            "    def __call__(self, x):\n        return (x - self.shift) / self.scale\n"
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "normalize = Normalizer(NormalizerConfig([0.5, 1.0], [2.0, 3.0]))\nnormalize(torch.randn(4, 2, device=device))\n"
        ),
        # an accumulator that reset() starts on the host: update() reads it, on its first call,
        # as reset() left it (modyn's RHO-LOSS downsampler)
        Example(
            "import torch\nfrom torch import nn\nclass Meter:\n    def __init__(self, model):\n        self.model = model\n"
            "        self.reset()\n    def reset(self):\n        self.scores = torch.tensor([])  # expect: DL202\n"
            "    def update(self, x):\n        self.scores = torch.cat([self.scores, self.model(x).squeeze(1)])\n"
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmeter = Meter(nn.Linear(4, 1).to(device))\n"
            "meter.update(torch.randn(8, 4, device=device))\n"
        ),
        # `torch.tensor(x.shape)` has one dimension, and so has a slice of it: it cannot join a
        # buffer in `torch.cat` on a GPU (onnx-pytorch's generated Shape nodes)
        Example(
            "import torch\nfrom torch import nn\nclass Flat(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('tail', torch.tensor([-1]))\n    def forward(self, x):\n"
            "        shape = torch.tensor(x.shape)  # expect: DL202\n        target = torch.cat([shape[0:1], self.tail])\n"
            "        return x.reshape(tuple(target.tolist()))\n"
        ),
        # default weights for a call that leaves them out, in a conditional expression, meet the
        # data (chemprop's metrics): the caller's weights follow the data, the default does not
        Example(
            "import torch\nfrom torch import nn\nclass Metric(nn.Module):\n"
            "    def update(self, preds, targets, weights=None):\n"
            "        weights = torch.ones(targets.shape[0]) if weights is None else weights  # expect: DL202\n"
            "        return ((preds - targets) * weights.view(-1, 1)).sum()\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Metric(nn.Module):\n"
            "    def update(self, preds, targets, weights=None):\n"
            "        weights = weights if weights is not None else torch.ones(targets.shape[0])  # expect: DL202\n"
            "        return ((preds - targets) * weights).sum()\n"
        ),
        # forward fills a CPU buffer and returns it (DA-RNN's encoder)
        Example(
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.cell = nn.LSTMCell(4, 8)\n    def forward(self, x):\n"
            "        states = torch.zeros(x.size(0), x.size(1), 8)  # expect: DL202\n"
            "        for t in range(x.size(1)):\n            states[:, t] = self.cell(x[:, t])[0]\n"
            "        return states\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(100, 8)\n        self.pos = nn.Embedding(16, 8)\n    def forward(self, x):\n"
            "        hidden = self.embed(x)\n        positions = torch.arange(x.size(1))  # expect: DL202\n"
            "        return hidden + self.pos(positions)\n",
            "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(100, 8)\n        self.pos = nn.Embedding(16, 8)\n    def forward(self, x):\n"
            "        hidden = self.embed(x)\n        positions = torch.arange(x.size(1), device=x.device)  # expect: DL202\n"
            "        return hidden + self.pos(positions)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Gate(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(4))\n    def forward(self, x: torch.Tensor):\n"
            "        mask = torch.ones(4)  # expect: DL202\n        return torch.mul(self.weight, mask) * x\n",
            "import torch\nfrom torch import nn\nclass Gate(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(4))\n    def forward(self, x: torch.Tensor):\n"
            "        mask = torch.ones(4, device=x.device)  # expect: DL202\n        return torch.mul(self.weight, mask) * x\n",
        ),
        # resampling indices drawn on the CPU, handed by keyword (gflownet's bootstrap)
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        h = self.proj(x)\n"
            "        idx = torch.randint(0, h.size(0), (8,))  # expect: DL202\n"
            "        return torch.index_select(h, 0, index=idx)\n"
        ),
        # a results object built from a GPU model's outputs, with a legacy constructor in its
        # `__init__` (yolov5's Detections)
        Example(
            "import torch\nfrom torch import nn\nclass Detections:\n    def __init__(self, images, predictions):\n"
            "        gains = [torch.Tensor([im.shape[1], im.shape[0]]) for im in images]  # expect: DL202\n"
            "        self.normalized = [p / g for p, g in zip(predictions, gains)]\n"
            "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 2)\n"
            "    def forward(self, images, x):\n        return Detections(images, list(self.proj(x)))\n"
        ),
        # initial frames in a dataclass, handed to the layers (nanofold's structure module)
        Example(
            "import torch\nfrom dataclasses import dataclass\nfrom torch import nn\n@dataclass\nclass Frame:\n"
            "    rotations: torch.Tensor\n    translations: torch.Tensor\n"
            "class Layer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.update = nn.Linear(3, 3)\n"
            "    def forward(self, frames):\n        return Frame(frames.rotations, frames.translations + self.update(frames.translations))\n"
            "class Structure(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.ModuleList([Layer() for _ in range(2)])\n    def forward(self, single):\n"
            "        frames = Frame(torch.eye(3).expand(single.size(0), 3, 3),  # expect: DL202\n"
            "                       torch.zeros(single.size(0), 3))  # expect: DL202\n"
            "        for layer in self.layers:\n            frames = layer(frames)\n        return frames\n"
        ),
        # placeholder stats for images without predictions beside GPU stats, concatenated per
        # column (yolov5's val.py); empty or not, a CPU tensor in torch.cat with GPU ones fails
        Example(
            "import torch\ndef gather(preds, targets, device):\n    stats = []\n    targets = targets.to(device)\n"
            "    for pred in preds:\n        labels = targets[:, 1:]\n        if pred.shape[0] == 0:\n"
            "            stats.append((labels[:, 0], *torch.zeros((2, 0))))  # expect: DL202\n            continue\n"
            "        stats.append((labels[:, 0], labels[:, 1], labels[:, 2]))\n"
            "    return [torch.cat(column, 0) for column in zip(*stats)]\n"
        ),
        # per-image outputs pre-filled with CPU placeholders, some replaced by the input's rows
        # (yolov5's non_max_suppression): callers get entries on two devices
        Example(
            "import torch\ndef keep(prediction: torch.Tensor, threshold: float):\n"
            "    output = [torch.zeros(0, 6)] * prediction.shape[0]  # expect: DL202\n"
            "    for i, x in enumerate(prediction):\n        x = x[x[:, 4] > threshold]\n        if not x.shape[0]:\n"
            "            continue\n        output[i] = x\n    return output\n"
        ),
        # the same, unannotated: the rows of `prediction` are used as numpy refuses (`keepdim=`),
        # also after `x = x[...]`, so it is a tensor
        Example(
            "import torch\ndef keep(prediction, threshold):\n    xc = prediction[..., 4] > threshold\n"
            "    output = [torch.zeros(0, 6)] * prediction.shape[0]  # expect: DL202\n"
            "    for i, x in enumerate(prediction):\n        x = x[xc[i]]\n        if not x.shape[0]:\n"
            "            continue\n        conf, j = x[:, 5:].max(1, keepdim=True)\n        output[i] = x[conf.view(-1) > 0]\n"
            "    return output\n"
        ),
        # a host id table indexed with a mask computed from the predictions the caller handed in,
        # each a tensor drawn from the argument `p` (yolov7's OTA assignment)
        Example(
            "import torch\nclass Assigner:\n    def build(self, p, indices):\n        ids, preds = [], []\n"
            "        for i, pi in enumerate(p):\n            b, a = indices[i]\n"
            "            ids.append(torch.ones(size=(len(b),)) * i)  # expect: DL202\n"
            "            fg_pred = pi[b, a]\n            preds.append(fg_pred[:, :2].sigmoid())\n"
            "        ids = torch.cat(ids, dim=0)\n        keep = torch.cat(preds, dim=0).sum(1) > 0.5\n"
            "        return ids[keep]\n"
        ),
        # a host table subscripted with a mask from the model's output (detrex's DETA assigner)
        Example(
            "import torch\nfrom torch import nn\nclass Matcher(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
            "    def forward(self, a, truth):\n        indices = self.proj(a).max(1).indices\n"
            "        ids = torch.arange(0, indices.shape[0])  # expect: DL202\n        return ids[truth == indices]  # expect: DL207\n"
        ),
        # indexed by a tensor the argument object carries, read into a local (torch-sim's FixCom)
        Example(
            "import torch\nclass FixCom:\n    def adjust(self, state, positions):\n"
            "        system_idx = state.system_idx\n        counts = torch.bincount(system_idx.long())\n"
            "        shift = torch.zeros(state.n_systems, 3)  # expect: DL202\n"
            "        return positions + shift[system_idx] / counts[system_idx].unsqueeze(-1)\n"
        ),
        # a submodule an imported class built in `__init__` follows the model; the token buffer
        # handed to it is on the host (esm's GVPTransformerModel.sample)
        Example(
            "import torch\nfrom torch import nn\nfrom esm.decoder import TransformerDecoder\nclass Model(nn.Module):\n"
            "    def __init__(self, args, alphabet):\n        super().__init__()\n"
            "        embed = nn.Embedding(len(alphabet), 8)\n        self.decoder = TransformerDecoder(args, alphabet, embed)\n"
            "    def sample(self, length):\n        tokens = torch.full((1, 1 + length), 0, dtype=int)  # expect: DL202\n"
            "        for i in range(1, length + 1):\n            logits, _ = self.decoder(tokens[:, :i])\n"
            "        return tokens\n"
        ),
        # a decoder handed to the constructor steps on the model's tensors: what it returns is
        # there, and the host scores meet it (IBM pytorch-seq2seq's TopKDecoder)
        Example(
            "import torch\nfrom torch import nn\nclass Beam(nn.Module):\n    def __init__(self, decoder):\n"
            "        super().__init__()\n        self.decoder = decoder\n    def forward(self, hidden, outputs):\n"
            "        scores = torch.zeros(hidden.size(1), 1)  # expect: DL202\n"
            "        step, hidden = self.decoder.step(hidden, outputs.unsqueeze(0))\n"
            "        scores += step.squeeze(1)\n        return scores.topk(2)\n"
        ),
        # a buffer one method makes for another that it calls on the moved input (flashtorch's
        # GradientAscent)
        Example(
            "import torch\nclass Ascent:\n    def __init__(self, model):\n        self.model = model\n"
            "        self.gradients = None\n    def optimize(self, image):\n        if torch.cuda.is_available():\n"
            "            self.model = self.model.to('cuda')\n            image = image.to('cuda')\n"
            "        self.gradients = torch.zeros(image.shape)  # expect: DL202\n        return self._ascent(image)\n"
            "    def _ascent(self, x):\n        for _ in range(10):\n            self.model(x)\n"
            "            x = x + self.gradients\n        return x\n"
        ),
        # thop's profile runs the model handed to the function on a CPU dummy input (yolov5's model_info)
        Example(
            "import torch\nfrom copy import deepcopy\nfrom thop import profile\ndef model_info(model):\n"
            "    n = sum(p.numel() for p in model.parameters())\n"
            "    flops = profile(deepcopy(model), inputs=(torch.zeros(1, 3, 64, 64),))[0]  # expect: DL202\n"
            "    return n, flops\n"
        ),
        # a distribution built from a CUDA parameter: broadcast_all keeps it there (LKJCholesky)
        Example(
            "import torch\nfrom torch.distributions.utils import broadcast_all\nclass Onion:\n"
            "    def __init__(self, dim, concentration):\n        (self.concentration,) = broadcast_all(concentration)\n"
            "        offset = torch.arange(dim - 1)  # expect: DL202\n"
            "        self.beta = self.concentration.unsqueeze(-1) - 0.5 * offset\n"
            "dist = Onion(3, torch.tensor(2.0, device='cuda'))\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._module_calls: set[int] = set()
        self._reported: set[int] = set()
        #: per function, the calls that run only without a GPU (see calls_without_gpu)
        self._without_gpu: dict[cst.FunctionDef, frozenset[int]] = {}
        #: the module's tests about placement, walked on demand (see _on_placement_path)
        self._guards: Optional[PlacementGuards] = None
        #: findings kept for ``finish``, each with the call whose pass made it (None for the
        #: function's own analysis; see Rule.follows_call_sites)
        self._pending: list[tuple[cst.CSTNode, str, Optional[FixSpec], Optional[cst.Call]]] = []

    # ------------------------------------------------------------------ events

    def _function(self) -> Optional[cst.FunctionDef]:
        """The function being analysed; None at module level (there a CPU tensor meeting the
        accelerator is DL201's)."""
        return self.ctx.current_function.node

    def on_call(self, event: CallEvent) -> None:
        function = self._function()
        if function is None:
            return
        if event.callee.kind == Kind.CRITERION:
            # a loss compares its input with its target: the two must share a device
            # (`nn.BCELoss()(probs, labels)`, as `F.binary_cross_entropy(probs, labels)`); its
            # other arguments need not (CTCLoss reads its lengths on the host)
            compared = [
                (arg.value, value)
                for position, (arg, value) in enumerate(event.args)
                if (position < 2 and arg.keyword is None and not arg.star or arg.keyword is not None and arg.keyword.value in ("input", "target"))
                and value.is_tensor_like
            ]
            self._check_operands(compared, function, event.node)
            return
        if event.method in ("register_parameter", "register_buffer") and len(event.args) >= 2:
            self._check_registered(event, function)
            return
        if event.callee.kind == Kind.MODULE:  # `self.proj(x)` too: the analysis resolves submodule calls
            self._module_calls.add(id(event.node))
            module = event.callee
            if module.device is None or not module.device.may_be_accelerator:
                return
            if module.role is Role.PARALLEL_WRAPPER:
                return  # DataParallel / DDP scatter their inputs to the devices themselves
            placed_by_callee = self.ctx.analyzer.inputs_placed_by_module(module, event.args)
            for (arg, value), placed in zip(event.args, placed_by_callee):
                if placed:
                    continue
                # a submodule's weights meet even a 0-dim input (linear, embedding, conv); a
                # recurrent layer takes its initial states as a tuple: `self.lstm(x, (h0, c0))`
                for item in _tensors_in(value):
                    if item.origin is not None and item.origin.from_data:
                        continue  # data (`torch.tensor(image)` of what the function was handed) reaching a model: DL203's
                    for factory in self._cpu_factories(item, allow_unknown_rank=True):
                        self._report(factory, function, event.node, other=(event.callee_node, module))
            return
        if event.qualname in api.AUTOGRAD_GRADS:
            self._check_grad_outputs(event, function)
            return
        if event.qualname in api.CONCATENATING and event.args and event.args[0][0].keyword is None:
            # torch.cat/torch.stack take no 0-dim exception: a host zero in the list fails too
            apart = _entries_apart(event.args[0][1], any_rank=True)
            if apart is not None:
                self._report_apart(apart, function, event.node, any_rank=True)
        operands = event.operands(api.OPERAND_KEYWORDS)
        if event.method == "backward":
            # `out.backward(g)` takes a tensor or None: where the code gives a tensor, it must
            # be on the output's device
            operands = [
                (arg.value, tensor_where_given(value))
                for position, (arg, value) in enumerate(event.args)
                if (position == 0 and arg.keyword is None and not arg.star or arg.keyword is not None and arg.keyword.value == "gradient")
                and tensor_where_given(value).is_tensor_like
            ]
        if event.qualname in api.MIXING_FUNCTIONS:
            self._check_operands(operands, function, event.node)
        elif event.method in api.BINARY_TENSOR_METHODS and isinstance(event.node.func, cst.Attribute) and event.receiver is not None:
            receiver = event.node.func.value
            self._check_operands([(receiver, event.receiver), *operands], function, event.node, receiver if event.method.endswith("_") else None)

    def _check_grad_outputs(self, event: CallEvent, function: cst.FunctionDef) -> None:
        """``torch.autograd.grad(outputs=d, inputs=x, grad_outputs=torch.ones(d.size()))``:
        autograd takes each gradient only on its output's device ("invalid gradient at index 0 -
        expected device cuda:0 but got cpu"; a 0-dim one it moves). A caller passes
        ``grad_outputs`` for outputs that are not 0-dim (a scalar needs none), so the gradient
        has a dimension too unless the outputs are known to be 0-dim."""
        found = {}
        for position, (arg, value) in enumerate(event.args):
            if arg.star:
                return
            name = arg.keyword.value if arg.keyword is not None else ("outputs", "inputs", "grad_outputs")[position] if position < 3 else None
            if name in ("outputs", "grad_outputs"):
                found[name] = (arg.value, tensor_where_given(value))
        if len(found) != 2:
            return
        (outputs_node, outputs), (gradient_node, gradient) = found["outputs"], found["grad_outputs"]
        if not outputs.is_tensor_like or not gradient.is_tensor_like or outputs.scalar is True:
            return
        if gradient.scalar is None:
            gradient = replace(gradient, scalar=False)
        self._check_operands([(outputs_node, outputs), (gradient_node, gradient)], function, event.node)

    def _check_registered(self, event: CallEvent, function: cst.FunctionDef) -> None:
        """``module.register_parameter(name, nn.Parameter(torch.empty(0)))`` on a module already
        placed where the accelerator may be (the caller moved it): `register_*` moves nothing,
        so the module now holds a host tensor beside its GPU weights, and its forward (or
        whatever reads the new entry with the module's inputs) mixes devices. Not on ``self``
        in the module's own methods, which build it before it is moved."""
        func = event.node.func
        receiver = event.receiver
        if not isinstance(func, cst.Attribute) or receiver is None or receiver.kind != Kind.MODULE:
            return
        if receiver.device is None or not receiver.device.may_be_accelerator or receiver.device.argument or receiver.device.kind == "follows":
            return
        positional = [*function.params.posonly_params, *function.params.params]
        if isinstance(func.value, cst.Name) and positional and func.value.value == positional[0].name.value and self.ctx.current_function.class_info is not None:
            return
        tensor_arg = event.args[1][1]
        for factory in self._cpu_factories(tensor_arg, allow_unknown_rank=True, allow_placeholder=True):
            self._report(factory, function, event.node, other=(func.value, receiver), registered=True)

    def on_return(self, node: cst.Return, value: Value) -> None:
        """``return outputs, hidden`` from a module's ``forward``: callers take what a model
        returns to be on the model's device and combine it with their own GPU tensors."""
        function = self._function()
        context = self.ctx.current_function
        apart = _entries_apart(value)
        if function is not None and apart is not None:
            self._report_apart(apart, function, node, returned=True)
        if function is None or function.name.value != "forward" or context.class_info is None or not context.class_info.is_module:
            return
        factories = [factory for item in _tensors_in(value) for factory in self._cpu_factories(item)]
        # a module without weights of its own may well be a CPU-side helper
        if factories and self.ctx.analyzer.owns_parameters(context.class_info):
            for factory in factories:
                self._report(factory, function, node, returned=True)

    def on_index(self, node: cst.Subscript, base: Value, index_node: cst.BaseExpression, index: Value) -> None:
        """``table[idx]`` / ``table[mask]`` where ``table`` is a device-less factory's tensor and
        the index may be on an accelerator (also a tensor argument's, as for the operators):
        PyTorch reads a subscript only with indices on the CPU or on the table's device.

        Checked on torch 2.13 (CPU build) by running the CPU kernel of ``aten::index`` on a CPU
        table with a ``meta`` index (``aten.index.Tensor.redispatch(DispatchKeySet(CPU), ...)``;
        CUDA's kernel shares that check): an integer index, a boolean mask and ``t[:, idx]``
        all raise "indices should be either on cpu or on the same device as the indexed tensor
        (cpu)". A 0-dim integer index is left alone (a Python subscript turns it into an int),
        and so are assignments (``table[idx] = v``: ``index_put_`` moves the indices)."""
        function = self._function()
        if function is None or index.scalar is True or base.kind == Kind.NDARRAY:
            return
        if self.ctx.call_context is not None:
            return  # in a pass of one call's values, DL207 reports the subscript itself
        if index.device is None or not index.device.may_be_accelerator:
            return
        for factory in self._cpu_factories(base, allow_unknown_rank=True):
            if factory[0] is node.value and not index.device.argument:
                return  # `torch.arange(n)[mask]`, subscripted where it is made: DL207's, on this very expression
            self._report(factory, function, node, other=(index_node, index), indexed=True)

    def on_index_put(self, target: cst.Subscript, base: Value, index: Value, value_node: cst.BaseExpression, value: Value) -> None:
        """``scores[rows, cols] = values`` with tensor indices: PyTorch runs ``index_put_``,
        which moves the indices to ``scores``'s device but takes ``values`` only on that device
        (or 0-dim): a host factory's tensor written into a tensor that may be on a GPU fails with
        mixed devices. (With integer and slice indices the store is a copy, which crosses
        devices.) Only that direction: a host table filled at its indices with what a caller
        handed in is most often host-side bookkeeping (index tables built on the CPU and moved
        once), and the caller's tensor may well be on the host."""
        function = self._function()
        if function is None or index.scalar is True or not value.is_tensor_like or value.scalar is True:
            return
        if base.device is None or not base.device.may_be_accelerator:
            return
        if value.scalar is None:
            # what is written at tensor indices is one value per index (a 0-dim one is spelled
            # as a literal or a reduction, whose rank the analysis knows)
            value = replace(value, scalar=False)
        self._check_operands([(target.value, base), (value_node, value)], function, target)

    def on_binary(self, event: BinaryEvent) -> None:
        function = self._function()
        if function is not None:
            # `total += x` writes its left side: PyTorch reads a 0-dim CPU tensor as an input of
            # a GPU operation, never as the output it writes
            written = event.left_node if isinstance(event.node, cst.AugAssign) else None
            self._check_operands([(event.left_node, event.left), (event.right_node, event.right)], function, event.node, written)

    def _check_operands(
        self, operands: list[tuple[cst.BaseExpression, Value]], function: cst.FunctionDef, node: cst.CSTNode,
        written: Optional[cst.BaseExpression] = None,
    ) -> None:
        """``written``: the operand an in-place operation writes (``total += x``,
        ``total.add_(x)``): a host tensor there fails whatever its rank."""
        for operand, value in operands:
            if self._host_attribute_of_module(operand):
                continue
            # (a written tensor of unknown rank is left as any other: nothing says it is the 0-dim one)
            any_rank = operand is written and value.scalar is True
            factories = self._cpu_factories(value, any_rank=any_rank)
            merged = False
            if not factories:
                # made on the host on one path, where the accelerator may be on another
                # (`kernel = torch.ones(k)` in one branch, a kernel on the inputs' device in the
                # other): a GPU run that takes the host path fails where it meets a GPU tensor
                factories = [] if self._moved_on_some_path(value) else [
                    found for found in self._cpu_factories(value, on_host_paths=True, any_rank=any_rank) if not self._on_placement_path(found[0])
                ]
                merged = True
            if not factories:
                continue
            for other, other_value in operands:
                if other is operand:
                    continue
                if other_value.device is not None and other_value.device.may_be_accelerator and not (
                    merged and (other_value.device.also_on_host or other_value.device.argument)
                ):
                    # every host operand of the operation needs the device, not only the first
                    for factory in factories:
                        self._report(factory, function, node, other=(other, other_value), written=any_rank)
                    break

    def _report_apart(
        self, apart: HostBesideAccelerator, function: cst.FunctionDef, meeting: cst.CSTNode, returned: bool = False, any_rank: bool = False
    ) -> None:
        """A list holds a host tensor (a placeholder, often empty) beside tensors that may be on
        an accelerator: ``torch.cat``/``torch.stack`` of it fail on a GPU, and so does a caller
        that takes the device of one entry for all of them."""
        # every place the host entry may come from where paths merged needs the device
        for factory, home in self._cpu_factories(apart.host, allow_placeholder=True, any_rank=any_rank):
            if id(factory) in self._reported:
                continue
            if self.ctx.analyzer.foreign_home(home) is not None:
                continue  # made in another module: its own lint run reports it there
            self._reported.add(id(factory))
            if id(factory) in self._runs_without_gpu(home):
                continue  # the branch for a machine without a GPU, where the program's tensors are on the host
            self._report_entry_apart(factory, home, apart, function, meeting, returned)

    def _report_entry_apart(
        self, factory: cst.Call, home: cst.FunctionDef, apart: HostBesideAccelerator, function: cst.FunctionDef, meeting: cst.CSTNode, returned: bool
    ) -> None:
        other = apart.accelerator
        beside = where(other, self.ctx) if other.device is not None else "on an accelerator"
        put = f" (put in at line {self.ctx.line(apart.put_by)})" if apart.put_by is not None else ""
        if returned:
            place = (
                f"`{function.name.value}()` returns it in a list beside tensors{put} {beside}: its callers get "
                "entries on the CPU or on the GPU depending on the path, and fail where they concatenate them or "
                "take one entry's device for all"
            )
        else:
            place = f"a list holds it beside tensors{put} {beside}, and line {self.ctx.line(meeting)} concatenates them"
        source = self._device_source(factory, home)
        self._defer((
            factory,
            f"`{self.ctx.source_of(factory.func)}` without `device=` makes a CPU tensor, and {place}; "
            "on a GPU this fails with mixed devices (also for an empty tensor): pass `device=`"
            + (f" (e.g. `device={source}.device`)" if source else ""),
            self._fix(factory, source),
        ))

    # ------------------------------------------------------------------ helpers

    def _sibling_method(self, function: cst.FunctionDef) -> bool:
        """Is ``function`` another method of the class whose method is being analysed?"""
        info = self.ctx.current_function.class_info
        return info is not None and any(method is function for method in info.methods.values())

    def _host_attribute_of_module(self, operand: cst.BaseExpression) -> bool:
        """``self.table[:n]`` in a method of an nn.Module whose ``__init__`` left ``self.table``
        a host tensor - made there or by a helper it calls (``sinusoid_table(n)``): the tensor
        is an attribute that ``model.to()`` does not move, DL103's finding, wherever it was made."""
        while isinstance(operand, cst.Subscript):
            operand = operand.value
        context = self.ctx.current_function
        function, info = context.node, context.class_info
        if not isinstance(operand, cst.Attribute) or not isinstance(operand.value, cst.Name) or function is None:
            return False
        if info is None or not info.is_module or function.name.value == "__init__":
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional or positional[0].name.value != operand.value.value:
            return False
        kept = info.attributes.get(operand.attr.value)
        return kept is not None and kept.kind == Kind.TENSOR and kept.device is not None and kept.device.is_cpu

    def _cpu_factories(
        self, value: Value, allow_unknown_rank: bool = False, allow_placeholder: bool = False, any_rank: bool = False,
        on_host_paths: bool = False,
    ) -> list[tuple[cst.Call, cst.FunctionDef]]:
        """The device-less factory calls, made in a function, that a host tensor comes from:
        every place it may come from where paths merged (``torch.zeros(a)`` on one branch,
        ``torch.zeros(b)`` on the other). Elementwise operators accept a 0-dim CPU tensor, so
        there it must be known to have a dimension (unless ``any_rank``: the concatenating
        functions). A factory in a module's ``__init__`` is an attribute: DL103's (one in a
        plain class's ``__init__`` meets what the object is built from)."""
        if not any_rank and (value.scalar is True or (value.scalar is None and not allow_unknown_rank)):
            return []
        # the analysis records every factory call with the function it ran in - also one in a
        # helper that a method's call summarised (the helper itself may be analysed later)
        found = []
        made = self.ctx.analyzer.device_less_factories(value, on_host_paths)
        for call, qualname, home in made:
            if qualname not in api.FUNCTION_HOST_FACTORIES or home is None or self.ctx.analyzer.constructs_module(home):
                continue
            if self.ctx.analyzer.made_while_building_module(call):
                continue  # a helper built it for a module's `__init__`: an attribute, DL103's
            if not allow_placeholder and _empty_placeholder(call, qualname):
                continue
            if value.origin is not None and value.origin.from_data and call is value.origin.node and _of_records(call):
                continue  # records made a tensor one by one (`torch.tensor([... for row in rows])`): data, not a constant missing `device=`
            found.append((call, home))
        return found

    def _report(
        self,
        found: tuple[cst.Call, cst.FunctionDef],
        method: cst.FunctionDef,
        meeting: cst.CSTNode,
        other: Optional[tuple[cst.CSTNode, Value]] = None,
        returned: bool = False,
        indexed: bool = False,
        registered: bool = False,
        written: bool = False,
    ) -> None:
        factory, home = found
        if id(factory) in self._reported:
            return
        self._reported.add(id(factory))
        if id(factory) in self._runs_without_gpu(home):
            return  # the branch for a machine without a GPU, where the program's tensors are on the host
        spelled = self.ctx.source_of(factory.func)
        if self.ctx.analyzer.foreign_home(home) is not None:
            self._report_imported(factory, home, meeting, other, returned)
            return
        source = self._device_source(factory, home)
        other_text = "the model's tensors"
        if other is not None and other[1].device is not None:
            other_text = f"`{_short(self.ctx.source_of(other[0]))}`, {where(other[1], self.ctx)}"
        meets = (
            "is indexed by" if indexed else "is registered (nothing moves it) into" if registered
            else "is written in place with" if written else "meets"
        )
        if returned:
            via = "" if home is method else f"`{home.name.value}()` makes it for `forward`, and "
            place = (
                f"{via}`forward` returns it at line {self.ctx.line(meeting)}: a GPU model's callers get a CPU "
                "tensor next to their GPU ones"
            )
        elif home is method:
            place = f"it {meets} {other_text} at line {self.ctx.line(meeting)}"
        elif home.name.value == "__init__":
            # a plain class's constructor keeps it (`self.stats = {...}`) for its other methods
            place = f"`__init__()` keeps it for `{method.name.value}()`, where it {meets} {other_text} at line {self.ctx.line(meeting)}"
        elif (
            f".{method.name.value}(" in self.ctx.analyzer.body_text(home)
            or self.ctx.analyzer.runs_in_init(home)
            or self._sibling_method(home) and f".{home.name.value}(" not in self.ctx.analyzer.body_text(method)
        ):
            # made in a method that then calls this one, in one that runs as part of
            # `__init__` (`self._setup()`), or in another method of the class that this one
            # does not call (a `reset()`): this one finds it in an attribute
            place = f"`{home.name.value}()` keeps it for `{method.name.value}()`, where it {meets} {other_text} at line {self.ctx.line(meeting)}"
        elif f"{home.name.value}(" in self.ctx.analyzer.body_text(method):
            place = f"`{home.name.value}()` returns it to `{method.name.value}`, where it {meets} {other_text} at line {self.ctx.line(meeting)}"
        else:
            # not called there: it reaches the method by another way (a config object's
            # attributes, an argument a caller hands on)
            place = f"it reaches `{method.name.value}()` from `{home.name.value}()`, where it {meets} {other_text} at line {self.ctx.line(meeting)}"
        # decided at the end of the file: only then is it known whether the file is a CPU-only
        # program that runs its own model
        if self.ctx.analyzer.factory_name(factory) in api.LEGACY_TYPED_CONSTRUCTORS:
            # a legacy constructor takes no accelerator `device=`: the remedy is another factory
            self._defer((
                factory,
                f"`{spelled}` is a legacy constructor that makes a CPU tensor, and {place}; on a GPU this fails "
                f"with mixed devices: build it with `torch.tensor(...)` or a factory and pass `device=`"
                + (f" (e.g. `device={source}.device`)" if source else ""),
                None,
            ))
            return
        failure = (
            "PyTorch raises \"indices should be either on cpu or on the same device as the indexed tensor\""
            if indexed else "the module's computations with it fail with mixed devices" if registered
            else "this fails with mixed devices (PyTorch takes a 0-dim CPU tensor as an input of a GPU operation, never as the output it writes)"
            if written else "this fails with mixed devices"
        )
        made = (
            "makes its tensor where its argument is, on the CPU"
            if (self.ctx.analyzer.factory_name(factory) or "").endswith("_like")
            else "makes a CPU tensor"
        )
        self._defer((
            factory,
            f"`{spelled}` without `device=` {made}, and {place}; "
            f"on a GPU {failure}: pass `device=`"
            + (f" (e.g. `device={source}.device`)" if source else ""),
            self._fix(factory, source),
        ))

    def _on_placement_path(self, factory: cst.Call) -> bool:
        """Is the factory on a path that a test about placement selects (``if x.is_cuda:``, a
        flag that also picks the device)? Then the tensors it meets are placed by that test
        too, and on the path that makes it they may well be on the host."""
        return self._placement_guards().guarded(factory)

    def _moved_on_some_path(self, value: Value) -> bool:
        """Was the value put where the accelerator may be by a call that runs only where some
        test holds (``if use_cuda: x = x.cuda()``, ``x.to(d) if x.device != d else x``)? Then the
        host tensor of the other path is most likely the very one it moves, left where it is
        on purpose; a host tensor made apart from the placed one is judged where it is made."""
        origin = value.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return True
        if not origin.moved:
            return False  # made there (`torch.full(..., device=x.device)` on one branch): a tensor of its own
        return self._placement_guards().conditional(origin.node)

    def _placement_guards(self) -> PlacementGuards:
        """The module's tests about placement, walked once, when first asked."""
        if self._guards is None:
            self._guards = PlacementGuards(self.ctx.module)
        return self._guards

    def _runs_without_gpu(self, function: cst.FunctionDef) -> frozenset[int]:
        found = self._without_gpu.get(function)
        if found is None:
            found = self._without_gpu[function] = calls_without_gpu(function)
        return found

    def _report_imported(
        self, factory: cst.Call, home: cst.FunctionDef, meeting: cst.CSTNode, other: Optional[tuple[cst.CSTNode, Value]], returned: bool
    ) -> None:
        """The factory is in another module of the project (``utils.make_mask()``): the finding
        is here, where its CPU tensor meets the model's side, and names the factory's line there."""
        other_text = "the model's tensors"
        if other is not None and other[1].device is not None:
            other_text = f"`{_short(self.ctx.source_of(other[0]))}`, {where(other[1], self.ctx)}"
        place = "`forward` returns it: a GPU model's callers get a CPU tensor next to their GPU ones" if returned else f"here it meets {other_text}"
        self._defer((
            meeting,
            f"`{home.name.value}()` returns a CPU tensor (`{self.ctx.source_of(factory.func)}` without `device=`, "
            f"line {self.ctx.line(factory)}), and {place}; on a GPU this fails with mixed devices: "
            f"create it on the right device in `{home.name.value}()` (take a `device` argument) or move it here",
            None,
        ))

    def _defer(self, finding: tuple[cst.CSTNode, str, Optional[FixSpec]]) -> None:
        self._pending.append((*finding, self.ctx.call_context))

    def finish(self) -> None:
        if self._cpu_only_program():
            return
        for factory, message, fix, called_from in self._pending:
            self.ctx.report(factory, message, fix=fix, called_from=called_from)

    def _cpu_only_program(self) -> bool:
        """Nothing in the file names a device, and the file builds its own model and runs it:
        a program for the CPU, where a CPU tensor is the right one (pytorch/examples'
        time_sequence_prediction). A file of model classes alone is a library: still flagged."""
        facts = self.ctx.analyzer.facts
        return not facts.mentions_accelerator and facts.program_builds_own_model

    def _device_source(self, factory: cst.Call, function: cst.FunctionDef) -> Optional[str]:
        """The parameter of the factory's function whose device to use: the one whose size the
        factory takes (``torch.arange(x.size(1))``), else the first after ``self`` that is
        annotated as a tensor or given to a submodule."""
        params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
        names = [param.name.value for param in params]
        sized = _SizedParameters(names)
        walk.visit(factory, sized)
        if sized.found is not None:
            return sized.found
        finder = _ArgumentsOfModuleCalls(self._module_calls)
        walk.visit(function, finder)
        for param in params[1:] if params and names[0] in ("self", "cls") else params:
            if self.ctx.analyzer.is_tensor_parameter(param) or param.name.value in finder.names:
                return param.name.value
        return None

    def _fix(self, factory: cst.Call, source: Optional[str]) -> Optional[FixSpec]:
        if source is None or not factory.args or any(arg.star for arg in factory.args):
            return None
        last = factory.args[-1]
        return FixSpec(f"Create it on `{source}.device`", (NodeEdit(last, "after", f", device={source}.device"),), safe=False)


def _tensors_in(value: Value) -> list[Value]:
    """The value itself, or the elements of a tuple/list of known elements, or the fields of a
    dataclass object (``Frame(rotations=..., translations=...)``); one level deep."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return list(value.info)
    # entries a dict remembers at constant keys (``{"grid_sizes": torch.tensor(...)}``, see
    # Value.with_item) are not fields: a model or pipeline handed the dict (``pipe(**inputs)``)
    # reads some entries on the host (sizes it turns into ints) and moves the others itself
    fields = [item for name, item in value.fields or () if not name.startswith("[")]
    return fields or [value]


def _entries_apart(value: Value, any_rank: bool = False) -> Optional[HostBesideAccelerator]:
    """Where a list holds a host tensor with a dimension beside tensors that may be on an
    accelerator, at once; ``any_rank`` for the concatenating functions, which a 0-dim one fails
    as well."""
    if value.kind != Kind.CONTAINER or not isinstance(value.info, Homogeneous):
        return None
    apart = value.info.apart
    if apart is None or apart.position is not None:
        return None
    return apart if any_rank or apart.host.scalar is False else None


#: factories whose positional arguments are not sizes: the 0 of `randint(0, n, (k,))` or
#: `arange(0, n)` is where values start
_VALUE_RANGE_FACTORIES = frozenset(
    f"torch.{name}" for name in ("randint", "arange", "range", "linspace", "logspace", "tensor", "as_tensor")
)


def _empty_placeholder(call: cst.Call, qualname: str) -> bool:
    """``torch.empty([0])``, ``torch.zeros(0)``, ``torch.LongTensor([])``: a zero-element
    placeholder for an unused argument."""
    if qualname in _VALUE_RANGE_FACTORIES:
        return False
    positional = [arg for arg in call.args if arg.keyword is None]
    for arg in positional[:1] if qualname == "torch.full" else positional:  # full(size, fill_value)
        value = arg.value
        if qualname in api.LEGACY_TYPED_CONSTRUCTORS and isinstance(value, (cst.List, cst.Tuple)):
            # `torch.LongTensor([0])` holds the data 0: only an empty list makes an empty tensor
            if not value.elements:
                return True
            continue
        elements = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        if any(isinstance(e, cst.Integer) and e.evaluated_value == 0 for e in elements):
            return True
    return False


class _SizedParameters(cst.CSTVisitor):
    """The first of ``names`` whose shape an expression reads: ``x.size(1)``, ``x.shape[0]``."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names) - {"self", "cls"}
        self.found: Optional[str] = None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if (
            self.found is None
            and node.attr.value in ("size", "shape")
            and isinstance(node.value, cst.Name)
            and node.value.value in self.names
        ):
            self.found = node.value.value


class _ArgumentsOfModuleCalls(cst.CSTVisitor):
    """Plain names passed to a submodule call (``self.proj(x)`` -> ``x``)."""

    def __init__(self, module_calls: set[int]) -> None:
        self.module_calls = module_calls
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self.module_calls:
            for arg in node.args:
                if isinstance(arg.value, cst.Name):
                    self.names.add(arg.value.value)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _of_records(call: cst.Call) -> bool:
    """``torch.tensor([[vocab[a], vocab[b]] for a, b in pairs])``: a factory given a
    comprehension (the analysis takes it for data where it runs over what the function was
    handed)."""
    return bool(call.args) and isinstance(call.args[0].value, (cst.ListComp, cst.GeneratorExp))
