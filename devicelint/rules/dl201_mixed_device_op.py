from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import helpers, walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.names import parameter_names
from devicelint.analysis.values import CPU, MODEL_DEVICE, Homogeneous, Kind, Role, Value, conflicting, conflicting_on_an_arm
from devicelint.findings import Severity
from devicelint.rules._cuda_code import ASKS_WHERE_IT_RUNS, device_spelling
from devicelint.rules._host_only_arguments import HostOnlyArguments
from devicelint.rules._inputs_moved_beside import unmoved_beside_moved
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule


class MixedDeviceOp(Rule):
    """
    ## What it does
    Flags an operation whose tensor operands are known to live on different devices: binary
    operators, torch functions (`torch.cat`, `torch.matmul`, `torch.where`, `F.linear`,
    `torch.stft` with its window, ...), the tensor lists of a `torch._foreach_*` call (a list of
    host copies restored into GPU parameters), tensor methods (`x.add(y)`, `x.mm(y)`), and calls of a module whose parameters are on
    another device than its argument - also a model built by a class the file imports
    (`model = PIXOR()`, `models.__dict__[arch]()`), used as a module (`model.eval()`) and never
    moved, which is on the CPU. The message says where each side got its device. An input
    handed to a module class of the file is reported where its `forward` meets the model's
    tensors with it (`cross_entropy(logits, labels.view(-1))`), naming the call - every such
    operation, as the branches of a head's problem types each fail - or at the call when
    `forward` shows no such operation (or only ones where it may be 0-dim: `labels.squeeze()`).
    A `forward` that puts tensors where its input is (`p.to(device=x.device)`, `w.to(x)`,
    `torch.zeros(n, device=x.device)`) was written for inputs on any device: what it so placed
    follows the input, not the model, and such a call is reported only where the input meets
    the model's own tensors.
    A module of the file left on the CPU and called through another method of its own that
    computes with its weights (`crf.decode(emissions.to(device), mask)`) is held to its inputs
    the same way; methods that move their input themselves or never read the module's
    parameters, buffers or submodules are left alone, and so are the methods of a moved module
    (the analysis runs them on each call's values, where a host input meets the weights).
    Where such a method writes an accelerator input in place into the module's own tensors (a
    metric's `update`: `self.total += value.sum()`, `self.total.add_(value.sum())`), the write is
    reported too, naming the call: a host tensor cannot take a GPU value of any rank, so the
    exception comes from there.

    A model the file rebuilds on the CPU in place of one it had moved (`model = Net(args)`
    after `model = Net(args).to(args.device)`, to reload the best weights for the test set),
    never moved since, and then called on inputs on the accelerator is reported where it is
    rebuilt - that is where the move it forgot goes, as it went on the model it replaces - once
    however many calls meet it, naming the first call and noting it as a related location. A
    model never moved anywhere is reported at the call, where its inputs meet it (the move can
    go at either place; the inputs' device is known there). A model moved to the host to take
    its state dict (`torch.save(model.cpu().state_dict(), path)`: a module's `cpu()` works in
    place, it makes no copy) and then fed tensors on the accelerator again is reported at that
    move, once, naming the first call that meets its host weights.

    An argument PyTorch reads on the host whatever the other tensors' device (the lengths of
    `pack_padded_sequence`, the indices of `tensor_split`; see torch_api.HOST_ONLY_ARGUMENTS)
    is flagged when it is given a tensor that may be on the accelerator: moved or created
    there, a model's output, or - as for numpy reads - a tensor input of a module's
    `forward`. Where a module class of the file hands a parameter of its `forward` there as
    it came in (also through a submodule's `forward`, or a local bound once to it:
    `masked = lengths[mask]`), a call of the module that hands it such a tensor is reported at
    that argument, naming the call.

    A module's method (or a function of the file it alone calls, handing it the model's
    tensors) that puts a tensor on the accelerator itself, whatever device the model is on
    (`.cuda()`, also in a helper it calls, or `.to(device)` with a module-level device chosen
    from CUDA), and meets it with the model's tensors is reported at that operation when the
    program builds the model - or a model that holds it, also in an `nn.ModuleList` or
    `nn.Sequential` - on the CPU and calls it there
    without moving it, on inputs not on the accelerator: on a GPU machine the two are apart.
    A method that asks where its input is (`x.is_cuda`, `x.device.type`) is left alone.

    A function analysed once more for one call that hands it a CPU device (`run(model, data,
    torch.device("cpu"))`) does not report the tensors it moved there with `.to(device)`
    meeting the model's, where that call's model is on no device the analysis knows: the
    caller placed both (the call that hands a moved model is compared on its own).

    0-dim CPU tensors (which PyTorch mixes with GPU tensors), Python scalars, `*_like`
    factories and operands of unknown device are never flagged - except a 0-dim CPU tensor an
    in-place operation writes (`total += loss`, `total.add_(loss)`, `counts[i] += hits[i]` with
    `loss`, `hits` on the GPU): PyTorch takes a 0-dim CPU tensor as an input, never as the
    output, and raises there. Batches fed to a moved model
    (or with its output to a loss function, `F.cross_entropy(logits, y)`) are DL203's, criteria
    with a CPU weight DL104's.

    ## Why is this bad?
    On a GPU machine the operation raises `RuntimeError: Expected all tensors to be on the same
    device`. On a CPU-only laptop it may never run the GPU path, so the bug ships.

    ## Example
    ```python
    h = model(x.to(device))
    mask = torch.ones(h.shape[0], 1)
    out = h * mask
    ```

    ## Use instead
    ```python
    h = model(x.to(device))
    mask = torch.ones(h.shape[0], 1, device=h.device)
    out = h * mask
    ```
    """

    code = "DL201"
    name = "mixed-device-op"
    severity = Severity.ERROR
    follows_call_sites = True
    summary = "An operation whose tensor operands are known to live on different devices."
    #: an index op whose index sits on another device than the tensor it indexes: DL207 says so
    yields_to = ("DL207",)
    valid = (
        # a module of the file left on the CPU whose methods either move their input to the
        # weights' device themselves or never touch the weights: its inputs may be anywhere;
        # and one moved to the device, whose methods the analysis runs on each call's values
        "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Parameter(torch.randn(8, 4))\n"
        "    def embed(self, x):\n        return x.to(self.proj.device).view(-1, 8) @ self.proj\n"
        "    def scale(self, x):\n        return x * 2\n"
        "def run(device):\n    head = Head()\n    moved = Head().to(device)\n    x = torch.randn(2, 8)\n"
        "    return head.embed(x.to(device)), head.scale(x.to(device)), moved.embed(x.to(device))\n",
        # ... moved with the data
        "import torch\nfrom torch import nn\nclass Metric(nn.Module):\n    def add_state(self, name, default):\n"
        "        self.register_buffer(name, default.clone())\n"
        "class Total(Metric):\n    def __init__(self):\n        super().__init__()\n        self.add_state('total', torch.zeros(3))\n"
        "    def forward(self, x):\n        self.total += x.sum(0)\n        return self.total\n"
        "def evaluate(model, batches, device):\n    model.to(device)\n    metric = Total().to(device)\n    for x in batches:\n"
        "        metric(torch.softmax(model(x.to(device)), 1))\n",
        # a module left on the host whose forward puts what it draws from its parameters where
        # its input is: written for inputs on any device, and nothing of its own meets them
        "import torch\nfrom torch import nn\nclass Blend(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.p = nn.Parameter(torch.full((1,), 0.5))\n"
        "    def forward(self, input):\n        keep = torch.bernoulli(self.p.expand(input.shape[0])).view(-1, 1)\n"
        "        keep = keep.to(device=input.device)\n        return keep * input + (1 - keep) * input.flip(0)\n"
        "device = torch.device('cuda')\nout = Blend()(torch.rand(4, 3, device=device))\n",
        # CPU offloading by hooks: each layer is brought to the device for its own forward
        "import torch\nfrom torch import nn\ndef offload(model, device):\n    def pre(module, args):\n        module.to(device)\n"
        "    def post(module, args, output):\n        module.to('cpu')\n    for module in model.modules():\n"
        "        module.register_forward_pre_hook(pre)\n        module.register_forward_hook(post)\n    return model\n"
        "device = torch.device('cuda')\nmodel = offload(nn.Linear(4, 2), device)\nout = model(torch.rand(8, 4, device=device))\n",
        # the copies brought back to each parameter's device first
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda')\nnet = nn.Linear(4, 4).to(device)\n"
        "saved = [p.detach().cpu().clone() for p in net.parameters()]\n"
        "torch._foreach_copy_([p.data for p in net.parameters()], [s.to(device) for s in saved])\n",
        # the window made where the waveform is
        "import torch\ndevice = torch.device('cuda')\nwave = torch.randn(4, 16000).to(device)\n"
        "window = torch.hann_window(400, device=device)\nspec = torch.stft(wave, 400, window=window, return_complex=True)\n",
        # a trainer that runs one model on the device its caller chose: the CPU branch never
        # moves the model and moves the batches to the CPU, the GPU branch moves both there
        'import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def training_step(self, batch):\n        x, y = batch\n        return F.cross_entropy(self.fc(x), y)\n\n\nclass Trainer:\n    def __init__(self, gpus):\n        self.on_gpu = gpus == 1 and torch.cuda.is_available()\n\n    def fit(self, model, batches):\n        if self.on_gpu:\n            model.cuda(0)\n            self.run(model, batches, torch.device("cuda", 0))\n        else:\n            self.run(model, batches, torch.device("cpu"))\n\n    def run(self, model, batches, device):\n        for x, y in batches:\n            x, y = x.to(device), y.to(device)\n            loss = model.training_step((x, y))\n            loss.backward()\n\n\nTrainer(gpus=1).fit(Net(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))])\n',
        # the lengths brought back to the host for the pack call, or kept there (a list, a
        # batch never moved), or handed to a free function whose callers place them
        "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.randn(5, 2, 8).to(device)\nlengths = torch.tensor([5, 3]).to(device)\n"
        "a = pack_padded_sequence(x, lengths.cpu())\nb = pack_padded_sequence(x, [5, 3])\nc = pack_padded_sequence(x, lengths.tolist())\n"
        "def pack(x, lengths):\n    return pack_padded_sequence(x, lengths, batch_first=True)\n",
        (
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.gru = nn.GRU(8, 8)\n"
            "    def forward(self, x, lengths):\n        return self.gru(nn.utils.rnn.pack_padded_sequence(x, lengths))\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nencoder = Encoder().to(device)\n"
            "for x, lengths in DataLoader(ds, batch_size=4):\n    out = encoder(x.to(device), lengths)\n"
        ),
        # optional class weights kept as a plain attribute, moved wherever they are read
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nclass CELoss(nn.Module):\n"
        "    def __init__(self, class_weight=None):\n        super().__init__()\n        self.class_weight = None\n"
        "        if class_weight is not None:\n            self.class_weight = torch.Tensor(class_weight)\n"
        "    def forward(self, cls_score, label):\n        lsm = F.log_softmax(cls_score, 1)\n"
        "        if self.class_weight is not None:\n            lsm = lsm * self.class_weight.to(lsm.device).unsqueeze(0)\n"
        "        return -(label * lsm).sum(1).mean()\n",
        # the head aligns the labels with its logits
        (
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.score = nn.Linear(4, 3)\n"
            "    def forward(self, x, labels):\n        logits = self.score(x)\n        labels = labels.to(logits.device)\n"
            "        return nn.functional.cross_entropy(logits, labels)\n"
            "head = Head().cuda()\nloss = head(torch.randn(2, 4, device='cuda'), torch.tensor([0, 1]))\n"
        ),
        "import torch\ndevice = torch.device('cuda')\nx = torch.randn(3, 4, device=device)\ny = x * torch.tensor(2.0)\n",
        "import torch\nx = torch.randn(3, 4, device='cuda')\ny = x + torch.zeros_like(x)\n",
        "import torch\nx = torch.randn(3, 4, device='cuda')\nz = x * 2 + 1\n",
        "import torch\ndef f(x):\n    return x + torch.ones(3)\n",
        "import torch\nx = torch.randn(3, device='cuda')\ns = torch.randn(3).sum()\ny = x * s\n",
        "import torch\nfrom detectron2.modeling import build_model\nmodel = build_model(cfg)\nmodel.eval()\n"
        "out = model(torch.randn(1, 3, 64, 64, device='cuda'))\n",
        # the rebuilt model is moved once its weights are loaded
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\ntorch.save(model.state_dict(), 'w.pt')\n"
        "model = nn.Linear(4, 2)\nmodel.load_state_dict(torch.load('w.pt'))\nmodel.to(device)\n"
        "out = model(torch.randn(8, 4, device=device))\n",
        # both operands moved on the same arm, or on every arm
        "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).cuda()\n"
        "for x, y in DataLoader(ds, batch_size=8):\n    if gpu:\n        x = x.cuda()\n        y = y.cuda()\n"
        "    loss = torch.nn.functional.cross_entropy(model(x), y)\n",
        "import torch\nfrom torch.utils.data import DataLoader\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "for x, y in DataLoader(ds, batch_size=8):\n    if gpu:\n        x = x.cuda()\n        y = y.cuda()\n"
        "    elif mps:\n        x = x.to('mps')\n        y = y.to('mps')\n    else:\n        x = x.to(dev)\n        y = y.to(dev)\n"
        "    z = torch.cat([x, y])\n",
        # the module is moved before it is exported
        "import torch\nfrom types import SimpleNamespace\nfrom torch import nn\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "shared = SimpleNamespace(model=SimpleNamespace(unet=nn.Conv2d(4, 4, 3)))\n"
        "def export(filename):\n    x = torch.randn(1, 4, 16, 16).to(device)\n    unet = shared.model.unet.to(device)\n"
        "    torch.onnx.export(unet, (x,), filename)\n    torch.jit.trace(unet, x)\n",
        # the arm that moves only y leaves the loop
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "for x, y in DataLoader(ds, batch_size=8):\n    if gpu:\n        x = x.cuda()\n        y = y.cuda()\n"
        "    elif mps:\n        y = y.to('mps')\n        continue\n    z = torch.cat([x, y])\n",
        # every call of the shared helper hands it a model on the run's device
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def evaluate(model, x, device):\n    return model(x.unsqueeze(0).to(device))\n"
        "def train(x):\n    model = torch.nn.Linear(4, 2).to(device)\n    return evaluate(model, x, device)\n"
        "def validate(x):\n    model = torch.nn.Linear(4, 2)\n    model.load_state_dict(torch.load('w.pt', map_location='cpu'))\n"
        "    model.to(device)\n    return evaluate(model, x, device)\n",
        # both resampled on the host and joined there
        "import torch\nimport torch.nn.functional as F\ndef resample(images, size):\n"
        "    return F.interpolate(images.cpu(), size=size, mode='bicubic')\n"
        "def concatenate(left, right):\n    resized = resample(right, left.shape[-2:])\n"
        "    return torch.cat((left.cpu(), resized), dim=-1)\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "concatenate(torch.rand(1, 3, 8, 8, device=device), torch.rand(1, 3, 4, 4, device=device))\n",
        # a save helper that moves the live model to the host and back to the device
        (
            'import io\nimport torch\nfrom torch import nn\ndef save_checkpoint(model, buffer, device):\n    model.cpu()\n'
            '    torch.save(model.state_dict(), buffer)\n    model.to(device)\ndef train(batches, device):\n'
            '    model = nn.Linear(4, 2).to(device)\n    buffer = io.BytesIO()\n    for x in batches:\n        out = model(x.to(device))\n'
            "        save_checkpoint(model, buffer, device)\n    return out\ntrain([torch.rand(8, 4)], torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n"
        ),
    )
    invalid = (
        # a CRF of the file built on the CPU and never moved, decoded through a method of its
        # own that computes with its weights, on emissions moved to the device (DeepPeptide)
        Example(
            "import torch\nfrom torch import nn\nclass CRF(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
            "        self.transitions = nn.Parameter(torch.randn(n, n))\n"
            "    def decode(self, emissions):\n        return [(self.transitions + e[0]).argmax() for e in emissions]\n"
            "def predict(device):\n    crf = CRF(5)\n    emissions = torch.randn(2, 7, 5)\n"
            "    return crf.decode(emissions.to(device))  # expect: DL201\n"
        ),
        # the same where the method itself meets the weights with its input: reported there
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.proj = nn.Parameter(torch.randn(8, 4))\n"
            "    def embed(self, x):\n        return x.view(-1, 8) @ self.proj  # expect: DL201\n"
            "def run(device):\n    head = Head()\n    return head.embed(torch.randn(2, 8).to(device))\n"
        ),
        # a save helper that takes `model.cpu().state_dict()`: `Module.cpu()` moves the live
        # model in place, so the next step's inputs on the device meet host weights; the move
        # is reported, where the fix belongs
        Example(
            'import io\nimport torch\nfrom torch import nn\ndef save_checkpoint(model, buffer):\n    torch.save(model.cpu().state_dict(), buffer)  # expect: DL201\n'
            'def train(batches, device):\n    model = nn.Linear(4, 2).to(device)\n    buffer = io.BytesIO()\n'
            '    for x in batches:\n        out = model(x.to(device))\n        save_checkpoint(model, buffer)\n'
            "    return out\ntrain([torch.rand(8, 4)], torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n"
        ),
        # a metric whose state its base class registers as buffers (torchmetrics' add_state),
        # built in the loop's function and never moved, updated with GPU predictions
        Example(
            "import torch\nfrom torch import nn\nclass Metric(nn.Module):\n    def add_state(self, name, default):\n"
            "        self.register_buffer(name, default.clone())\n"
            "class Total(Metric):\n    def __init__(self):\n        super().__init__()\n        self.add_state('total', torch.zeros(3))\n"
            "    def forward(self, x):\n        self.total += x.sum(0)\n        return self.total\n"
            "def evaluate(model, batches, device):\n    model.to(device)\n    metric = Total()\n    for x in batches:\n"
            "        metric(torch.softmax(model(x.to(device)), 1))  # expect: DL201\n"
        ),
        # a module left on the host whose draws from its parameter stay there and meet the GPU input
        Example(
            "import torch\nfrom torch import nn\nclass Blend(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.p = nn.Parameter(torch.full((1,), 0.5))\n"
            "    def forward(self, input):\n        keep = torch.bernoulli(self.p.expand(input.shape[0])).view(-1, 1)\n"
            "        return keep * input + (1 - keep) * input.flip(0)  # expect: DL201\n"
            "device = torch.device('cuda')\nout = Blend()(torch.rand(4, 3, device=device))\n"
        ),
        # hooks that only record shapes leave the model where it was: on the host
        Example(
            "import torch\nfrom torch import nn\ndef watch(model, shapes):\n    def record(module, args, output):\n"
            "        shapes.append(output.shape)\n    for module in model.modules():\n"
            "        module.register_forward_hook(record)\n    return model\n"
            "device = torch.device('cuda')\nmodel = watch(nn.Linear(4, 2), [])\nout = model(torch.rand(8, 4, device=device))  # expect: DL201\n"
        ),
        # host copies of a GPU model's parameters restored with a foreach copy (diffusers' EMAModel.restore)
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda')\nnet = nn.Linear(4, 4).to(device)\n"
            "saved = [p.detach().cpu().clone() for p in net.parameters()]\n"
            "torch._foreach_copy_([p.data for p in net.parameters()], [s.data for s in saved])  # expect: DL201\n"
        ),
        # a short-time Fourier transform reads its window beside its input ("stft input and
        # window must be on the same device"), as the function and as the tensor method
        Example(
            "import torch\ndevice = torch.device('cuda')\nwave = torch.randn(4, 16000).to(device)\n"
            "window = torch.hann_window(400)\n"
            "spec = torch.stft(wave, 400, window=window, return_complex=True)  # expect: DL201\n"
            "back = spec.istft(400, window=window)  # expect: DL201\n"
        ),
        # the same trainer, whose GPU branch moves the model but hands the CPU device on
        Example(
            'import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def training_step(self, batch):\n        x, y = batch\n        return F.cross_entropy(self.fc(x), y)  # expect: DL201, DL201\n\n\nclass Trainer:\n    def __init__(self, gpus):\n        self.on_gpu = gpus == 1 and torch.cuda.is_available()\n\n    def fit(self, model, batches):\n        if self.on_gpu:\n            model.cuda(0)\n            self.run(model, batches, torch.device("cpu"))\n        else:\n            self.run(model, batches, torch.device("cpu"))\n\n    def run(self, model, batches, device):\n        for x, y in batches:\n            x, y = x.to(device), y.to(device)\n            loss = model.training_step((x, y))\n            loss.backward()\n\n\nTrainer(gpus=1).fit(Net(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))])\n'
        ),
        # pack_padded_sequence reads its lengths on the host ("'lengths' argument should be a
        # 1D CPU int64 tensor"): moved with the batch, they fail there
        Example(
            "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "rnn = nn.GRU(8, 8).to(device)\nx = torch.randn(5, 2, 8).to(device)\nlengths = torch.tensor([5, 3]).to(device)\n"
            "packed = pack_padded_sequence(x, lengths)  # expect: DL201\nout, h = rnn(packed)\n"
        ),
        # the lengths come into an encoder of the file on the GPU and are handed on, through a
        # local, to the pack call in its `forward` (the chatbot tutorial's evaluation)
        Example(
            "import torch\nfrom torch import nn\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.gru = nn.GRU(8, 8)\n"
            "    def forward(self, x, lengths):\n        kept = lengths[lengths > 0]\n"
            "        packed = nn.utils.rnn.pack_padded_sequence(x, kept, enforce_sorted=False)  # expect: DL201\n"
            "        return self.gru(packed)\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nencoder = Encoder().to(device)\n"
            "def evaluate(x, sentence_lengths):\n    lengths = torch.tensor(sentence_lengths)\n"
            "    return encoder(x.to(device), lengths.to(device))\n"
        ),
        # sorted in `forward` with the inputs it reorders: the model's device, like the inputs
        Example(
            "import torch\nfrom torch import nn\nclass Layer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.rnn = nn.GRU(8, 8, batch_first=True)\n"
            "    def forward(self, x, lengths):\n        sorted_lengths, order = torch.sort(lengths, descending=True)\n"
            "        packed = nn.utils.rnn.pack_padded_sequence(x[order], sorted_lengths, batch_first=True)  # expect: DL201\n"
            "        return self.rnn(packed)\n"
        ),
        Example(
            "import torch\nx = torch.randn(10, 4, device='cuda')\ncuts = torch.tensor([2, 5], device='cuda')\n"
            "parts = torch.tensor_split(x, cuts)  # expect: DL201\n"
        ),
        # a loss keeps optional class weights as a plain attribute and moves them on one path
        # (`.to(cls_score.device)`), but the other multiplies the log-probabilities by them as
        # they are (mmaction2's soft-label cross-entropy)
        Example(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nclass CELoss(nn.Module):\n"
            "    def __init__(self, class_weight=None):\n        super().__init__()\n        self.class_weight = None\n"
            "        if class_weight is not None:\n            self.class_weight = torch.Tensor(class_weight)\n"
            "    def forward(self, cls_score, label):\n        if cls_score.size() == label.size():\n"
            "            lsm = F.log_softmax(cls_score, 1)\n            if self.class_weight is not None:\n"
            "                lsm = lsm * self.class_weight.unsqueeze(0)  # expect: DL201\n"
            "            return -(label * lsm).sum(1).mean()\n"
            "        weight = self.class_weight.to(cls_score.device) if self.class_weight is not None else None\n"
            "        return F.cross_entropy(cls_score, label, weight=weight)\n"
        ),
        # an exporter traces the module on example inputs: a UNet left on the CPU, kept in a
        # namespace, traced on inputs moved to the run's device (the web UI's TensorRT export)
        Example(
            "import torch\nfrom types import SimpleNamespace\nfrom torch import nn\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "shared = SimpleNamespace(model=SimpleNamespace(unet=nn.Conv2d(4, 4, 3)))\n"
            "def export(filename):\n    x = torch.randn(1, 4, 16, 16).to(device)\n"
            "    torch.onnx.export(shared.model.unet, (x,), filename)  # expect: DL201\n"
        ),
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "net = nn.Linear(4, 2)\nexample = torch.randn(1, 4).to(device)\n"
            "traced = torch.jit.trace(net, example)  # expect: DL201\n"
        ),
        # one call of the shared helper hands it a model moved to the run's device, another one
        # rebuilt on the CPU: the helper's own pass of that call mixes them
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "def evaluate(model, x, device):\n    return model(x.unsqueeze(0).to(device))  # expect: DL201\n"
            "def train(x):\n    model = torch.nn.Linear(4, 2).to(device)\n    return evaluate(model, x, device)\n"
            "def validate(x):\n    model = torch.nn.Linear(4, 2)\n    model.load_state_dict(torch.load('w.pt', map_location='cpu'))\n"
            "    return evaluate(model, x, device)\n"
        ),
        # a head of the file handed host labels: the loss in its forward fails, reported there
        # (transformers' GPT-J sequence classification)
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.score = nn.Linear(4, 3)\n"
            "    def forward(self, x, labels):\n        logits = self.score(x)\n"
            "        return nn.functional.cross_entropy(logits, labels.view(-1))  # expect: DL201\n"
            "head = Head().cuda()\nloss = head(torch.randn(2, 4, device='cuda'), torch.tensor([0, 1]))\n"
        ),
        # `target.squeeze()` may be 0-dim, which PyTorch mixes: the call hands the model a host input
        Example(
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.score = nn.Linear(4, 3)\n"
            "    def forward(self, x, target):\n        return nn.functional.mse_loss(self.score(x).sum(1), target.squeeze())\n"
            "head = Head().cuda()\nloss = head(torch.randn(2, 4, device='cuda'), torch.randn(2, 1))  # expect: DL201\n"
        ),
        Example(
            # DataParallel replicates the model over two GPUs: every replica moves `prior` to the
            # first one, while its own `logits` sit on its own GPU
            "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self, gpu_ids):\n"
            "        super().__init__()\n        self.gpu_ids = gpu_ids\n        self.fc = nn.Linear(8, 4)\n"
            "    def forward(self, x):\n        logits = self.fc(x)\n"
            "        prior = torch.softmax(logits, 1).cuda(self.gpu_ids[0])\n        return logits - prior  # expect: DL201\n"
            "GPUS = [0, 1]\nnet = nn.DataParallel(Head(GPUS), device_ids=GPUS).cuda()\n"
        ),
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "h = torch.randn(8, 4, device=device)\nmask = torch.ones(8, 1)\nout = h * mask  # expect: DL201\n"
        ),
        Example("import torch\na = torch.randn(2, 3, device='cuda:0')\nb = torch.randn(2, 3, device='cuda:1')\nc = torch.cat([a, b])  # expect: DL201\n"),
        # an image resampled on the host (its rank unknown): `torch.cat` and `torch.stack` refuse a
        # CPU tensor beside a GPU one whatever its rank
        Example(
            "import torch\nimport torch.nn.functional as F\ndef resample(images, size):\n"
            "    return F.interpolate(images.cpu(), size=size, mode='bicubic')\n"
            "def concatenate(left, right):\n    resized = resample(right, left.shape[-2:])\n"
            "    return torch.cat((left, resized), dim=-1)  # expect: DL201\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "concatenate(torch.rand(1, 3, 8, 8, device=device), torch.rand(1, 3, 4, 4, device=device))\n"
        ),
        Example("import torch\nx = torch.randn(2, 3, device='cuda')\ny = torch.randn(3, 2)\nz = x.mm(y)  # expect: DL201\n"),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\nx = torch.randn(8, 4, device='cuda')\n"
            "out = model(x)  # expect: DL201\n"
        ),
        # the model is rebuilt to reload its weights, and only the first one was moved: reported
        # where it is rebuilt (the move goes there), once for its two calls
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\ntorch.save(model.state_dict(), 'w.pt')\n"
            "model = nn.Linear(4, 2)  # expect: DL201\nmodel.load_state_dict(torch.load('w.pt', map_location=device))\n"
            "x = torch.randn(8, 4, device=device)\nout = model(x)\nagain = model(x)\n"
        ),
        Example(
            "import torch\nfrom pixor import PIXOR\nmodel = PIXOR()\nmodel.load_state_dict(torch.load('w.pt', map_location='cuda'))\n"
            "model.eval()\nx = torch.randn(1, 36, 800, 700, device='cuda')\nout = model(x)  # expect: DL201\n"
        ),
        # each arm of the chain moves a different operand: on a GPU run one of them stays on the CPU
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "for x, y in DataLoader(ds, batch_size=8):\n    if gpu:\n        x = x.cuda()\n    else:\n        y = y.to(dev)\n"
            "    z = torch.cat([x, y])  # expect: DL201\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).cuda()\n"
            "criterion = torch.nn.CrossEntropyLoss()\nfor x, y in DataLoader(ds, batch_size=8):\n"
            "    if args.gpu is not None:\n        x = x.cuda(args.gpu)\n    elif args.mps:\n        x = x.to('mps')\n        y = y.to('mps')\n"
            "    loss = criterion(model(x), y)  # expect: DL201\n"
        ),
    )

    def _built_in_forward(self, module: Value) -> bool:
        """A layer built on the CPU inside a module's method other than `__init__`: DL106 says
        what went wrong (it is re-created at every call and never moved)."""
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return False
        if context.node.name.value == "__init__" or module.device is None or not module.device.is_cpu:
            return False
        return module.origin is not None and module.origin.created

    def _said_by_another_rule(self, host: Value, other: Value) -> bool:
        """One bug, one finding: a batch that reaches a moved model is DL203's (one that meets
        what a free function was handed is no finding: its caller decides); a CPU tensor
        from a device-less factory made in a function is DL202's where it meets, in a function,
        a tensor that can be on the accelerator, and DL103's (or DL102's) when it is an
        attribute made in `__init__`; a tensor `.type(torch.FloatTensor)` cast to the host is
        DL313's."""
        if other.device is None or not other.device.may_be_accelerator or host.device is None or not host.device.is_cpu:
            return False
        if host.origin is not None and host.origin.from_data and other.kind == Kind.MODULE:
            return True
        if host.origin is not None and host.origin.from_data and other.device.argument:
            # not a bug this rule can show: a model or tensor handed to the function may be
            # kept on the host by its caller, with the batches
            return True
        if host.role is Role.LEGACY_TYPE_CAST:
            return True  # `.type(torch.FloatTensor)` moved it to the host: DL313's
        # (a dict batch of a class of the file holds what the factory made: its entries)
        made = self.ctx.analyzer.device_less_factory(replace(host, kind=Kind.TENSOR) if host.kind == Kind.BATCH else host)
        if made is None or made[2] is None:
            return False
        if self.ctx.analyzer.constructs_module(made[2]):
            # an attribute made in a module's __init__: DL103 (or DL102) says what went wrong,
            # unless the class moves it where it reads it elsewhere (`self.w.to(x.device)`):
            # then it knows the attribute stays on the host, and this read forgot to move it
            return not self.ctx.analyzer.attribute_moved_where_read(host)
        if host.origin is not None and host.origin.from_data and made[0] is host.origin.node and made[0].args and isinstance(made[0].args[0].value, (cst.ListComp, cst.GeneratorExp)):
            return False  # records made a tensor one by one (`torch.tensor([... for row in rows])`): data, not DL202's constant
        return self.ctx.current_function.node is not None and made[1] in api.FUNCTION_HOST_FACTORIES

    def _handed_in_by_model_entry(self, arg: cst.Arg, value: Value, module: Value) -> bool:
        """A host tensor a caller handed to one of the model's own methods, which handed it on
        within the model to where this layer, which may be on the accelerator, takes it: DL203
        reports it in that entry method (one bug, one finding)."""
        function = self.ctx.current_function.node
        if function is None or arg.star or module.device is None or not module.device.may_be_accelerator or module.device.argument:
            return False
        return self.ctx.analyzer.model_input_hand_off(function, arg.value, value) is not None

    def _placed_by_the_caller(self, host: Value, other: Value) -> bool:
        """In a pass of one call site: a tensor the function moved to a device it holds in a
        variable (``x.to(device)``: the device its caller chose, the CPU on this call) meeting
        the model's tensors, where the caller's model is on no device the analysis knows. The
        caller placed both, and nothing says it placed them apart (a pass of a call that hands
        a moved model compares the two)."""
        if self.ctx.call_context is None or other.device != MODEL_DEVICE:
            return False
        if host.device is None or not host.device.is_cpu or host.origin is None:
            return False
        move = host.origin.node
        if not isinstance(move, cst.Call) or not isinstance(move.func, cst.Attribute) or move.func.attr.value != "to":
            return False
        target = next((arg.value for arg in move.args if arg.keyword is None or arg.keyword.value == "device"), None)
        return isinstance(target, (cst.Name, cst.Attribute))

    def _conflict_to_report(
        self, first: Value, second: Value, loss: bool = False, joined: bool = False, written: Optional[Value] = None
    ) -> bool:
        return (
            conflicting(first, second, any_rank=joined, written=written)
            # a 0-dim host tensor written in place is no other rule's (they mix 0-dim CPU tensors)
            and (_zero_dim_host_written(written) or not self._said_by_another_rule(first, second))
            and (_zero_dim_host_written(written) or not self._said_by_another_rule(second, first))
            and not self._placed_by_the_caller(first, second)
            and not self._placed_by_the_caller(second, first)
            and not (loss and (_unmoved_target(first, second) or _unmoved_target(second, first)))
        )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: module calls of the file's own classes whose input conflicts with the module
        #: (with the call whose pass met it, in a pass of one call site)
        self._handed_to_forward: list[tuple[CallEvent, cst.Arg, Value, cst.FunctionDef, str, Optional[cst.Call]]] = []
        #: (forward, parameter) -> the operations there where it meets the model's tensors (and what it meets)
        self._parameter_meetings: dict[tuple[cst.FunctionDef, str], dict[cst.CSTNode, tuple[cst.BaseExpression, cst.BaseExpression]]] = {}
        #: the meetings among them that write in place into the module's own tensor (`self.total
        #: += value.sum()`, `self.total.add_(value)`): a host tensor cannot take a GPU value, of
        #: any rank, so these fail whatever the input's rank when the module stayed on the host
        self._parameter_writes: set[int] = set()
        #: calls of a host module's own method handed accelerator tensors, each conflicting
        #: argument with its parameter (see _report_host_state_writes)
        self._handed_to_host_method: list[tuple[CallEvent, Value, cst.FunctionDef, str, Optional[cst.Call]]] = []
        #: the same for calls of a module's own methods (`crf.decode(x, mask)`, see _check_own_method_call)
        self._handed_to_method: list[tuple[CallEvent, cst.Arg, Value, cst.FunctionDef, str, Optional[cst.Call]]] = []
        #: arguments PyTorch reads on the host (`pack_padded_sequence`'s lengths)
        self._host_only = HostOnlyArguments(ctx)
        #: ids of the move calls whose result is asked for its state dict (`model.cpu().state_dict()`)
        self._moves_for_state: set[int] = set()
        #: module calls whose module a move to the host placed there, with accelerator inputs:
        #: decided once the file is done (see _report_at_move_for_state)
        self._after_host_moves: list[tuple[CallEvent, cst.Arg, Value, cst.Call, Optional[cst.Call]]] = []
        #: the same for calls of a module's own methods (`algorithm.update(minibatches)`), reported
        #: only where the move was made for a state dict
        self._after_host_moves_by_method: list[tuple[CallEvent, cst.Arg, Value, cst.Call, Optional[cst.Call]]] = []
        #: calls of a method of a module built on the host and never moved that moves some of
        #: its inputs itself (see _report_moved_into_host_module)
        self._moved_into_host_module: list[tuple[CallEvent, cst.FunctionDef, list[str], Optional[cst.Call]]] = []
        #: operations of a module's methods (own analysis) where a tensor on the model's device
        #: meets one the code put on the accelerator itself (`.cuda()`, a device chosen from
        #: CUDA), with the class whose method it is (see _report_accelerator_meetings)
        self._accelerator_meetings: list[tuple[ClassInfo, cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Value]] = []
        #: the same in a free function, where the tensor on the caller's device is a parameter:
        #: (function, parameter) -> the operations
        self._argument_accelerator_meetings: dict[tuple[cst.FunctionDef, str], list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Value]]] = {}
        #: the same in a free function analysed on the values of its one call, made by a module's
        #: method that hands it the model's tensors
        self._helper_accelerator_meetings: list[tuple[cst.FunctionDef, cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Value]] = []
        #: calls a module's method makes of a free function, handing a parameter a tensor on
        #: the model's device: (class, function, parameter)
        self._model_tensors_handed: list[tuple[ClassInfo, cst.FunctionDef, str]] = []
        #: module classes of the file an object of which is called while built on the host and
        #: never moved, on inputs not on an accelerator: the class -> that call
        self._run_on_host: dict[int, tuple[ClassInfo, cst.Call]] = {}
        #: functions whose text asks where their tensors are (`x.is_cuda`): id -> answer
        self._asks_where: dict[int, bool] = {}

    def on_binary(self, event: BinaryEvent) -> None:
        # `total += x` writes its left side: a 0-dim host total cannot take a GPU x
        written = event.left if isinstance(event.node, cst.AugAssign) else None
        self._note_parameter_meetings(
            event.node, [(event.left_node, event.left), (event.right_node, event.right)],
            written=event.left_node if written is not None else None,
        )
        self._note_accelerator_meetings(event.node, [(event.left_node, event.left), (event.right_node, event.right)], written=written)
        if self._conflict_to_report(event.left, event.right, written=written):
            if _zero_dim_host_written(written):
                self._report_written(event.node, event.left_node, event.left, event.right_node, event.right)
            else:
                self._report(event.node, event.left_node, event.left, event.right_node, event.right)
        else:
            self._check_arms(event.node, [(event.left_node, event.left), (event.right_node, event.right)])

    def on_call(self, event: CallEvent) -> None:
        self._host_only.on_call(event)
        if event.method == "state_dict" and isinstance(event.node.func, cst.Attribute) and _host_move_call(event.node.func.value):
            self._moves_for_state.add(id(event.node.func.value))
        if event.qualname in api.MIXING_FUNCTIONS:
            operands = event.operands()
            self._note_parameter_meetings(event.node, operands)
            if event.qualname in api.CONCATENATING:
                self._note_accelerator_meetings(event.node, _joined_elements(event), joined=True)
            else:
                self._note_accelerator_meetings(event.node, operands)
            self._check_all(event.node, operands, loss=event.qualname in api.FUNCTIONAL_LOSSES, joined=event.qualname in api.CONCATENATING)
        elif event.qualname is not None and event.qualname.startswith(api.FOREACH_PREFIX):
            # the lists' tensors go together: a list of host copies restored into GPU parameters
            self._check_all(event.node, event.list_elements(), joined=True)
        elif event.method in api.BINARY_TENSOR_METHODS and event.receiver is not None and event.receiver.kind == Kind.TENSOR:
            assert isinstance(event.node.func, cst.Attribute)
            operands = [(event.node.func.value, event.receiver), *event.operands()]
            self._note_parameter_meetings(event.node, operands, written=event.node.func.value if event.method.endswith("_") else None)
            self._note_accelerator_meetings(event.node, operands, written=event.receiver if event.method.endswith("_") else None)
            # an in-place method (`total.add_(x)`) writes its receiver
            self._check_all(event.node, operands, written=event.receiver if event.method.endswith("_") else None)
        elif event.callee.kind == Kind.MODULE and event.callee.device is not None and event.callee.role is not Role.PARALLEL_WRAPPER:
            self._note_run_on_host(event)
            self._check_module_call(event)
        elif event.method is not None and event.receiver is not None and event.receiver.kind == Kind.MODULE:
            self._check_own_method_call(event)
        elif event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._note_model_tensors_handed(event, event.callee.info)
        elif event.callee.kind == Kind.CRITERION:
            # a loss on a batch never moved is DL203's; one moved on other arms of a chain is this rule's
            self._note_parameter_meetings(event.node, event.operands())
            self._check_arms(event.node, event.operands())

    def _check_module_call(self, event: CallEvent) -> None:
        module = event.callee
        if self._built_in_forward(module):
            return
        placed_anywhere = self.ctx.analyzer.inputs_placed_by_module(module, event.args)
        forward = self.ctx.analyzer.forward_parameters(module, event.args)
        for position, ((arg, value), anywhere) in enumerate(zip(event.args, placed_anywhere)):
            if anywhere or value.kind not in (Kind.TENSOR, Kind.BATCH) or value.device is None or module.device is None:
                continue
            if not module.device.conflicts_with(value.device):
                if self._check_arms(event.node, [(event.callee_node, module), (arg.value, value)]):
                    return
                continue
            if self._said_by_another_rule(value, module) or self._placed_by_the_caller(value, module):
                continue
            if self._handed_in_by_model_entry(arg, value, module):
                continue
            if unmoved_beside_moved(self.ctx.current_function.node, event, arg, value) is not None:
                continue  # DL203's: the function moves the model's other inputs itself
            if isinstance(module.info, ClassInfo) and self.ctx.analyzer.replaces_own_tensors_on_call(module.info):
                return  # its forward moves its own tensors where it is called (`self.w.data = self.w.data.to(x.device)`)
            parameter = forward[1][position] if forward is not None else None
            if forward is not None and parameter is not None:
                # the file's own `forward` may show where the input meets the model's tensors:
                # decided once the file is analysed (a forward may run after its callers)
                self._handed_to_forward.append((event, arg, value, forward[0], parameter, self.ctx.call_context))
            else:
                self._report_module_input(event, arg, value)
            return

    def _check_own_method_call(self, event: CallEvent) -> None:
        """``crf.decode(emissions.to(device), mask)`` on a module of the file left on the CPU:
        a method of its own that computes with its weights is held to its inputs as ``forward``
        is - reported where the method meets the module's tensors with the input, else at the
        call. A module that was moved needs nothing here: the analysis runs its methods on each
        call's values, so a host input meets its weights inside them."""
        module = event.receiver
        assert module is not None and event.method is not None
        if module.device is None or not module.device.is_cpu or module.role is Role.PARALLEL_WRAPPER or self._built_in_forward(module):
            return
        found = self.ctx.analyzer.own_method_inputs(module, event.method, event.args)
        if found is None:
            return
        method, parameters, placed = found
        if module.origin is not None and module.origin.created and isinstance(module.origin.node, cst.Call):
            moved_inputs = [parameter for parameter in parameters if parameter is not None]
            if moved_inputs:
                # `policy.act(state)`, whose `act` moves `state` to the run's device before its
                # layers take it: decided once the method's own analysis is done
                self._moved_into_host_module.append((event, method, moved_inputs, self.ctx.call_context))
        move = module.origin.node if module.origin is not None else None
        if isinstance(move, cst.Call) and _host_move_call(move):
            # `algorithm.cpu().state_dict()` in a save helper, then `algorithm.update(batches)` on
            # accelerator data (a tensor, or a list of them): the move for the state dict is the
            # mistake, decided once the file is done (see _report_at_move_for_state)
            for (arg, value), placed_itself in zip(event.args, placed):
                held = _accelerator_tensor_held(value)
                if not placed_itself and not arg.star and held is not None:
                    self._after_host_moves_by_method.append((event, arg, held, move, self.ctx.call_context))
                    return
        for (arg, value), parameter, placed_itself in zip(event.args, parameters, placed):
            if placed_itself or arg.star or value.kind not in (Kind.TENSOR, Kind.BATCH) or value.device is None:
                continue
            if not module.device.conflicts_with(value.device):
                continue
            if self._said_by_another_rule(value, module) or self._placed_by_the_caller(value, module):
                continue
            if parameter is not None:
                self._handed_to_method.append((event, arg, value, method, parameter, self.ctx.call_context))
            else:
                self._report_method_input(event, arg, value)
            break
        else:
            return
        for (arg, value), parameter, placed_itself in zip(event.args, parameters, placed):
            # every accelerator input the method writes into the module's host tensors
            if (
                parameter is not None and not placed_itself and not arg.star and value.kind in (Kind.TENSOR, Kind.BATCH)
                and value.device is not None and value.device.may_be_accelerator and module.device.conflicts_with(value.device)
                and not self._said_by_another_rule(value, module) and not self._placed_by_the_caller(value, module)
            ):
                self._handed_to_host_method.append((event, value, method, parameter, self.ctx.call_context))

    def _report_moved_into_host_module(
        self, event: CallEvent, method: cst.FunctionDef, moved_inputs: list[str], called_from: Optional[cst.Call]
    ) -> None:
        """``debug_policy = Policy(...)`` never moved, then ``debug_policy.act(state)`` whose
        ``act`` moves ``state`` to the run's device (``.to(device)``, a device the program chose,
        not one taken from the module) and computes with the module's weights: on a GPU run the
        input reaches host weights. The construction lacks the move: reported there, once."""
        module = event.receiver
        assert module is not None and module.origin is not None
        ended = self.ctx.analyzer.function_states.get(method)
        if not ended:
            return
        for parameter in moved_inputs:
            value = ended.get(parameter)
            if value is None or value.kind not in (Kind.TENSOR, Kind.BATCH) or value.origin is None or not value.origin.moved:
                continue
            if not walk.contains(method, value.origin.node):
                continue  # moved by the caller, not by the method
            device = value.device
            if device is None or device == MODEL_DEVICE or not device.may_be_accelerator or device.argument:
                continue
            if device.kind == "follows" and (device.label.split(".", 1)[0] in ("self", "cls") or device.label.startswith("the ")):
                continue  # a device the module keeps, or the model's own: where the module is, whatever that is
            assert isinstance(event.node.func, cst.Attribute)
            self.ctx.report(
                module.origin.node,
                f"`{self.ctx.source_of(event.node.func.value)}` is built here on the CPU and never moved, but its "
                f"`{event.method}()` (called at line {self.ctx.line(event.node)}) moves `{parameter}` to {device.describe()} "
                f"(line {self.ctx.line(value.origin.node)}) and computes with the module's weights; move the module there too",
                related=((event.node, f"`{event.method}()` is called here"), (value.origin.node, f"`{parameter}` is moved here")),
                called_from=called_from,
            )
            return

    def _report_method_input(self, event: CallEvent, arg: cst.Arg, value: Value, called_from: Optional[cst.Call] = None) -> None:
        assert isinstance(event.node.func, cst.Attribute) and event.receiver is not None
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(event.node.func.value)}` has its parameters {where(event.receiver, self.ctx)}, and its "
            f"`{event.method}()` computes with them, but it is handed `{self.ctx.source_of(arg.value)}`, {where(value, self.ctx)}",
            called_from=called_from,
        )

    def _report_module_input(
        self, event: CallEvent, arg: cst.Arg, value: Value, called_from: Optional[cst.Call] = None, decided: bool = False
    ) -> None:
        if self._report_at_rebuild(event, arg.value, value, called_from):
            return
        move = event.callee.origin.node if event.callee.origin is not None else None
        if (
            not decided and isinstance(move, cst.Call) and _host_move_call(move) and event.callee.device is not None
            and event.callee.device.is_cpu and value.device is not None and value.device.may_be_accelerator
        ):
            # whether the move was made to take a state dict is known once the file is done
            self._after_host_moves.append((event, arg, value, move, called_from or self.ctx.call_context))
            return
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(event.callee_node)}` has its parameters {where(event.callee, self.ctx)}, but its input "
            f"`{self.ctx.source_of(arg.value)}` is {where(value, self.ctx)}",
            called_from=called_from,
        )

    def _report_at_move_for_state(
        self, event: CallEvent, arg: cst.Arg, value: Value, move: cst.Call, called_from: Optional[cst.Call], verb: str = "it is called on"
    ) -> bool:
        """``torch.save(model.cpu().state_dict(), path)``: ``Module.cpu()`` (and ``.to("cpu")``)
        moves the model itself, in place - it makes no host copy of the weights to save - and a
        call that goes on feeding the model tensors on the accelerator fails on its host
        weights. The move is the mistake: reported there, once however many calls meet it, with
        the first call as a related location. Whether it reported."""
        if id(move) not in self._moves_for_state:
            return False
        assert isinstance(move.func, cst.Attribute)
        model = self.ctx.source_of(move.func.value)
        self.ctx.report(
            move,
            f"`{self.ctx.source_of(move)}` moves `{model}` itself to the CPU (a module's `{move.func.attr.value}()` works in place) "
            f"to take its state dict, but the model is used again: at line {self.ctx.line(event.node)} {verb} "
            f"`{self.ctx.source_of(arg.value)}`, {where(value, self.ctx)}; save a host copy instead "
            f"(`{{k: v.cpu() for k, v in {model}.state_dict().items()}}`)",
            related=((event.node, "the model is called here on its host weights"),),
            called_from=called_from,
        )
        return True

    def _note_parameter_meetings(
        self, node: cst.CSTNode, operands: list[tuple[cst.BaseExpression, Value]], written: Optional[cst.BaseExpression] = None
    ) -> None:
        """In a module's ``forward``: an operation where a parameter, as it came in
        (``labels.view(-1)``), meets a tensor on the model's device that no parameter gave
        (``pooled_logits``). A call that hands that parameter a tensor on another device than
        the model's fails here."""
        context = self.ctx.current_function
        function = context.node
        if function is None or context.class_info is None or not context.class_info.is_module or function.name.value == "__init__":
            return
        read = [(operand, self.ctx.analyzer.parameter_read_unchanged(function, operand), value) for operand, value in operands]
        for operand, parameter, _ in read:
            if parameter is None:
                continue
            for other, other_parameter, other_value in read:
                if (
                    other is not operand
                    and other_parameter is None
                    and other_value.device == MODEL_DEVICE
                    and self.ctx.analyzer.placed_where_parameter_is(function, other_value) is None
                ):
                    # every such operation fails (the losses of a head's problem types, one per branch)
                    self._parameter_meetings.setdefault((function, parameter), {}).setdefault(node, (operand, other))
                    if other is written:
                        self._parameter_writes.add(id(node))
                    break

    def _asks_where_it_runs(self, function: cst.FunctionDef) -> bool:
        """The function tests where its tensors are (``x.is_cuda``, ``x.device.type``): its
        accelerator path is taken on purpose, for inputs there."""
        known = self._asks_where.get(id(function))
        if known is None:
            known = self._asks_where[id(function)] = _ASKS_WHERE_IT_RUNS.search(self.ctx.analyzer.body_text(function)) is not None
        return known

    def _note_accelerator_meetings(
        self, node: cst.CSTNode, operands: list[tuple[cst.BaseExpression, Value]], joined: bool = False, written: Optional[Value] = None
    ) -> None:
        """In the own analysis of a module's method: an operation where a tensor on the model's
        device meets one the code put on the accelerator itself, whatever device the model is
        on (``torch.tensor(x).cuda()``, ``.to(device)`` with a module-level device chosen from
        CUDA). Fine while the model is on that GPU; a program that runs the model on the host
        fails there on any GPU machine (see _report_accelerator_meetings). In a free function
        the same with a tensor its caller handed it, for the calls of a module's methods that
        hand it the model's tensors."""
        if self.ctx.call_context is not None or len(operands) < 2:
            return
        context = self.ctx.current_function
        function = context.node
        if function is None or function.name.value == "__init__":
            return
        in_module = context.class_info is not None and context.class_info.is_module
        for placed_node, placed in operands:
            if placed.kind != Kind.TENSOR or placed.device is None or not placed.device.is_accel or placed.device.one_for_all_replicas is not None:
                continue
            for other_node, other in operands:
                # (the parts of a module's tuple of outputs are of unknown kind: what `torch.cat` joins is a tensor)
                if other is placed or other.kind not in ((Kind.TENSOR, Kind.UNKNOWN) if joined else (Kind.TENSOR,)):
                    continue
                if other.device is None or other.device.kind != "follows":
                    continue
                if in_module and other.device != MODEL_DEVICE:
                    continue
                # a free function: a tensor its caller handed it (or, analysed on its one call's
                # values, the model's tensors a module's method handed it)
                if not in_module and other.device != MODEL_DEVICE and not (other.device.argument and other.device.label in parameter_names(function)):
                    continue
                on_host = replace(other, device=CPU)
                if not (
                    conflicting(on_host, placed, written=on_host if written is other else written)
                    or (joined and other.scalar is not True)
                ):
                    continue
                if self._asks_where_it_runs(function):
                    return
                if in_module:
                    assert context.class_info is not None
                    self._accelerator_meetings.append((context.class_info, node, other_node, placed_node, placed))
                elif other.device == MODEL_DEVICE:
                    self._helper_accelerator_meetings.append((function, node, other_node, placed_node, placed))
                else:
                    self._argument_accelerator_meetings.setdefault((function, other.device.label), []).append((node, other_node, placed_node, placed))
                return

    def _note_model_tensors_handed(self, event: CallEvent, callee: cst.FunctionDef) -> None:
        """A module's method (own analysis) calls a free function of the file, handing it
        tensors on the model's device: which parameters they are."""
        context = self.ctx.current_function
        if self.ctx.call_context is not None or context.node is None or context.class_info is None or not context.class_info.is_module:
            return
        if not any(value.kind == Kind.TENSOR and value.device == MODEL_DEVICE for _, value in event.args):
            return
        bound = helpers.bind_arguments(callee, event.args, False)
        if bound is None:
            return
        for name, value in bound[1].items():
            if value.kind == Kind.TENSOR and value.device == MODEL_DEVICE:
                self._model_tensors_handed.append((context.class_info, callee, name))

    def _note_run_on_host(self, event: CallEvent) -> None:
        """``model(x)`` on a module of a class of the file that was built on the host and never
        moved, on inputs not on an accelerator: the program runs that model, and so the
        modules it holds, on the host."""
        module = event.callee
        info = module.info
        if not isinstance(info, ClassInfo) or not info.is_module or info.framework_placed or id(info.node) in self._run_on_host:
            return
        if module.device is None or not module.device.is_cpu or module.origin is None or not module.origin.created:
            return
        if any(value.device is not None and value.device.may_be_accelerator for _, value in event.args):
            return
        self._run_on_host[id(info.node)] = (info, event.node)

    def _classes_run_on_host(self) -> dict[int, tuple[cst.Call, ClassInfo]]:
        """Each module class of the file that runs on the host: one an object of which is
        called built on the host and never moved, its bases, and the classes of the modules
        such a class builds in ``__init__``; the class's node id -> the call and the class of
        the module it calls."""
        found: dict[int, tuple[cst.Call, ClassInfo]] = {}
        work = [(info, call, info) for info, call in self._run_on_host.values()]
        while work:
            info, call, called = work.pop()
            if id(info.node) in found:
                continue
            found[id(info.node)] = (call, called)
            work.extend((base, call, called) for base in info.bases if base.is_module)
            for attribute in info.attributes.values():
                work.extend((held, call, called) for held in _module_classes_held(attribute))
        return found

    def _report_accelerator_meetings(self) -> None:
        """A module's method meets the model's tensors with one it put on the accelerator
        itself, and the program runs that model on the host (built there and never moved):
        on a GPU machine the two are on different devices. Reported at each such operation,
        naming the call."""
        if not self._run_on_host or not (self._accelerator_meetings or self._argument_accelerator_meetings or self._helper_accelerator_meetings):
            return
        on_host = self._classes_run_on_host()
        meetings = list(self._accelerator_meetings)
        for function, node, other, placed_node, placed in self._helper_accelerator_meetings:
            caller_class = self.ctx.analyzer.sole_caller_class(function)
            if caller_class is not None and caller_class.is_module:
                meetings.append((caller_class, node, other, placed_node, placed))
        for info, function, parameter in self._model_tensors_handed:
            for node, other, placed_node, placed in self._argument_accelerator_meetings.get((function, parameter), ()):
                meetings.append((info, node, other, placed_node, placed))
        done: set[int] = set()
        for info, node, other, placed_node, placed in meetings:
            found = on_host.get(id(info.node))
            if found is None or id(node) in done:
                continue
            done.add(id(node))
            call, called = found
            model = f"`{called.name}`" if called is info else f"`{called.name}`, which holds this `{info.name}`,"
            self.ctx.report(
                node,
                f"mixes devices: `{self.ctx.source_of(placed_node)}` is {where(placed, self.ctx)} whatever device the model "
                f"is on, while `{self.ctx.source_of(other)}` is on the model's device, the CPU where the program runs it: "
                f"{model} is built on the CPU and never moved before the call at line {self.ctx.line(call)}; on a GPU machine "
                "this fails: put the tensor on the device of the model's tensors (`.to(x.device)`), or move the model",
                related=((call, f"`{called.name}` runs on the CPU here"),),
            )

    def finish(self) -> None:
        self._host_only.finish()
        for event, arg, value, forward, parameter, called_from in self._handed_to_forward:
            if self._report_at_rebuild(event, arg.value, value, called_from):
                continue  # the model is what was left behind, not the input
            failing = self._failing_meetings(forward, parameter, value)
            if not failing and not self.ctx.analyzer.places_where_parameter_is(forward, parameter):
                # a forward that puts tensors where this input is was written for inputs on any
                # device: only a meeting with the model's own tensors fails, and none was seen
                self._report_module_input(event, arg, value, called_from)
            for node, other in failing:
                self._report_meeting(event, event.callee, forward, value, parameter, node, other, called_from)
        for event, arg, value, method, parameter, called_from in self._handed_to_method:
            assert event.receiver is not None
            failing = self._failing_meetings(method, parameter, value)
            if not failing:
                self._report_method_input(event, arg, value, called_from)
            for node, other in failing:
                self._report_meeting(event, event.receiver, method, value, parameter, node, other, called_from)
        self._report_host_state_writes()
        for event, arg, value, move, called_from in self._after_host_moves:
            if not self._report_at_move_for_state(event, arg, value, move, called_from):
                self._report_module_input(event, arg, value, called_from, decided=True)
        for event, method, moved_inputs, called_from in self._moved_into_host_module:
            self._report_moved_into_host_module(event, method, moved_inputs, called_from)
        for event, arg, value, move, called_from in self._after_host_moves_by_method:
            self._report_at_move_for_state(event, arg, value, move, called_from, verb=f"its `{event.method}()` is handed")
        self._report_accelerator_meetings()

    def _report_host_state_writes(self) -> None:
        """``self.gen_ppl.update(nlls, mask)`` on a metric module built on the host and never
        moved, whose ``update`` accumulates ``self.total += value.sum()``: an in-place operation
        writes into its receiver, and PyTorch lets a 0-dim CPU tensor join a GPU operation only as
        an input, never as the output - a host tensor cannot take a GPU value of any rank (nor
        can a GPU 0-dim value join a host operation). The call is reported as any call of a host
        module's method on GPU inputs; the write the exception comes from is reported too, once
        per line, naming the call."""
        done: set[int] = set()
        for event, value, method, parameter, called_from in self._handed_to_host_method:
            assert event.receiver is not None
            for node, (operand, other) in self._parameter_meetings.get((method, parameter), {}).items():
                if id(node) not in self._parameter_writes or id(node) in done:
                    continue
                done.add(id(node))
                self.ctx.report(
                    node,
                    f"`{method.name.value}()` writes `{self.ctx.source_of(operand)}` in place into `{self.ctx.source_of(other)}`, the "
                    f"module's own tensor, which is {where(event.receiver, self.ctx)}, but `{parameter}` comes in "
                    f"{where(value, self.ctx)} from the call at line {self.ctx.line(event.node)}: a host tensor cannot take a "
                    "value computed on an accelerator; move the module to that device",
                    related=((event.node, f"`{parameter}` is handed to the module's `{method.name.value}()` here"),),
                    called_from=called_from,
                )

    def _failing_meetings(self, method: cst.FunctionDef, parameter: str, value: Value) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """The operations of ``method`` where ``parameter``, handed ``value``, meets the
        module's tensors and fails. PyTorch lets a 0-dim CPU tensor meet a GPU one: the operand
        must have a dimension."""
        return [
            (node, other)
            for node, (operand, other) in self._parameter_meetings.get((method, parameter), {}).items()
            if _rank_after(operand) is True or _rank_after(operand) is None and value.scalar is False
        ]

    def _report_meeting(
        self, event: CallEvent, module: Value, method: cst.FunctionDef, value: Value, parameter: str, node: cst.CSTNode,
        other: cst.BaseExpression, called_from: Optional[cst.Call],
    ) -> None:
        """``labels`` comes into the file's own ``forward`` (or another method of the module)
        on the CPU and meets the pooled logits there: reported where it fails, naming the call
        that handed it in."""
        self.ctx.report(
            node,
            f"`{parameter}` comes into `{method.name.value}` {where(value, self.ctx)} from the call at line {self.ctx.line(event.node)}, "
            f"and here meets `{self.ctx.source_of(other)}`, which is where the model's parameters are, "
            f"{where(module, self.ctx)}: move `{parameter}` to that device here, or at the call",
            related=((event.node, f"`{parameter}` is handed to the model here"),),
            called_from=called_from,
        )

    def _report_at_rebuild(self, event: CallEvent, input_node: cst.BaseExpression, value: Value, called_from: Optional[cst.Call] = None) -> bool:
        """A model the file rebuilt on the host in place of a moved one (``model = Net(args)``
        after ``model = Net(args).to(args.device)``), never moved since, called on an input on
        the accelerator: the move it forgot belongs where it is rebuilt, as it was on the model
        it replaces - reported there, once however many calls meet it, with the first call as a
        related location. Whether it reported."""
        rebuilt = self.ctx.analyzer.rebuilt_module(event.callee)
        if rebuilt is None or value.device is None or not value.device.may_be_accelerator:
            return False
        self.ctx.report(
            rebuilt.construction,
            f"`{rebuilt.name}` is rebuilt here on the CPU and never moved, while the model it replaces is "
            f"{where(rebuilt.replaced, self.ctx)}: at line {self.ctx.line(event.node)} it is called on "
            f"`{self.ctx.source_of(input_node)}`, {where(value, self.ctx)}; move the new one here as well",
            related=((event.node, f"`{self.ctx.source_of(input_node)}` meets the model rebuilt on the CPU here"),),
            called_from=called_from,
        )
        return True

    def _check_all(
        self,
        node: cst.CSTNode,
        operands: list[tuple[cst.BaseExpression, Value]],
        loss: bool = False,
        joined: bool = False,
        written: Optional[Value] = None,
    ) -> None:
        """``joined``: a ``torch.cat``/``torch.stack`` of the operands, which refuses a CPU
        tensor beside a GPU one whatever its rank (it takes no 0-dim exception); ``written``:
        the operand an in-place method writes (no 0-dim exception for it either)."""
        for index, (first_node, first) in enumerate(operands):
            for second_node, second in operands[index + 1:]:
                if self._conflict_to_report(first, second, loss, joined, written):
                    if _zero_dim_host_written(written) and written is first:
                        self._report_written(node, first_node, first, second_node, second)
                    else:
                        self._report(node, first_node, first, second_node, second)
                    return
        self._check_arms(node, operands)

    def _check_arms(self, node: cst.CSTNode, operands: list[tuple[cst.BaseExpression, Value]]) -> bool:
        """Report the first pair of operands that an if/elif chain put on one device on every
        arm but one that moved something else to the accelerator (see
        values.conflicting_on_an_arm); whether it reported."""
        for index, (first_node, first) in enumerate(operands):
            for second_node, second in operands[index + 1:]:
                found = conflicting_on_an_arm(first, second)
                if found is None:
                    continue
                host, other, arm = found
                host_node, other_node = (first_node, second_node) if host is first else (second_node, first_node)
                # (the arm where no test is true never moves anything, so it is never the one found)
                branch = f"the branch at line {self.ctx.line(arm)}" if arm is not None else "the path where no branch runs"
                self.ctx.report(
                    node,
                    f"mixes devices on {branch}: it leaves `{self.ctx.source_of(host_node)}` on the CPU, "
                    f"which only other branches move, while `{self.ctx.source_of(other_node)}` is {where(other, self.ctx)}",
                )
                return True
        return False

    def _report_written(self, node: cst.CSTNode, host_node: cst.BaseExpression, host: Value, other_node: cst.BaseExpression, other: Value) -> None:
        self.ctx.report(
            node,
            f"writes in place into `{self.ctx.source_of(host_node)}`, {where(host, self.ctx)}, a value computed with "
            f"`{self.ctx.source_of(other_node)}`, {where(other, self.ctx)}: PyTorch mixes a 0-dim CPU tensor into a GPU "
            f"operation as an input, never as the output it writes",
        )

    def _report(self, node: cst.CSTNode, left_node: cst.BaseExpression, left: Value, right_node: cst.BaseExpression, right: Value) -> None:
        self.ctx.report(
            node,
            f"mixes devices: `{self.ctx.source_of(left_node)}` is {where(left, self.ctx)}, "
            f"`{self.ctx.source_of(right_node)}` is {where(right, self.ctx)}",
        )


#: the function asks where its inputs are (``x.is_cuda``, ``x.device.type == "cuda"``)
_ASKS_WHERE_IT_RUNS = re.compile(rf"{ASKS_WHERE_IT_RUNS.pattern}|get_device\s*\(")

#: tensor methods whose result has at least one dimension whatever the receiver's
_GIVES_A_DIMENSION = frozenset({"view", "reshape", "flatten", "unsqueeze"})
#: tensor methods that keep the receiver's dimensions
_KEEPS_DIMENSIONS = frozenset({"long", "float", "int", "double", "half", "bfloat16", "bool", "contiguous", "detach", "clone"})


def _rank_after(operand: cst.BaseExpression) -> object:
    """Does the chain of methods on a parameter (``labels.view(-1)``) give a tensor with a
    dimension (True), keep the parameter's own (None), or may it reduce it (False:
    ``labels.squeeze()``, ``labels[0]``)?"""
    node = operand
    keeps = True
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method in _GIVES_A_DIMENSION and keeps:
            return True
        if method not in _KEEPS_DIMENSIONS:
            keeps = False
        node = node.func.value
    if not isinstance(node, cst.Name):
        return False
    return None if keeps else False


def _module_classes_held(value: Value, depth: int = 3, held_by: Optional[Value] = None) -> list[ClassInfo]:
    """The module classes of the file whose objects ``value`` (an attribute a module's
    ``__init__`` set, on a known device that is not an accelerator) is or holds as a module
    container (``nn.ModuleList([Block(), ...])``, ``nn.Sequential(Block())``: its elements
    are where the container is, and keep no device of their own)."""
    info = value.info
    container = isinstance(info, (Homogeneous, tuple))
    # (a container built from a comprehension of fresh modules has no device of its own)
    if value.kind != Kind.MODULE or depth <= 0 or (value.device is None and held_by is None and not container):
        return []
    if value.device is not None and value.device.may_be_accelerator:
        return []
    if isinstance(info, ClassInfo):
        return [info] if info.is_module else []
    items = [info.element] if isinstance(info, Homogeneous) else [item for item in info if isinstance(item, Value)] if isinstance(info, tuple) else []
    return [held for item in items for held in _module_classes_held(item, depth - 1, value)]


def _joined_elements(event: CallEvent) -> list[tuple[cst.BaseExpression, Value]]:
    """What a ``torch.cat``/``torch.stack`` joins: its tensor arguments and the elements of a
    literal list or tuple that have a known device, whatever kind the analysis gave them."""
    found = list(event.operands())
    for arg, value in event.args:
        if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and isinstance(arg.value, (cst.List, cst.Tuple)):
            found.extend(
                (element.value, item) for element, item in zip(arg.value.elements, value.info)
                if isinstance(item, Value) and not item.is_tensor_like and item.kind == Kind.UNKNOWN and item.device is not None
            )
    return found


def _zero_dim_host_written(written: Optional[Value]) -> bool:
    """The operand an in-place operation writes is a host tensor not known to have a dimension."""
    return written is not None and written.device is not None and written.device.is_cpu and written.scalar is not False


def _unmoved_target(host: Value, other: Value) -> bool:
    """A loss function given the model's output and a batch never moved: DL203's finding (its
    ``_check_loss``), one bug, one finding."""
    return (
        host.origin is not None and host.origin.from_data and host.scalar is not True
        and host.device is not None and host.device.is_cpu
        and other.kind == Kind.TENSOR and other.device is not None and other.device.may_be_accelerator and not other.device.argument
    )


def _accelerator_tensor_held(value: Value, depth: int = 3) -> Optional[Value]:
    """A tensor on a device that may be the accelerator that ``value`` is or holds (the
    elements of a list or tuple of them, ``[(x.to(device), y.to(device)), ...]``); None if none."""
    if value.kind in (Kind.TENSOR, Kind.BATCH):
        return value if value.device is not None and value.device.may_be_accelerator and not value.device.argument else None
    if value.kind != Kind.CONTAINER or depth <= 0:
        return None
    info = value.info
    items = [info.element] if isinstance(info, Homogeneous) else [item for item in info if isinstance(item, Value)] if isinstance(info, tuple) else []
    for item in items:
        found = _accelerator_tensor_held(item, depth - 1)
        if found is not None:
            return found
    return None


def _host_move_call(node: cst.BaseExpression) -> bool:
    """``x.cpu()``, ``x.to("cpu")``, ``x.to(device="cpu")``, ``x.to(torch.device("cpu"))``: a call that moves
    its receiver to the host (for a module: in place)."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return False
    method = node.func.attr.value
    if method == "cpu":
        return not node.args
    return method == "to" and len(node.args) == 1 and device_spelling(node.args[0].value) == "cpu"
