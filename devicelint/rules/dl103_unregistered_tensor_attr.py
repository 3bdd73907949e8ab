from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.names import dotted_name
from devicelint.analysis.summaries import MOVED_AT_ONCE
from devicelint.analysis.values import Homogeneous, Kind, Role, Value, homogeneous_element
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


#: what follows ``self.x`` when it is assigned, not read
_ASSIGNED = re.compile(r"\s*(=(?!=)|[-+*/@%&|^]=)")
#: the same for an item of a container attribute, moved as it is taken (``self.anchors[i].to(x.device)``)
_ITEM_MOVED_AT_ONCE = re.compile(r"\[[^\[\]]*\](\.\w+\([^()]*\))*\.(to|cuda|type_as)\(")


#: ``[i, j]`` right after the attribute: plain indices, no slice, ellipsis, None or nesting
_ELEMENT_READ = re.compile(r"\[((?:(?!\.\.\.|\bNone\b)[^\[\]:()])+)\]")
#: factories whose positional arguments are the sizes, one per dimension
_SIZED_FACTORIES = frozenset({"torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty"})


def _placeholder_list(value: Value) -> bool:
    """``[torch.zeros(1)] * n``: a list whose items are all host tensors."""
    if value.kind != Kind.CONTAINER:
        return False
    element = homogeneous_element(value)
    return element is not None and element.kind == Kind.TENSOR and element.device is not None and element.device.is_cpu


def _rank_of_factory(value: Value, factory_calls: dict) -> Optional[int]:  # type: ignore[type-arg]
    """The number of dimensions of a tensor made by ``torch.randn(a, b)`` and the like, when each
    size is given as its own positional argument; else None. ``factory_calls`` is the
    analysis's record of the torch factories it evaluated (their qualified names)."""
    node = value.origin.node if value.origin is not None else None
    made = factory_calls.get(id(node)) if isinstance(node, cst.Call) else None
    if made is None or made[0] not in _SIZED_FACTORIES:
        return None
    sizes = [arg for arg in node.args if arg.keyword is None]
    if not sizes or any(arg.star or isinstance(arg.value, (cst.Tuple, cst.List)) for arg in sizes):
        return None
    return len(sizes)


class UnregisteredTensorAttr(Rule):
    """
    ## What it does
    In an `nn.Module` subclass's `__init__` (or a method `__init__` calls, or one that code
    outside the class calls on an object it built before moving that object:
    `detector.load_anchors(arr)`, then `detector.to(device)`, unless that call hands the
    method a device), flags
    `self.x = <tensor built by torch>` (a factory, `torch.tensor`, `torch.from_numpy`, and what is
    computed from them), or a tensor put on a device of its own (`device=x.device`, `.cuda()`)
    or on the model's own device as it is then (`device=self.fc.weight.device`: the host),
    that is neither an `nn.Parameter` nor a registered buffer at the end of `__init__`, when
    another method of the class (or of a subclass) reads `self.x`. Also flags `self.x = None` in
    `__init__` when another method caches a tensor there (`if self.mask is None: self.mask =
    ...`) without registering it as a buffer or checking its device before reuse, and likewise
    a plain list of placeholder tensors (`self.grid = [torch.zeros(1)] * n`) whose items another
    method replaces by cached tensors (`self.grid[i] = make_grid(...).to(x.device)`), unless an
    `_apply`/`to`/`cuda` override in the file moves it (yolov5's `Model._apply`). A tensor set
    as `self.x` and then passed to `register_buffer("x", ...)` under the same name is reported
    too: PyTorch refuses a buffer name the module already has (`KeyError: attribute 'x' already
    exists`; old versions left the plain attribute in place), verified on torch 2.13.
    Where one assignment of `self.x` is flagged, the other `self.x = <tensor>` lines of the
    methods that build the module (`if isinstance(mask, torch.Tensor): self.mask = mask.float()`,
    `else: self.mask = torch.tensor(mask)`) are reported with it: the attribute is plain on
    every path, wherever the tensor came from.
    A tensor the constructor is handed and keeps as it came in (`self.feature_set =
    feature_set`, maybe after checks) is flagged where the file builds the module with a CPU
    tensor there (`AppendFeatures(torch.rand(5, 2))`: a factory without `device=`,
    `torch.tensor([...])`, ...) and then moves the object (`.to(device)`, `.cuda()`, also by
    moving a container module built from it: `nn.Sequential(Normalize(m, s), net).to(device)`)
    or builds it as a submodule of a model of the file (which moves with it); so is one that
    `__init__` re-binds only to a torch conversion of itself (`if isinstance(mean, list): mean =
    torch.tensor(mean)`) where such a construction hands it a list or tuple; the message names the
    construction and the move. A tensor built on a device, an object never moved, and a class
    that registers the tensor, wraps it in `nn.Parameter` or moves it in its own `_apply` are
    left alone; so is a constructor's tensor parameter with no such construction in the file
    (where callers build it is theirs to say).
    A plain dict, list or tuple of tensors created on the host (`self.stats = {"mean":
    torch.tensor([...]), ...}`) that another method reads is flagged too, also where each tensor
    is registered as a buffer as well (pytorch/pytorch#43815): the move replaces the buffer with
    a moved copy, the container keeps the CPU original. So is a plain list filled while the
    module is built (`self.offsets = []`, then `self.offsets.append(t)` of such a tensor, or of
    a buffer read back under its computed name, `getattr(self, f"offset_{k}")` after
    `self.register_buffer(f"offset_{k}", t)`), reported at the `append` (an `nn.ParameterList`
    registers what it is given; a parameter keeps its identity through a move and is not
    counted). Containers whose items are moved as they
    are read (`self.stats["mean"].to(x.device)`), replaced by another method (placeholders, see
    above) or moved by an `_apply` override are left alone.
    `torch.tensor(weights)` of an `__init__` parameter (or of its attribute, `config.weights`)
    counts as a tensor with dimensions where every construction the file makes hands a list
    or tuple there (or an object of a plain class of the file whose `weights` is one), else as
    a possible 0-dim scalar.
    0-dim tensors, attributes no other method reads, attributes that the class moves itself
    where it reads them (`self.table.to(x.device)`, `self.table.type_as(x)`), and a
    `torch.randn(a, b)`-made table read only one element at a time (`self.logs[epoch, step]`,
    as many plain indices as it has sizes: a 0-dim tensor, which mixes with any device) are
    left alone.

    ## Why is this bad?
    `model.to(device)` and `model.cuda()` move parameters and buffers only. The plain tensor
    attribute stays where it was made - the CPU, or the device it was put on - and `forward`
    mixes devices once the model is elsewhere: `RuntimeError: Expected all tensors to be on the
    same device`. A tensor meant to be trained (`requires_grad=True`) is also missing from
    `model.parameters()`, so the optimizer never updates it: make it an `nn.Parameter`.

    ## Example
    ```python
    class Attention(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.mask = torch.tril(torch.ones(size, size))
    ```

    ## Use instead
    ```python
    class Attention(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.register_buffer("mask", torch.tril(torch.ones(size, size)), persistent=False)
    ```
    The fix rewrites the assignment as `register_buffer(..., persistent=False)`. It is safe:
    `persistent=False` keeps `state_dict()` (and so existing checkpoints) unchanged, and the
    attribute reads the same; it now moves with the module, which is the point.
    """

    code = "DL103"
    name = "unregistered-tensor-attr"
    severity = Severity.ERROR
    summary = "A plain tensor attribute of an nn.Module is not moved by `model.to(device)`."
    fix_safety = "safe"
    valid = (
        # a scalar converted and cast where it is made (GraphWriter's `_key_dim`): a 0-dim tensor
        "import torch\nfrom torch import nn\nclass Attention(nn.Module):\n    def __init__(self, key_dim):\n"
        "        super().__init__()\n        self.key_dim = torch.tensor(key_dim, requires_grad=False).float()\n"
        "        self.proj = nn.Linear(key_dim, key_dim)\n    def forward(self, x):\n"
        "        return self.proj(x) / torch.sqrt(self.key_dim)\nmodel = Attention(8).to('cuda')\n",
        # `torch.tensor(weight)` of an `__init__` argument the file passes as one number: 0-dim
        "import torch\nfrom torch import nn\nclass Loss(nn.Module):\n    def __init__(self, weight):\n        super().__init__()\n"
        "        self.weight = torch.tensor(weight)\n    def forward(self, x):\n        return (x * self.weight).mean()\n"
        "crit = Loss(0.5).to('cuda')\n",
        # `torch.tensor(settings.scale)` of a settings object the file builds with one number: 0-dim
        "import torch\nfrom torch import nn\nclass Settings:\n    def __init__(self, scale):\n        self.scale = scale\n"
        "class Scaled(nn.Module):\n    def __init__(self, settings):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n        self.scale = torch.tensor(settings.scale)\n"
        "    def forward(self, x):\n        return self.fc(x) * self.scale\n"
        "model = Scaled(Settings(0.5)).to('cuda')\n",
        # the same step of the build, handed the device the model is going to
        "import torch\nfrom torch import nn\nclass Tagger(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.fc = nn.Linear(n, n)\n    def set_prior(self, counts, device):\n"
        "        self.prior = torch.tensor(counts, dtype=torch.float, device=device).log()\n"
        "    def forward(self, x):\n        return self.fc(x) + self.prior\n"
        "device = torch.device('cuda')\nmodel = Tagger(3)\nmodel.set_prior([5, 3, 2], device)\nmodel.to(device)\n",
        # a step of the build that keeps a host tensor only it reads (a number is what the model keeps)
        "import torch\nfrom torch import nn\nclass Tagger(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.fc = nn.Linear(n, n)\n        self.temperature = 1.0\n    def calibrate(self, logits):\n"
        "        self.calibration = torch.tensor(logits).std(0)\n        self.temperature = float(self.calibration.mean())\n"
        "    def forward(self, x):\n        return self.fc(x) / self.temperature\n"
        "model = Tagger(3)\nmodel.calibrate([[0.5, 1.0, 2.0], [1.5, 0.2, 0.1]])\nmodel.to('cuda')\n",
        # converted in place from a list, but never moved; or re-bound to something else than a conversion
        "import torch\nfrom torch import nn\nclass Rescale(nn.Module):\n    def __init__(self, factors):\n        super().__init__()\n"
        "        if isinstance(factors, list):\n            factors = sum(factors) / len(factors)\n"
        "        self.factors = factors\n    def forward(self, x):\n        return x * self.factors\n"
        "class Shift(nn.Module):\n    def __init__(self, offsets):\n        super().__init__()\n"
        "        if isinstance(offsets, list):\n            offsets = torch.tensor(offsets)\n"
        "        self.offsets = offsets\n    def forward(self, x):\n        return x + self.offsets\n"
        "layer = Rescale([0.5, 2.0]).to(torch.device('cuda'))\nshift = Shift([1.0, 2.0])\n",
        # a tensor handed in, with no flagged assignment of the attribute: where it lives is the caller's
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, mask):\n        super().__init__()\n"
        "        if isinstance(mask, torch.Tensor):\n            self.mask = mask.float().t()\n"
        "    def forward(self, x):\n        return x * self.mask\n",
        # the cache is rebuilt when the input's device changes
        "import torch\nfrom torch import nn\nclass Attn(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n        self.mask = None\n"
        "    def forward(self, x):\n        if self.mask is None or self.mask.device != x.device:\n"
        "            self.mask = torch.ones(4, 4, device=x.device).tril()\n"
        "        return self.proj(x) @ self.mask\n",
        # the same cache, cast to the input's type string, rebuilt when the input's device changes
        "import torch\nfrom torch import nn\nclass RelPos(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.proj = nn.Linear(n, n)\n        self.table = None\n"
        "    def forward(self, x):\n        if self.table is None or self.table.device != x.device:\n"
        "            self.table = torch.ones(x.shape[-1], device=x.device).cumsum(0).type(x.type())\n"
        "        return self.proj(x) + self.table\n",
        # made a Parameter before __init__ ends
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, mask):\n        super().__init__()\n"
        "        self.mask = torch.tensor(mask, dtype=torch.float)\n"
        "        self.mask = nn.Parameter(self.mask, requires_grad=False)\n"
        "    def forward(self, x):\n        return x * self.mask\n",
        # every read moves it where the input is (transformers' VideoMAE): a copy, not a crash
        "import torch\nfrom torch import nn\ndef table(n):\n    return torch.ones(1, n, 4)\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.pos = table(8)\n    def forward(self, x):\n"
        "        return x + self.pos.detach().type_as(x).to(device=x.device, copy=True)\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('mask', torch.ones(3, 3))\n    def forward(self, x):\n        return x * self.mask\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = nn.Parameter(torch.ones(3))\n    def forward(self, x):\n        return x * self.w\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = torch.tensor(0.5)\n    def forward(self, x):\n        return x * self.scale\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.logs = torch.randn(3, 5)\n    def step(self, epoch, i):\n        return self.logs[epoch, i]\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.table = torch.ones(3)\n        self.size = self.table.numel()\n",
        # indexed on the host and the element moved where it is needed (CelebBasis' DDPM after its fix)
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.logvar = torch.full((1000,), 0.0)\n        self.proj = nn.Linear(3, 3)\n"
        "    def loss(self, x, t):\n        return self.proj(x) * self.logvar[t.cpu()].to(x.device)\n",
        # the class's own _apply moves it (yolov5's Detect.stride)
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.stride = torch.ones(3)\n    def _apply(self, fn):\n        self = super()._apply(fn)\n"
        "        self.stride = fn(self.stride)\n        return self\n    def forward(self, x):\n        return x * self.stride\n",
        # a tensor handed to the constructor, but built where the module goes, or never moved
        "import torch\nfrom torch import nn\nclass Append(nn.Module):\n    def __init__(self, feats):\n        super().__init__()\n"
        "        self.feats = feats\n    def forward(self, x):\n        return torch.cat([x, self.feats], -1)\n"
        "device = torch.device('cuda')\na = Append(torch.rand(5, 2, device=device)).to(device)\nb = Append(torch.rand(5, 2))\n",
        # handed a host tensor and moved, but the class registers it (botorch after its fix) or moves it where it reads it
        "import torch\nfrom torch import nn\nclass Append(nn.Module):\n    def __init__(self, feats):\n        super().__init__()\n"
        "        self.register_buffer('feats', feats)\n    def forward(self, x):\n        return torch.cat([x, self.feats], -1)\n"
        "class Mask(nn.Module):\n    def __init__(self, mask):\n        super().__init__()\n        self.mask = mask\n"
        "    def forward(self, x):\n        return x * self.mask.to(x.device)\n"
        "device = torch.device('cuda')\na = Append(torch.rand(5, 2)).to(device)\nm = Mask(torch.ones(2))\nm.cuda()\n",
        # a dict of host tensors whose items are moved where they are read
        "import torch\nfrom torch import nn\nclass Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.stats = {'mean': torch.tensor([0.5, 0.4]), 'std': torch.tensor([0.2, 0.2])}\n"
        "    def forward(self, x):\n        return (x - self.stats['mean'].to(x.device)) / self.stats['std'].to(x.device)\n",
        # placeholders that forward replaces, two at a time (yolov5's Detect grids)
        "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.grid = [torch.empty(0) for _ in range(n)]\n        self.anchor_grid = [torch.empty(0) for _ in range(n)]\n"
        "    def forward(self, xs):\n        for i, x in enumerate(xs):\n"
        "            if self.grid[i].shape != x.shape:\n                self.grid[i], self.anchor_grid[i] = make_grids(x)\n"
        "            xs[i] = x + self.grid[i] * self.anchor_grid[i]\n        return xs\n",
        # a dict of 0-dim scalars mixes with any device
        "import torch\nfrom torch import nn\nclass Scale(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scales = {'a': torch.tensor(0.5), 'b': torch.tensor(2.0)}\n"
        "    def forward(self, x):\n        return x * self.scales['a']\n",
        # a 0-dim tensor handed in mixes with any device
        "import torch\nfrom torch import nn\nclass Scale(nn.Module):\n    def __init__(self, s):\n        super().__init__()\n"
        "        self.s = s\n    def forward(self, x):\n        return x * self.s\nm = Scale(torch.tensor(0.5)).cuda()\n",
    )
    invalid = (
        # a window made by the factory that the constructor takes as a callable's default
        # (torchaudio's Spectrogram before its windows were buffers)
        Example(
            "import torch\nfrom torch import nn\nclass Spectrogram(nn.Module):\n"
            "    def __init__(self, n_fft=400, window_fn=torch.hann_window):\n        super().__init__()\n"
            "        self.n_fft = n_fft\n        self.window = window_fn(n_fft)  # expect: DL103\n"
            "    def forward(self, x):\n        return torch.stft(x, self.n_fft, window=self.window, return_complex=True).abs()\n",
            "import torch\nfrom torch import nn\nclass Spectrogram(nn.Module):\n"
            "    def __init__(self, n_fft=400, window_fn=torch.hann_window):\n        super().__init__()\n"
            "        self.n_fft = n_fft\n        self.register_buffer(\"window\", window_fn(n_fft), persistent=False)  # expect: DL103\n"
            "    def forward(self, x):\n        return torch.stft(x, self.n_fft, window=self.window, return_complex=True).abs()\n",
        ),
        # per-feature loss weights converted from an `__init__` argument that the file passes as
        # a list (neural-lam's forecaster)
        Example(
            "import torch\nfrom torch import nn\nclass Forecaster(nn.Module):\n    def __init__(self, n, feature_weights):\n"
            "        super().__init__()\n        self.net = nn.Linear(n, n)\n"
            "        self.feature_weights = torch.tensor(feature_weights)  # expect: DL103\n"
            "    def training_step(self, x, y):\n        return ((self.net(x) - y) ** 2 * self.feature_weights).mean()\n"
            "model = Forecaster(3, [1.0, 0.5, 2.0]).to('cuda')\n",
            "import torch\nfrom torch import nn\nclass Forecaster(nn.Module):\n    def __init__(self, n, feature_weights):\n"
            "        super().__init__()\n        self.net = nn.Linear(n, n)\n"
            "        self.register_buffer(\"feature_weights\", torch.tensor(feature_weights), persistent=False)  # expect: DL103\n"
            "    def training_step(self, x, y):\n        return ((self.net(x) - y) ** 2 * self.feature_weights).mean()\n"
            "model = Forecaster(3, [1.0, 0.5, 2.0]).to('cuda')\n",
        ),
        # converted from an attribute of a settings object that the file builds with a list
        Example(
            "import torch\nfrom torch import nn\nclass Settings:\n    def __init__(self, class_weights, dim=4):\n"
            "        self.class_weights = class_weights\n        self.dim = dim\n"
            "class Classifier(nn.Module):\n    def __init__(self, settings):\n        super().__init__()\n"
            "        self.fc = nn.Linear(settings.dim, 3)\n"
            "        self.class_weights = torch.tensor(settings.class_weights)  # expect: DL103\n"
            "    def forward(self, x):\n        return self.fc(x).log_softmax(-1) * self.class_weights\n"
            "model = Classifier(Settings([1.0, 2.0, 0.5])).to('cuda')\n"
        ),
        # set by a method that the code building the model calls before moving it: a step of the build
        Example(
            "import torch\nfrom torch import nn\nclass Tagger(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
            "        self.fc = nn.Linear(n, n)\n    def set_prior(self, counts):\n"
            "        self.prior = torch.tensor(counts, dtype=torch.float, device=self.fc.weight.device).log()  # expect: DL103\n"
            "    def forward(self, x):\n        return self.fc(x) + self.prior\n"
            "model = Tagger(3)\nmodel.set_prior([5, 3, 2])\nmodel.to('cuda')\n"
        ),
        # a host tensor handed to a layer that a container module is built from: the container's move moves it
        Example(
            "import torch\nfrom torch import nn\nclass AddBias(nn.Module):\n    def __init__(self, bias):\n        super().__init__()\n"
            "        self.bias = bias  # expect: DL103\n    def forward(self, x):\n        return x + self.bias\n"
            "net = nn.Sequential(nn.Linear(4, 4), AddBias(torch.zeros(4)))\nnet = net.to(torch.device('cuda'))\n"
        ),
        # a parameter converted in place where it comes as a list, then kept plain
        Example(
            "import torch\nfrom torch import nn\nclass Rescale(nn.Module):\n    def __init__(self, factors):\n        super().__init__()\n"
            "        if not isinstance(factors, torch.Tensor):\n            factors = torch.as_tensor(factors, dtype=torch.float32)\n"
            "        self.factors = factors  # expect: DL103\n    def forward(self, x):\n        return x * self.factors\n"
            "layer = Rescale([0.5, 2.0, 1.0]).cuda()\n"
        ),
        # a host tensor handed to the constructor, kept plain, and the module moved (botorch's AppendFeatures)
        Example(
            "import torch\nfrom torch import nn\nclass Append(nn.Module):\n    def __init__(self, feats: torch.Tensor, bounds=None):\n"
            "        super().__init__()\n        if feats.dim() != 2:\n            raise ValueError('2-dim')\n"
            "        self.feats = feats  # expect: DL103\n        self.bounds = bounds  # expect: DL103\n"
            "    def forward(self, x):\n        return torch.cat([x, self.feats], -1).clamp(self.bounds[0], self.bounds[1])\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "append = Append(torch.rand(5, 2), bounds=torch.tensor([[0.0] * 2, [1.0] * 2])).to(device)\n",
            "import torch\nfrom torch import nn\nclass Append(nn.Module):\n    def __init__(self, feats: torch.Tensor, bounds=None):\n"
            "        super().__init__()\n        if feats.dim() != 2:\n            raise ValueError('2-dim')\n"
            "        self.register_buffer(\"feats\", feats, persistent=False)  # expect: DL103\n"
            "        self.register_buffer(\"bounds\", bounds, persistent=False)  # expect: DL103\n"
            "    def forward(self, x):\n        return torch.cat([x, self.feats], -1).clamp(self.bounds[0], self.bounds[1])\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "append = Append(torch.rand(5, 2), bounds=torch.tensor([[0.0] * 2, [1.0] * 2])).to(device)\n",
        ),
        # built with a host tensor as a submodule of a model: it moves with the model, the attribute does not
        Example(
            "import torch\nfrom torch import nn\nclass Noise(nn.Module):\n    def __init__(self, noise):\n        super().__init__()\n"
            "        self.noise = noise  # expect: DL103\n    def forward(self, x):\n        return x + self.noise\n"
            "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(3, 3)\n"
            "        self.noise = Noise(torch.randn(3))\n    def forward(self, x):\n        return self.noise(self.proj(x))\n"
        ),
        # tensors kept in a plain dict, also registered as buffers (pytorch/pytorch#43815): the
        # buffers are replaced by moved copies, the dict keeps the CPU originals forward reads
        Example(
            "import torch\nfrom torch import nn\nclass Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.stats = {  # expect: DL103\n            'mean': torch.Tensor([0.5, 0.4, 0.3]),\n"
            "            'std': torch.Tensor([0.2, 0.2, 0.2]),\n        }\n"
            "        for name in self.stats:\n            self.register_buffer('stats_' + name, self.stats[name])\n"
            "    def forward(self, x):\n        return (x - self.stats['mean']) / self.stats['std']\n"
        ),
        # a list of per-level host tensors read by forward
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self, sizes):\n        super().__init__()\n"
            "        self.anchors = [torch.rand(n, 2) for n in sizes]  # expect: DL103\n"
            "    def forward(self, xs):\n        return [x * self.anchors[i] for i, x in enumerate(xs)]\n"
        ),
        # both paths set a plain attribute (CustomizedLinear's mask)
        Example(
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, mask):\n        super().__init__()\n"
            "        if isinstance(mask, torch.Tensor):\n            self.mask = mask.float().t()  # expect: DL103\n"
            "        else:\n            self.mask = torch.tensor(mask).t()  # expect: DL103\n"
            "    def forward(self, x):\n        return x * self.mask\n"
        ),
        # a mask cached lazily by forward (darts' TFT): made on the first input's device, kept there
        Example(
            "import torch\nfrom torch import nn\nclass Attn(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.proj = nn.Linear(4, 4)\n        self.mask = None  # expect: DL103\n"
            "    def forward(self, x):\n        if self.mask is None:\n"
            "            self.mask = torch.ones(4, 4, device=x.device).tril()\n"
            "        return self.proj(x) @ self.mask\n"
        ),
        # a table cached lazily, cast to the input's legacy type string (still a tensor where
        # the input is): made on the first input's device and kept there
        Example(
            "import torch\nfrom torch import nn\nclass RelPos(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
            "        self.proj = nn.Linear(n, n)\n        self.table = None  # expect: DL103\n"
            "    def forward(self, x):\n        if self.table is None:\n"
            "            self.table = torch.ones(x.shape[-1], device=x.device).cumsum(0).type(x.type())\n"
            "        return self.proj(x) + self.table\n"
        ),
        # per-level grids cached in a plain list (yolov5's Detect before its `_apply` fix)
        Example(
            "import torch\nfrom torch import nn\ndef make_grid(n):\n    return torch.stack(torch.meshgrid(torch.arange(n), torch.arange(n)), -1)\nclass Head(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
            "        self.conv = nn.Conv2d(4, 4, 1)\n        self.grid = [torch.zeros(1)] * n  # expect: DL103\n"
            "    def forward(self, xs):\n        for i, x in enumerate(xs):\n            if self.grid[i].shape != x.shape:\n"
            "                self.grid[i] = make_grid(x.shape[-1]).to(x.device)\n            xs[i] = self.conv(x) + self.grid[i]\n"
            "        return xs\n"
        ),
        # put on the example input's device by a helper of __init__ (xLSTM): stays there
        Example(
            "import torch\nfrom torch import nn\nclass Cell(nn.Module):\n    def __init__(self, x_example):\n"
            "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n        self.init_states(x_example)\n"
            "    def init_states(self, x_example):\n"
            "        self.c = torch.zeros(1, 4, device=x_example.device)  # expect: DL103\n"
            "    def forward(self, x):\n        return self.proj(x) + self.c\n"
        ),
        # trained weights kept as a plain tensor on the GPU: never moved, never optimized
        Example(
            "import torch\nfrom torch import nn\nclass Search(nn.Module):\n    def __init__(self, k):\n"
            "        super().__init__()\n"
            "        self.alphas = (1e-3 * torch.randn(k, 8).cuda()).requires_grad_(True)  # expect: DL103\n"
            "    def forward(self, x):\n        return x @ self.alphas.softmax(-1)\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.mask = torch.tril(torch.ones(8, 8))  # expect: DL103\n"
            "    def forward(self, x):\n        return x.masked_fill(self.mask == 0, 0.0)\n",
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer(\"mask\", torch.tril(torch.ones(8, 8)), persistent=False)  # expect: DL103\n"
            "    def forward(self, x):\n        return x.masked_fill(self.mask == 0, 0.0)\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: flagged-to-be assignments; the last item names the ``__init__`` parameter that
        #: ``torch.tensor(param)`` converts, where the constructions of the class must show it
        #: is a sequence (one value would make a 0-dim tensor, which mixes with any device)
        self._candidates: list[tuple[object, str, cst.CSTNode, cst.BaseExpression, Value, str, Optional[str]]] = []
        self._texts: dict[int, str] = {}
        #: (class, attribute) -> (class, its `self.x = None` in __init__)
        #: (class, attribute) -> (class, its `self.x = None` - or a list of placeholders,
        #: `[torch.zeros(1)] * n`, then True - in __init__)
        self._starts_empty: dict[tuple[int, str], tuple[object, cst.CSTNode, bool]] = {}
        #: (class, attribute) -> (the method that caches a tensor there, the assignment target)
        self._cached: dict[tuple[int, str], tuple[cst.FunctionDef, cst.BaseExpression]] = {}
        #: (class, attribute) -> a `self.register_buffer("attribute", ...)` call of the class
        self._buffer_calls: dict[tuple[int, str], cst.Call] = {}
        #: (id of the function, the source of a computed name) -> the tensor registered as a buffer under it
        self._computed_buffer_names: dict[tuple[int, str], Value] = {}
        #: `self.x = x` in a module's `__init__`, `x` one of its parameters as it came in:
        #: (class, attribute, the parameter, the assignment, its value, and where `__init__`
        #: converts the parameter in place its conversions), judged at the end against
        #: the constructions the file makes of the class (see _stored_arguments)
        self._stored_parameters: list[tuple[object, str, str, cst.CSTNode, cst.BaseExpression, Optional[tuple[cst.Call, ...]]]] = []
        #: (class, attribute) -> `self.x = {"mean": torch.tensor([...]), ...}` (a dict, list or
        #: tuple of host tensors) in the methods that build the module: (class, the assignment,
        #: what the container is, one of its tensors)
        self._host_containers: dict[tuple[int, str], tuple[object, cst.CSTNode, str, Value]] = {}
        #: `self.x = <tensor>` lines of methods that do not build the module, as `_candidates`
        #: (class, method, attribute, assignment, its value node, value, `self.x`): reported where
        #: code outside the class calls the method on an object it built before moving it
        self._set_up_candidates: list[tuple[object, cst.FunctionDef, str, cst.CSTNode, cst.BaseExpression, Value, str]] = []
        #: their assignments (a loop body is analysed more than once)
        self._set_up_seen: set[int] = set()
        #: assignments already reported (a line is reported once)
        self._reported: set[int] = set()
        #: (class, attribute) -> other `self.x = <tensor of unknown device>` lines of the
        #: methods that build the module, reported with a flagged assignment of the attribute
        self._alternatives: dict[tuple[int, str], list[tuple[cst.CSTNode, cst.BaseExpression]]] = {}

    def on_call(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.method == "append":
            self._maybe_appended_host_tensor(event)
            return
        if event.method != "register_buffer" or not event.args:
            return
        context = self.ctx.current_function
        if context.class_info is None or not context.class_info.is_module:
            return
        if isinstance(event.args[0][1].literal, str):
            self._buffer_calls.setdefault((id(context.class_info), event.args[0][1].literal), event.node)
        elif len(event.args) > 1 and context.node is not None:
            # `self.register_buffer(f"b{i}", t)`: `getattr(self, f"b{i}")` below is `t` (as registered)
            name = self.ctx.source_of(event.args[0][0].value)
            self._computed_buffer_names[(id(context.node), name)] = event.args[1][1]

    def _maybe_appended_host_tensor(self, event) -> None:  # type: ignore[no-untyped-def]
        """``self.params.append(t)`` in a method that builds the module, ``t`` a tensor made on
        the host (also one registered as a buffer, or that buffer read back with
        ``getattr(self, name)``): the list keeps references that ``model.to(device)`` does not
        move - a registered buffer is replaced by a moved copy - as a list written out with its
        tensors (``self.params = [torch.zeros(3), ...]``) does."""
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module or len(event.args) != 1:
            return
        func = event.node.func
        owner = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if owner is None or not owner.startswith("self.") or owner.count(".") != 1:
            return
        if event.receiver is None or event.receiver.kind != Kind.CONTAINER:
            return  # a plain list (an `nn.ParameterList` registers what it is given)
        arg, value = event.args[0]
        if arg.keyword is not None or arg.star:
            return
        node = arg.value
        if (
            isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr" and len(node.args) == 2
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self"
        ):
            value = self._computed_buffer_names.get((id(context.node), self.ctx.source_of(node.args[1].value)), value)
        if value.kind != Kind.TENSOR or value.device is None or not value.device.is_cpu:
            return
        if self.ctx.analyzer.stays_on_host(context.class_info) or not self._builds_the_module(context.class_info, context.node):
            return
        statement = event.node
        self._maybe_host_container(context.class_info, statement, owner[5:], None, Value(Kind.CONTAINER, info=Homogeneous(value)))

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return
        if self.ctx.analyzer.stays_on_host(context.class_info):
            return  # no object of the class ever moves (a CPU unit test's model): nothing is left behind
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute):
            # `self.grid[i] = make_grid(...).to(x.device)`: an item of a list of cached tensors
            if value.kind == Kind.TENSOR and value.device is not None and not self._builds_the_module(context.class_info, context.node):
                self._maybe_cached(context.class_info, context.node, target, value)
            return
        if not isinstance(target, cst.Attribute):
            return  # only `self.x = ...` matters here
        if context.name == "__init__" and value.role not in (Role.PARAMETER, Role.BUFFER):
            self._maybe_stored_argument(context.class_info, context.node, statement, target, value_node)
        empty = isinstance(value_node, cst.Name) and value_node.value == "None"
        placeholders = _placeholder_list(value)
        if not empty and not placeholders and value.kind == Kind.TENSOR and value.device is None:
            self._maybe_alternative(context.class_info, context.node, statement, target, value_node, value)
            return
        if not empty and not placeholders and value.kind != Kind.TENSOR:
            return  # decided before the (costlier) question of which method builds the module
        if not self._builds_the_module(context.class_info, context.node):
            if not placeholders:
                self._maybe_cached(context.class_info, context.node, target, value)
                if not empty:
                    # a step of the build where code outside the class calls it before the move
                    self._maybe_candidate(context, statement, target, value_node, value, set_up=True)
            return
        if empty or placeholders:
            name = dotted_name(target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                self._starts_empty.setdefault((id(context.class_info), name[5:]), (context.class_info, statement, placeholders))
                if placeholders:
                    self._maybe_host_container(context.class_info, statement, name[5:], value_node, value)
        self._maybe_candidate(context, statement, target, value_node, value)

    def _maybe_candidate(  # type: ignore[no-untyped-def]
        self, context, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value, set_up: bool = False
    ) -> None:
        """``self.x = <tensor made on the host, or on a device of its own>`` in a method that
        builds the module, kept until ``finish``; with ``set_up``, in another method, kept
        until ``finish`` knows whether code outside the class calls it on an object it built
        before moving that object (see ModuleConstruction.set_up_by)."""
        if value.kind != Kind.TENSOR or value.role in (Role.PARAMETER, Role.BUFFER) or value.scalar is True:
            return
        if value.device is None or value.origin is None:
            return
        # on the CPU, or put on a device of its own: `device=x_example.device`, `.cuda()`; the
        # model's own device (a submodule's output) is no better: it is where the model was then
        placed_apart = value.device.is_accel or (value.device.is_symbolic and not value.device.argument)
        if not (value.device.is_cpu and value.origin.created) and not placed_apart:
            return
        if self._converted_parameter(value_node):
            return  # nn.Parameter(...).half(): DL102 says what went wrong
        converted: Optional[str] = None
        made = _without_casts(value_node)
        if value.scalar is not False and made is value.origin.node and self._maybe_scalar_data(made):
            # torch.tensor(cfg.WEIGHT): most likely a 0-dim scalar, which mixes with any device;
            # torch.tensor(weights) of an `__init__` parameter: as the class is built (see finish);
            # also cast where it is made (`torch.tensor(key_dim).float()`)
            converted = self._converted_init_parameter(context.node, made) if context.name == "__init__" else None
            if converted is None:
                return
        name = dotted_name(target)
        if set_up:
            # the costlier questions (an own `_apply`, reads elsewhere) wait for `finish`, and
            # only for a method some code calls before moving the object
            if name is not None and name.startswith("self.") and name.count(".") == 1 and id(statement) not in self._set_up_seen:
                self._set_up_seen.add(id(statement))
                self._set_up_candidates.append((context.class_info, context.node, name[5:], statement, value_node, value, name))
            return
        if name is not None and self._moved_by_own_override(context.class_info, name):
            return  # the class's own `_apply`/`to`/`cuda` moves it (yolov5's Detect)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return
        attribute = name[5:]
        if not self._read_elsewhere(context.class_info, attribute, _rank_of_factory(value, self.ctx.analyzer.factory_calls)):
            return
        # reported once `__init__` is done: it may still wrap the tensor in a Parameter
        self._candidates.append((context.class_info, attribute, statement, value_node, value, name, converted))

    def _maybe_host_container(self, class_info, statement: cst.CSTNode, attribute: str, value_node: Optional[cst.BaseExpression], value: Value) -> None:  # type: ignore[no-untyped-def]
        """``self.stats = {"mean": torch.tensor([...]), "std": ...}``: a container of tensors
        created on the host, kept until ``finish`` decides (another method may cache tensors in
        its items instead, which is the placeholder case)."""
        element = homogeneous_element(value)
        if element is None or element.origin is None or not element.origin.created or element.scalar is True:
            return
        if element.role in (Role.PARAMETER, Role.BUFFER):
            return
        if element.scalar is not False and self._maybe_scalar_data(element.origin.node):
            return  # torch.tensor(cfg.WEIGHT): most likely 0-dim scalars, which mix with any device
        if isinstance(value_node, (cst.Dict, cst.DictComp)):
            what = "dict"
        elif isinstance(value_node, cst.Tuple):
            what = "tuple"
        else:
            what = "list"
        self._host_containers.setdefault((id(class_info), attribute), (class_info, statement, what, element))

    def _report_host_containers(self) -> None:
        """A container of host tensors that another method reads: ``model.to(device)`` moves
        parameters and buffers only, so the items stay on the CPU (also where each tensor is
        registered as a buffer too: the buffer is replaced by a moved copy, the container keeps
        the original)."""
        for key, (class_info, statement, what, element) in self._host_containers.items():
            attribute = key[1]
            if id(statement) in self._reported or (key[0], attribute, True) in self._cached:
                continue  # placeholders whose items another method replaces: reported as such
            if any(self._moved_by_own_override(other, attribute) for other in self.ctx.analyzer.file_classes()):
                continue  # a model's `_apply` moves the container (yolov5's `m.grid = list(map(fn, m.grid))`)
            if self._items_replaced(class_info, attribute):
                continue  # placeholders that another method fills (`self.grid[i], self.anchor_grid[i] = ...`)
            if not self._read_elsewhere(class_info, attribute, items=True):
                continue
            assert element.origin is not None
            self._reported.add(id(statement))
            self.ctx.report(
                statement,
                f"`self.{attribute}` is a plain {what} of tensors ({element.origin.how} on the CPU at line "
                f"{self.ctx.line(element.origin.node)}): `model.to(device)` moves parameters and buffers only, so "
                f"its tensors stay on the CPU (a buffer registered from them is replaced by a moved copy; the "
                f"{what} keeps the original) and the methods that read them mix devices; register each tensor as "
                f"a buffer and read it through the module",
                related=((element.origin.node, "created here"),),
            )

    def _items_replaced(self, class_info, attribute: str) -> bool:  # type: ignore[no-untyped-def]
        """Does a method other than ``__init__`` assign an item of ``self.<attribute>``
        (``self.grid[i] = ...``, also as one target of several)?"""
        pattern = re.compile(rf"\bself\.{re.escape(attribute)}\[[^\[\]]*\]\s*(,|=(?!=))")
        return any(
            pattern.search(self._text(method))
            for owner in (class_info, *self.ctx.analyzer.subclasses_of(class_info))
            for method_name, method in owner.methods.items()
            if method_name != "__init__"
        )

    def _maybe_stored_argument(self, class_info, init: cst.FunctionDef, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression) -> None:  # type: ignore[no-untyped-def]
        """``self.feature_set = feature_set`` in ``__init__``: a parameter kept as it came in
        (maybe viewed: ``mask.float()``, ``bounds[0]``). Whether that is a host tensor depends
        on the code that builds the module; kept until ``finish``."""
        name = dotted_name(target)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return
        parameter = self.ctx.analyzer.parameter_read_unchanged(init, value_node)
        conversion: Optional[tuple[cst.Call, ...]] = None
        if parameter is None:
            # `if isinstance(mean, (list, tuple)): mean = torch.tensor(mean)[None]`, then `self.mean = mean`
            converted = self.ctx.analyzer.parameter_converted_in_place(init, value_node)
            if converted is None:
                return
            parameter, conversion = converted
        if all(other is not statement for _, _, _, other, _, _ in self._stored_parameters):  # a loop body runs more than once
            self._stored_parameters.append((class_info, name[5:], parameter, statement, value_node, conversion))

    def _stored_arguments(self) -> None:
        """Report ``self.x = x`` where a construction the file makes of the class hands ``x`` a
        host tensor (``AppendFeatures(torch.rand(5, 2))``) and the object is then moved
        (``.to(device)``, ``.cuda()``) or built as a submodule of a model (which moves with it):
        ``model.to()`` moves parameters and buffers only, so the attribute stays on the CPU."""
        constructions = self.ctx.facts.module_constructions
        if not constructions or not self._stored_parameters:
            return
        for class_info, attribute, parameter, statement, value_node, conversion in self._stored_parameters:
            if id(statement) in self._reported:
                continue
            final = class_info.attributes.get(attribute)
            if final is not None and final.role in (Role.PARAMETER, Role.BUFFER):
                continue  # wrapped in nn.Parameter or registered further down
            if (id(class_info), attribute) in self._buffer_calls or self._moved_by_own_override(class_info, attribute):
                continue
            init = class_info.methods.get("__init__")
            sites = [built for built in constructions.values() if built.init is init]
            found = next((found for found in (self._host_argument_moved(built, parameter, conversion) for built in sites) if found is not None), None)
            if found is None or not self._read_elsewhere(class_info, attribute):
                continue
            built, argument = found
            line = self.ctx.line
            if built.moved_by is not None:
                moved, related = f"moved at line {line(built.moved_by)}", (built.moved_by, "moved here")
            else:
                assert built.submodule_of is not None
                moved, related = f"kept as a submodule of `{built.submodule_of.name}`, which moves with that model", (built.node, "built here")
            if argument.kind == Kind.TENSOR:
                assert argument.origin is not None
                handed = f"a CPU tensor ({argument.origin.how} on the CPU at line {line(argument.origin.node)})"
            else:
                assert conversion is not None
                lines = ", ".join(str(line(call)) for call in conversion)
                handed = f"a list there, which `__init__` turns into a CPU tensor (converted at line{'s' if len(conversion) > 1 else ''} {lines})"
            self._reported.add(id(statement))
            self.ctx.report(
                statement,
                f"`self.{attribute}` keeps the `{parameter}` argument as a plain tensor attribute: `{class_info.name}` is built "
                f"at line {line(built.node)} with {handed} "
                f"and {moved}, but `model.to(device)` moves only parameters and buffers, so `forward` mixes devices; "
                f"register it as a buffer",
                fix=self._buffer_fix(attribute, statement, value_node),
                related=(related, (built.node, f"built with {'a CPU tensor' if argument.kind == Kind.TENSOR else 'a list'} here"))
                if related[0] is not built.node
                else (related,),
            )

    def _host_argument_moved(self, built, parameter: str, conversion: Optional[tuple[cst.Call, ...]] = None) -> Optional[tuple[object, Value]]:  # type: ignore[no-untyped-def]
        """The construction and the host tensor it hands to ``parameter`` - or, where
        ``__init__`` converts the parameter in place (``conversion``), the list or tuple it
        hands, which leaves as a host tensor - where the object is then moved or built as part
        of a model that does not stay on the host; else None."""
        argument = built.bound.get(parameter)
        if argument is not None and conversion is not None and argument.kind == Kind.CONTAINER:
            if built.moved_by is None and (built.submodule_of is None or self.ctx.analyzer.stays_on_host(built.submodule_of)):
                return None
            return built, argument
        if argument is None or argument.kind != Kind.TENSOR or argument.role in (Role.PARAMETER, Role.BUFFER):
            return None
        if argument.device is None or not argument.device.is_cpu or argument.origin is None or argument.scalar is True:
            return None
        if argument.scalar is not False and self._maybe_scalar_data(argument.origin.node):
            return None  # torch.tensor(cfg.WEIGHT): most likely a 0-dim scalar, which mixes with any device
        if built.moved_by is None and (built.submodule_of is None or self.ctx.analyzer.stays_on_host(built.submodule_of)):
            return None
        return built, argument

    def _maybe_alternative(self, class_info, function: cst.FunctionDef, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:  # type: ignore[no-untyped-def]
        """``self.mask = mask.float()`` (a tensor the caller handed in, device unknown) where
        another assignment of the same attribute is flagged (``else: self.mask =
        torch.tensor(mask)``): the attribute is a plain one on every path, and this line needs
        the same fix. Kept until ``finish`` decides; a line that rewrites the attribute's own
        tensor (``self.mask = self.mask.t()``) is part of the flagged one's story."""
        if value.role in (Role.PARAMETER, Role.BUFFER) or value.scalar is True:
            return
        name = dotted_name(target)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return
        if re.search(rf"\b{re.escape(name)}\b", self.ctx.module.code_for_node(value_node)):
            return
        if not self._builds_the_module(class_info, function):
            return
        seen = self._alternatives.setdefault((id(class_info), name[5:]), [])
        if all(other is not statement for other, _ in seen):  # a loop body is analysed more than once
            seen.append((statement, value_node))

    def _text(self, node: cst.CSTNode) -> str:
        """The source of a class or method, generated once per file (a method's body comes
        from the analysis, which has it already)."""
        text = self._texts.get(id(node))
        if text is None:
            if isinstance(node, cst.FunctionDef):
                text = self.ctx.analyzer.body_text(node)
            else:
                text = self.ctx.module.code_for_node(node)
            self._texts[id(node)] = text
        return text

    def _builds_the_module(self, class_info, function: cst.FunctionDef) -> bool:  # type: ignore[no-untyped-def]
        """``__init__``, or a method ``__init__`` calls (``self.init_states(x)``)."""
        name = function.name.value
        if name == "__init__":
            return True
        init = class_info.methods.get("__init__")
        return init is not None and re.search(rf"\bself\.{re.escape(name)}\s*\(", self._text(init)) is not None

    def _maybe_cached(self, class_info, function: cst.FunctionDef, target: cst.BaseExpression, value: Value) -> None:  # type: ignore[no-untyped-def]
        """``self.mask = make_mask(x.device)`` in ``forward``: remember the first tensor a
        method caches in an attribute."""
        attribute = target.value if isinstance(target, cst.Subscript) else target
        name = dotted_name(attribute) if isinstance(attribute, cst.Attribute) else None
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return
        if value.kind != Kind.TENSOR or value.role in (Role.PARAMETER, Role.BUFFER) or value.device is None:
            return
        if value.origin is None or not (value.origin.moved or self.ctx.analyzer.factory_name(value.origin.node) is not None):
            return  # activations kept between calls (a streaming conv's previous frames): state, not a table
        key = (id(class_info), name[5:], isinstance(target, cst.Subscript))
        self._cached.setdefault(key, (function, target))

    def finish(self) -> None:
        self._stored_arguments()
        for class_info, attribute, statement, value_node, value, name, converted in self._candidates:
            final = class_info.attributes.get(attribute)
            if final is not None and final.role in (Role.PARAMETER, Role.BUFFER):
                continue  # `self.mask = nn.Parameter(self.mask, requires_grad=False)` further down
            if converted is not None and not self._built_with_sequences(class_info, converted):
                continue
            self._report(attribute, statement, value_node, value, name, self._buffer_calls.get((id(class_info), attribute)))
            for other, other_value in self._alternatives.pop((id(class_info), attribute), ()):
                fix = self._buffer_fix(attribute, other, other_value)
                self.ctx.report(
                    other,
                    f"`{name}` is set here too, as a plain tensor attribute (see line {self.ctx.line(statement)}): "
                    f"`model.to(device)` will not move it on this path either; register it as a buffer",
                    fix=fix,
                    related=((statement, "the other assignment"),),
                )
        self._report_set_up_attributes()
        self._report_host_containers()
        for key, (class_info, statement, placeholders) in self._starts_empty.items():
            # None is replaced by a cached tensor; a list of placeholders has its items replaced
            cached = self._cached.get((*key, placeholders))
            attribute = key[1]
            # a registered buffer's cache is stored as the buffer (the analysis says so): not here
            if cached is None or self._device_checked(class_info, attribute):
                continue
            if not self._read_elsewhere(class_info, attribute):
                continue
            method, target = cached
            if placeholders:
                if any(self._moved_by_own_override(other, attribute) for other in self.ctx.analyzer.file_classes()):
                    continue  # a model's `_apply` moves the list (yolov5's `m.grid = list(map(fn, m.grid))`)
                self.ctx.report(
                    statement,
                    f"`self.{attribute}` is a plain list of placeholder tensors and `{method.name.value}()` caches "
                    f"tensors in its items (line {self.ctx.line(target)}): `model.to(device)` will not move them, so "
                    f"calls after a move mix devices; move the list in an `_apply` override, or rebuild an item when "
                    f"its device differs from the input's",
                    related=((target, "cached here"),),
                )
                continue
            self.ctx.report(
                statement,
                f"`self.{attribute}` starts as None and `{method.name.value}()` caches a tensor in it (line "
                f"{self.ctx.line(target)}): a plain attribute, so `model.to(device)` will not move the cached "
                f"tensor and later calls mix devices; register it as a non-persistent buffer, or rebuild it "
                f"when `x.device` changes",
                related=((target, "cached here"),),
            )

    def _report_set_up_attributes(self) -> None:
        """``self.anchors = torch.tensor(arr, device=self._device())`` in a method that code
        outside the class calls on an object it built before moving it
        (``detector.load_anchors(arr)``, then ``detector.to(device)``): a step of the build, so
        the tensor is made where the object is then (the host) and, a plain attribute, stays
        there when the object moves."""
        if not self._set_up_candidates:
            return
        set_up: dict[int, tuple[cst.Call, cst.Call]] = {}
        for built in self.ctx.facts.module_constructions.values():
            if built.moved_by is not None:
                for call, method, bound in built.set_up_by:
                    if bound is None or any(handed.kind == Kind.DEVICE for handed in bound.values()):
                        continue  # handed the device to build on (`load_anchors(arr, device)`), or unknown
                    set_up.setdefault(id(method), (call, built.moved_by))
        for class_info, method, attribute, statement, value_node, value, name in self._set_up_candidates:
            found = set_up.get(id(method))
            if found is None or id(statement) in self._reported:
                continue
            final = class_info.attributes.get(attribute)  # type: ignore[attr-defined]
            if final is not None and final.role in (Role.PARAMETER, Role.BUFFER) or (id(class_info), attribute) in self._buffer_calls:
                continue
            if self._moved_by_own_override(class_info, name):
                continue  # the class's own `_apply`/`to`/`cuda` moves it
            if not self._read_elsewhere(class_info, attribute, _rank_of_factory(value, self.ctx.analyzer.factory_calls), besides=method):
                continue
            call, move = found
            assert value.origin is not None and value.device is not None
            made = f"{value.origin.how} on the CPU" if value.device.is_cpu else value.origin.how
            # a device the method reads from the module itself is where the module is then
            then = "it is made where the module is then, the host, and " if value.device.is_symbolic else ""
            self._reported.add(id(statement))
            self.ctx.report(
                statement,
                f"`{name}` is a plain tensor attribute ({made} at line {self.ctx.line(value.origin.node)}), "
                f"set by `{method.name.value}()`, which line {self.ctx.line(call)} calls before the module is moved at line "
                f"{self.ctx.line(move)}: {then}the move does not take a plain attribute along, so later calls mix devices; "
                f"register it as a buffer",
                fix=self._buffer_fix(attribute, statement, value_node),
                related=((call, "called here, before the move"), (move, "moved here")),
            )

    def _device_checked(self, class_info, attribute: str) -> bool:  # type: ignore[no-untyped-def]
        """Does the class check the cache's device before reusing it (``self.mask.device``,
        ``self.grid[i].device``)?"""
        return re.search(rf"\bself\.{re.escape(attribute)}(\[[^\]]*\])?\.device\b", self._text(class_info.node)) is not None

    def _buffer_fix(self, attribute: str, statement: cst.CSTNode, value_node: cst.BaseExpression) -> Optional[FixSpec]:
        """``self.x = expr`` -> ``self.register_buffer("x", expr, persistent=False)``; None for
        another kind of statement (an augmented or multiple assignment)."""
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
            return None
        expression = self.ctx.module.code_for_node(value_node)
        return FixSpec(
            "Register it as a non-persistent buffer",
            (NodeEdit(statement, "replace", f'self.register_buffer("{attribute}", {expression}, persistent=False)'),),
        )

    def _report(
        self, attribute: str, statement: cst.CSTNode, value_node: cst.BaseExpression, value: Value, name: str, refused: Optional[cst.Call] = None
    ) -> None:
        assert value.origin is not None
        fix = self._buffer_fix(attribute, statement, value_node)
        assert value.device is not None
        wants_gradient = "requires_grad=True" in self.ctx.module.code_for_node(value_node)
        if wants_gradient:
            fix = None  # a trained tensor: it should be an nn.Parameter, not a buffer
            advice = "make it an `nn.Parameter` (then the optimizer sees it too)"
        else:
            advice = "register it as a buffer"
        if value.device.is_cpu:
            where = f"({value.origin.how} on the CPU at line {self.ctx.line(value.origin.node)})"
        else:
            where = f"(placed on {value.device.describe()} at line {self.ctx.line(value.origin.node)})"
        if refused is not None:
            # the analysis registered nothing there: the name was already a plain attribute
            self.ctx.report(
                statement,
                f"`{name}` is set as a plain tensor attribute {where} before `register_buffer(\"{attribute}\", ...)` "
                f"at line {self.ctx.line(refused)}, which cannot register a name the module already has: PyTorch "
                f"raises `KeyError: attribute '{attribute}' already exists` (older versions left it a plain attribute "
                f"that `model.to(device)` does not move); pass the tensor to `register_buffer` without assigning `{name}` first",
                fix=fix,
                related=((refused, "registered here"),),
            )
            return
        self.ctx.report(
            statement,
            f"`{name}` is a plain tensor attribute {where}: `model.to(device)` will not move it with the "
            f"model and `forward` will mix devices; {advice}",
            fix=fix,
        )

    def _maybe_scalar_data(self, node: cst.CSTNode) -> bool:
        """``torch.tensor(x)`` / ``torch.as_tensor(x)`` of one value that is not a list or tuple literal."""
        if self.ctx.analyzer.factory_name(node) not in ("torch.tensor", "torch.as_tensor") or not isinstance(node, cst.Call):
            return False
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        return len(positional) == 1 and not isinstance(positional[0].value, (cst.List, cst.Tuple, cst.ListComp))

    def _converted_init_parameter(self, init: cst.FunctionDef, node: cst.BaseExpression) -> Optional[str]:
        """``torch.tensor(feature_weights)`` where ``feature_weights`` is a parameter of the
        ``__init__`` being analysed: its name; ``torch.tensor(config.norm_mean)``, an attribute
        of such a parameter: ``"config.norm_mean"`` (None for anything else)."""
        assert isinstance(node, cst.Call)
        data = [arg for arg in node.args if arg.keyword is None and not arg.star][0].value
        attribute = None
        if isinstance(data, cst.Attribute) and isinstance(data.value, cst.Name):
            data, attribute = data.value, data.attr.value
        if not isinstance(data, cst.Name):
            return None
        params = init.params
        if not any(param.name.value == data.value for param in [*params.posonly_params, *params.params, *params.kwonly_params]):
            return None
        return data.value if attribute is None else f"{data.value}.{attribute}"

    def _built_with_sequences(self, class_info, converted: str) -> bool:  # type: ignore[no-untyped-def]
        """Does every construction of the class the file makes hand the converted parameter a
        list or tuple (``ForecasterModule(4, [1.0, 0.5, 2.0])``) - or, for ``config.norm_mean``,
        an object of a plain class of the file whose ``norm_mean`` is one (``config =
        Config(norm_mean=[0.5, 1.0])``) - and is there at least one?"""
        parameter, _, attribute = converted.partition(".")
        init = class_info.methods.get("__init__")
        bound = [built.bound.get(parameter) for built in self.ctx.facts.module_constructions.values() if built.init is init]
        if attribute:
            bound = [self._attribute_of_object(value, attribute) for value in bound]
        return bool(bound) and all(value is not None and value.kind == Kind.CONTAINER for value in bound)

    def _attribute_of_object(self, value: Optional[Value], attribute: str) -> Optional[Value]:
        """What an object of a plain class of the file holds as ``attribute`` (what the class's
        own methods see as ``self.<attribute>``); None where that is not known."""
        if value is None or value.kind != Kind.UNKNOWN or not isinstance(value.info, ClassInfo) or value.info.is_module:
            return None
        return self.ctx.analyzer.object_attribute(value.info, attribute)

    def _moved_by_own_override(self, class_info, attribute: str) -> bool:  # type: ignore[no-untyped-def]
        """Does the class, or a base of it in this file, override ``_apply``, ``to`` or ``cuda``
        and handle ``self.<attribute>`` there? (An override that forgets it is the bug.)"""
        pattern = re.compile(rf"\.{re.escape(attribute.rsplit('.', 1)[-1])}\b")  # `self.stride`, `m.stride`
        for method in ("_apply", "to", "cuda"):
            override = class_info.methods.get(method)
            if override is not None and pattern.search(self._text(override)):
                return True
        return any(self._moved_by_own_override(base, attribute) for base in class_info.bases)

    def _converted_parameter(self, node: cst.BaseExpression) -> bool:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call)):
            return False
        return self.ctx.analyzer.qualname_of(node.func.value.func, {}) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")

    def _read_elsewhere(  # type: ignore[no-untyped-def]
        self, class_info, attribute: str, rank: Optional[int] = None, items: bool = False, besides: Optional[cst.FunctionDef] = None
    ) -> bool:
        """Does another method of the class, or of a subclass in this file, read
        ``self.<attribute>`` other than to move it at once (``self.table.to(x.device)``,
        ``self.table.detach().type_as(x)``) or, for a tensor of known ``rank``, to take one
        element (``self.logs[epoch, step]``: a 0-dim tensor, which mixes with any device)?"""
        pattern = re.compile(rf"\bself\.{re.escape(attribute)}\b")
        methods = [
            (method_name, method)
            for owner in (class_info, *self.ctx.analyzer.subclasses_of(class_info))
            for method_name, method in owner.methods.items()
        ]
        unmoved = False
        for method_name, method in methods:
            if method_name == "__init__" or method is besides:
                continue  # `besides`: the method that sets it, reading what it just made
            text = self._text(method)
            for match in pattern.finditer(text):
                rest = text[match.end():]
                if _ASSIGNED.match(rest):
                    continue
                if MOVED_AT_ONCE.match(rest) or (items and _ITEM_MOVED_AT_ONCE.match(rest)):
                    # the class places the attribute itself where it needs it (diffusers' RoPE
                    # tables: `self.pos_freqs.to(device)`); its other reads are its own business
                    return False
                element = _ELEMENT_READ.match(rest)
                if rank is not None and element is not None and len(element.group(1).split(",")) == rank:
                    continue
                unmoved = True
        return unmoved


#: tensor methods that change the dtype (or the autograd state) and keep the shape
_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "detach", "clone", "requires_grad_"})


def _without_casts(node: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.tensor(d).float()`` -> ``torch.tensor(d)``: the made value under its casts."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CASTS and not node.args:
        node = node.func.value
    return node
