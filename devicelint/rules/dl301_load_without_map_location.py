from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.checkpoint_loads import CheckpointLoader, restored_argument
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import bound_names, keyword_arg, positional_args
from devicelint.analysis.values import Kind, NoneOnOneArm, Role, Value, is_none_literal, none_on_one_arm
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules._arguments import with_keyword_argument
from devicelint.rules._cuda_code import CUDA_ONLY_FILE, is_cuda_literal
from devicelint.rules._gpu_only_paths import GpuOnlyPaths
from devicelint.rules.base import Example, Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(f)` (or `torch.jit.load(f)`, which restores a scripted module's tensors
    onto the devices they were saved from in the same way) called without `map_location` in a
    program that picks its device
    when it runs (it calls `torch.cuda.is_available()` or `torch.cuda.device_count()`, or
    builds `torch.device(...)` from configuration): such a program is meant for machines
    with and without that GPU, and the load is what breaks on the ones without. Also a call of
    a wrapper from another module of the project (`load_checkpoint(path)` in `utils.py`) whose
    `torch.load` of the path it is given has no `map_location`: the finding is at the call,
    naming the wrapper's line. A `map_location` that is `None` is none at all: `torch.load(p,
    map_location=None)`, and a call of a checkpoint loader - a function of the file or the
    project whose `torch.load` (directly or through another such loader) of a path built from a
    parameter (`path`, `os.path.join(path, "state.pt")`) takes its `map_location` from a
    parameter (`def _load_checkpoint(filename, map_location=None)`), or mmcv's and mmengine's `load_checkpoint`
    and `_load_checkpoint`, which do the same, or torch.hub's `load_state_dict_from_url` (also
    `model_zoo.load_url`), which downloads a published file and loads it with the
    `map_location` it is given - that leaves that parameter at a `None` default
    or passes `None`. Where the location is `None` on one arm of a conditional expression
    (`map_loc = "cpu" if device == "cpu" else None`, then `load_checkpoint(model, path,
    map_location=map_loc)`), the arm that chooses `None` is flagged too: on that branch, a run
    on a GPU, the tensors land on the device the checkpoint names, not on the one the code
    chose (a multi-GPU job piles them on `cuda:0`). A loader's call is a load like any other:
    the conditions below apply to it, with the argument it loads from as the path.

    In such a program, also a `torch.load` whose `map_location` names CUDA itself (`"cuda:0"`,
    `torch.device("cuda")`, `{"cuda:1": "cuda:0"}`, `lambda storage, loc: storage.cuda()`): the
    checkpoint will not load on the machines without a GPU that the program otherwise supports.
    Left alone there: a load on a path that runs only with a GPU (in an `if`, `while` or
    conditional expression whose test asks about the device - `if torch.cuda.is_available():`,
    `if args.cuda:` - in a function or class whose decorators do, such as `@require_torch_gpu` or
    `skipif(not torch.cuda.is_available())`, or after a guard of its scope such as `if not
    use_cuda: raise ...` or `assert torch.cuda.is_available()`); a GPU taken from configuration
    (`f"cuda:{rank}"`, `storage.cuda(args.gpu)`); a file written for CUDA alone (as DL302 has it).
    Its fix maps to the `torch.device` variable in scope (safe); where there is none it maps to
    `"cpu"`, which is unsafe (the code may use the tensors where they come back) and is applied
    only with `--unsafe-fixes`.

    In any file, also a model's own loading code, which its caller places (as DL302 has it):
    a `torch.load` in a method of an `nn.Module` (not a static one: `def load_state(self,
    path)`), and a function that restores a model from what it loaded and returns that model
    (`model.load_state_dict(loaded["model"])`, or a dict made from its entries with their keys
    renamed, then `return model`; or a checkpoint loader of the file handed the model to
    restore, `load_checkpoint(model, path)`, then `return model.eval()`). Where that model will run
    is its caller's choice, which may be a machine without the GPU that saved the checkpoint.
    (A function that only returns what it loaded is not taken for one: in real code those
    read back data files, mostly of host tensors - unless the file pickles whole models,
    `torch.save(model, p)` or an object of its own class that keeps one.)

    Left alone: loading back an empty `io.BytesIO()` that the same code saved into; a path
    the same function (or script body, or a function nested in it) wrote earlier with
    `torch.save` or accelerate's `accelerator.save` - the same run, on the same devices (a
    save *after* the load is a resume, and is flagged); a local path variable counts as the
    expression it was bound to; a path the file writes only host tensors to; a model's state
    restored in a file that saves model state only from the host (`model.eval().cpu()`, then
    `torch.save(model.state_dict(), p)`; a model never placed, such as a fresh `Net()`, says
    nothing of the trained checkpoints the program loads) and nothing else (not a download
    from a URL: that reads a published file); a cache the other arm of the same
    `if` fills with `torch.save` of values not placed on an accelerator; a non-literal path in
    a pytest test that takes a fresh temporary directory (`tmp_path`, `tmpdir`): what it
    loads, it wrote there itself.
    Also flags `torch.save(model, path)` of a whole module of the file whose class keeps the
    device it places with in a plain attribute (`self.device = device` in `__init__`, then
    `x.to(self.device)`, `device=self.device`; not one a method other than `__init__` keeps
    current), and the file's whole-object loads (`torch.load(..., weights_only=False)`):
    pickling saves that attribute, and `map_location` moves the tensors only, so the restored
    model goes on placing its inputs on the device it was trained on.

    ## Why is this bad?
    Without `map_location`, `torch.load` restores every tensor onto the device it was saved
    from. A checkpoint saved on `cuda:1` then fails on a CPU-only machine ("Attempting to
    deserialize object on a CUDA device but torch.cuda.is_available() is False") or on a
    machine with one GPU, and one saved on `cuda:0` lands on GPU 0 of every DDP rank.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    state = torch.load("checkpoint.pt")
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    state = torch.load("checkpoint.pt", map_location=device)
    ```
    The fix adds `map_location="cpu"`, or `map_location=device` when a `device` variable
    holding a `torch.device` is in scope (to a loader's call: its own location parameter), or
    replaces a `None` given as the location, as the last argument and in the call's own layout:
    on a line of its own where the arguments are one per line. Loading to the CPU and then
    moving the model is always correct; the fix is safe. For a `map_location` that names CUDA
    the fix replaces it with `device` (safe: the run's own choice) or, without such a variable,
    `"cpu"` (unsafe: code may use the loaded tensors where they land).
    """

    code = "DL301"
    name = "load-without-map-location"
    severity = Severity.WARNING
    summary = "`torch.load` without `map_location` restores tensors onto the device they were saved from (or one mapped to a hard-coded CUDA device)."
    fix_safety = "safe"
    valid = (
        # ... mapped to the host
        "import torch\ndef load_checkpoint(model, filename, map_location=None):\n"
        "    checkpoint = torch.load(filename, map_location=map_location)\n"
        "    model.load_state_dict(checkpoint['state_dict'])\n    return checkpoint\n"
        "def build_model(path, device):\n    model = torch.nn.Linear(4, 2)\n"
        "    load_checkpoint(model, path, map_location='cpu')\n    return model.to(device).eval()\n",
        # the CPU branch maps, the GPU branch loads as saved (LatticeLSTM after its fix)
        "import torch\ndef load(model, path, gpu):\n    if not gpu:\n"
        "        model.load_state_dict(torch.load(path, map_location=lambda storage, loc: storage))\n"
        "    else:\n        model.load_state_dict(torch.load(path))\n"
        "use_gpu = torch.cuda.is_available()\n",
        # a pytest test loads what it saved in its own fresh temporary directory
        "import torch\nimport os\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "def test_resume(tmp_path, trainer):\n    path = os.path.join(tmp_path, 'last.ckpt')\n"
        "    trainer.save_checkpoint(path)\n    state = torch.load(path)\n",
        "import torch\nstate = torch.load('ckpt.pt', map_location='cpu')\n",
        # the program never asks which device it has: it runs where its checkpoints were made
        "import torch\nstate = torch.load('ckpt.pt')\n",
        "import torch\nstate = torch.load('ckpt.pt', 'cpu')\n",
        "import torch\nstate = torch.load('ckpt.pt', **kwargs)\n",
        "import pickle\nstate = pickle.load(f)\n",
        "import io\nimport torch\nbuffer = io.BytesIO()\ntorch.save(model, buffer)\nbuffer.seek(0)\ncopy = torch.load(buffer)\n",
        # the same run reloads the checkpoint it has just written (pytorch/examples word_language_model)
        "import torch\ndef train(model, args):\n    torch.cuda.is_available()\n    torch.save(model, args.save)\n    return torch.load(args.save)\n",
        # a model's static helper has no model whose device its caller chose
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    @staticmethod\n    def read(path):\n        return torch.load(path)\n",
        # published weights downloaded onto the host
        "import torch\nimport torch.nn as nn\nfrom torch.hub import load_state_dict_from_url\nclass Net(nn.Module):\n"
        "    def load_pretrained(self, url):\n        self.load_state_dict(load_state_dict_from_url(url, map_location='cpu'))\n",
        # a helper that reads data back (not a model it restores and returns): no device asked
        "import torch\ndef save(features, path):\n    torch.save(features, path)\ndef read(path):\n    return torch.load(path)\n"
        "save(torch.zeros(3), 'features.pt')\n",
        "import torch\ndef read_cache(path):\n    data = torch.load(path)\n    return data\n",
        # accelerate's save, then a helper nested in the same function reloads it: the same run
        "import os\nimport torch\nfrom accelerate import Accelerator\ndef main(args):\n    accelerator = Accelerator()\n"
        "    device = torch.device(args.device)\n    accelerator.save(state, os.path.join(args.out, 'lora.pt'))\n"
        "    def reload(pipe):\n        checkpoint = os.path.join(args.out, 'lora.pt')\n        return torch.load(checkpoint)\n"
        "    reload(pipe)\n",
        # the program saves its model only from the host and reads such a checkpoint back
        "import torch\nfrom net import Net\ndef train(args):\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    model = Net().to(device)\n    model.eval().cpu()\n    torch.save(model.state_dict(), args.out)\n"
        "def stylize(args):\n    model = Net()\n    state = torch.load(args.model)\n    model.load_state_dict(state)\n",
        # a cache the program fills itself, in the other arm, with values it never placed on a GPU
        "import os\nimport torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "if os.path.isfile(args.cache):\n    vectors = torch.load(args.cache)\nelse:\n"
        "    vectors = build_vectors()\n    torch.save(vectors, args.cache)\n",
        # mapped to CUDA only on the path that has it, or to the GPU configuration names
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def load(path, args):\n    if torch.cuda.is_available():\n        return torch.load(path, map_location='cuda:0')\n"
        "    if args.gpu is not None:\n        return torch.load(path, map_location=lambda s, loc: s.cuda(args.gpu))\n"
        "    return torch.load(path, map_location='cuda' if args.cuda else 'cpu')\n",
        # a GPU-only test, by its decorator or by the guard that skips it
        "import pytest\nimport torch\nuse_gpu = torch.cuda.is_available()\n"
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a GPU')\n"
        "def test_load(path):\n    torch.load(path, map_location='cuda')\n"
        "def test_reload(path):\n    if not torch.cuda.is_available():\n        pytest.skip('needs a GPU')\n"
        "    torch.load(path, map_location=torch.device('cuda:0'))\n",
        # a program that never asks which device it has: a GPU program, mapped to its GPU
        "import torch\nstate = torch.load('ckpt.pt', map_location='cuda:0')\n",
        # written for CUDA alone
        "import torch\nuse_gpu = torch.cuda.is_available()\nstream = torch.cuda.Stream()\n"
        "state = torch.load('ckpt.pt', map_location='cuda')\n",
        # a file of host tensors only: nothing to map
        "import torch\nuse_gpu = torch.cuda.is_available()\nclass Cache:\n    def write(self):\n        torch.save((torch.zeros(3), torch.ones(3)), self.path)\n"
        "    def read(self):\n        return torch.load(self.path)\n",
        # a checkpoint loader given a location, or whose own default maps, or that decides it itself
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def _load_checkpoint(filename, map_location=None):\n    return torch.load(filename, map_location=map_location)\n"
        "def load_to_host(filename, map_location='cpu'):\n    return torch.load(filename, map_location)\n"
        "def load_anywhere(filename, map_location=None):\n    map_location = map_location or 'cpu'\n"
        "    return torch.load(filename, map_location=map_location)\n"
        "a = _load_checkpoint('a.pt', map_location='cpu')\nb = _load_checkpoint('b.pt', device)\n"
        "c = load_to_host('c.pt')\nd = load_anywhere('d.pt')\ne = _load_checkpoint('e.pt', **options)\n",
        # a loader in a chain whose wrapper maps to the host itself
        "import os\nimport torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "def load_state(path, map_location=None):\n    return torch.load(os.path.join(path, 'state.pt'), map_location)\n"
        "def load_on_host(path):\n    return load_state(path, map_location='cpu')\n"
        "state = load_on_host('run')\n",
        # ... or one that reads back what the same run has just written
        "import torch\ndef _load_checkpoint(filename, map_location=None):\n    return torch.load(filename, map_location=map_location)\n"
        "def train(model, path):\n    torch.cuda.is_available()\n    torch.save(model.state_dict(), path)\n"
        "    model.load_state_dict(_load_checkpoint(path))\n",
        # mmcv's loader mapped to the host (the fixed mmocr init_detector), in a program that asks
        "import torch\nfrom mmcv.runner import load_checkpoint\ndef init_detector(model, checkpoint, device='cuda:0'):\n"
        "    load_checkpoint(model, checkpoint, map_location='cpu')\n    return model.to(device)\n"
        "use_gpu = torch.cuda.is_available()\n",
        # a location chosen on both arms; the parameter of a loader is its callers' to give
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "def load(path, map_location=None):\n    location = 'cpu' if map_location is None else map_location\n"
        "    return torch.load(path, map_location=location)\n"
        "def reload(path, location):\n    return torch.load(path, map_location=location)\n",
    )
    invalid = (
        # a model handed to the file's checkpoint loader, restored and returned for its caller to
        # place (mmdeploy's build_pytorch_model): the loader's map_location is left at None
        Example(
            "import torch\ndef load_checkpoint(model, filename, map_location=None):\n"
            "    checkpoint = torch.load(filename, map_location=map_location)\n"
            "    model.load_state_dict(checkpoint['state_dict'])\n    return checkpoint\n"
            "def build_model(path, device):\n    model = torch.nn.Linear(4, 2)\n"
            "    load_checkpoint(model, path)  # expect: DL301\n    return model.to(device).eval()\n"
        ),
        # torch's download helper loads the published file with torch.load, as saved (torchSR's
        # pretrained super-resolution models)
        Example(
            "import torch.nn as nn\nfrom torch.hub import load_state_dict_from_url\nclass Net(nn.Module):\n"
            "    def load_pretrained(self, url):\n        state = load_state_dict_from_url(url, progress=False)  # expect: DL301\n"
            "        self.load_state_dict(state)\n"
        ),
        # a library that pickles whole fitted objects holding a model, and whose load() hands
        # back what it unpickled (neural_prophet): the model comes back where it was trained
        Example(
            "import torch\nimport torch.nn as nn\nclass Forecaster:\n    def __init__(self):\n        self.model = nn.Linear(4, 2)\n"
            "def save(forecaster, path):\n    torch.save(forecaster, path)\n"
            "def load(path):\n    restored = torch.load(path, weights_only=False)  # expect: DL301\n    return restored\n"
            "save(Forecaster(), 'forecaster.pt')\n"
        ),
        # the only save writes an untrained model's state (a stand-in file): that says nothing of
        # the trained checkpoint the evaluation loads (Complex-YOLOv4's test script)
        Example(
            "import torch\nimport torch.nn as nn\ndef evaluate(path):\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "    model = nn.Linear(4, 2)\n    model.load_state_dict(torch.load(path))  # expect: DL301\n    return model.to(device)\n"
            "torch.save(nn.Linear(4, 2).state_dict(), 'init.pt')\nevaluate('best.pt')\n"
        ),
        # a Lightning checkpoint's keys renamed into a state dict the returned model restores (mase)
        Example(
            "import torch\ndef load_unwrapped(path, model):\n    source = torch.load(path)['state_dict']  # expect: DL301\n"
            "    renamed = {}\n    for key, value in source.items():\n        renamed[key.split('.', 1)[-1]] = value\n"
            "    model.load_state_dict(renamed)\n    return model\n"
        ),
        # a model's own loading method: its caller places the model, maybe on a CPU-only machine (deepmatcher)
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def load_state(self, path):\n"
            "        state = torch.load(path)  # expect: DL301\n        self.load_state_dict(state['model'])\n",
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def load_state(self, path):\n"
            "        state = torch.load(path, map_location=\"cpu\")  # expect: DL301\n        self.load_state_dict(state['model'])\n",
        ),
        # a library helper that restores a model and hands it back to be placed (imagen-pytorch)
        Example(
            "import torch\ndef load_from_checkpoint(path, config):\n    loaded = torch.load(path)  # expect: DL301\n"
            "    model = config.create()\n    model.load_state_dict(loaded['model'])\n    return model\n"
        ),
        # the cache's other arm saves a model moved to the GPU: what it reads back is on that GPU
        Example(
            "import os\nimport torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = torch.nn.Linear(2, 2).to(device)\nif os.path.isfile('m.pt'):\n"
            "    model.load_state_dict(torch.load('m.pt'))  # expect: DL301\nelse:\n    torch.save(model.state_dict(), 'm.pt')\n"
        ),
        # the mapped branch is the one with a GPU index: the plain one is also the CPU-only run (pytorch/examples imagenet)
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "def resume(path, gpu):\n    if gpu is None:\n        return torch.load(path)  # expect: DL301\n"
            "    return torch.load(path, map_location=f'cuda:{gpu}')\n"
        ),
        Example(
            "import torch\nuse_gpu = torch.cuda.is_available()\nstate = torch.load('ckpt.pt')  # expect: DL301\n",
            "import torch\nuse_gpu = torch.cuda.is_available()\nstate = torch.load('ckpt.pt', map_location=\"cpu\")  # expect: DL301\n",
        ),
        # resuming at the start from what an earlier run saved at the end (PyTorch-GAN's scripts)
        Example(
            "import torch\ncuda = torch.cuda.is_available()\nif resume:\n"
            "    model.load_state_dict(torch.load('ckpt.pth'))  # expect: DL301\n"
            "for epoch in range(10):\n    torch.save(model.state_dict(), 'ckpt.pth')\n"
        ),
        # saved from the GPU by one method, resumed by another - maybe on another machine
        Example(
            "import torch\nclass Trainer:\n    def __init__(self, args):\n        self.device = torch.device(args.device)\n"
            "    def save(self):\n        torch.save(self.model.state_dict(), self.path)\n"
            "    def resume(self):\n        return torch.load(self.path)  # expect: DL301\n"
        ),
        # map_location hard-coded to CUDA in a program that chooses its device (model-based-social-navigation)
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "class Ensemble:\n    def load(self, path):\n"
            "        self.model.load_state_dict(torch.load(path, map_location='cuda:0'))  # expect: DL301\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "class Ensemble:\n    def load(self, path):\n"
            "        self.model.load_state_dict(torch.load(path, map_location=device))  # expect: DL301\n",
        ),
        Example(
            "import torch\nuse_gpu = torch.cuda.is_available()\n"
            "a = torch.load('a.pt', map_location=torch.device('cuda'))  # expect: DL301\n"
            "b = torch.load('b.pt', map_location={'cuda:1': 'cuda:0'})  # expect: DL301\n"
            "c = torch.load('c.pt', map_location=lambda storage, loc: storage.cuda())  # expect: DL301\n"
            "if resume:\n    d = torch.load('d.pt', 'cuda:0')  # expect: DL301\n"
        ),
        # a loader of the file whose map_location is left at its None default (mmaction2's pretrained backbone)
        Example(
            "import torch\nimport torch.nn as nn\ndef _load_checkpoint(filename, map_location=None):\n"
            "    return torch.load(filename, map_location=map_location)\n"
            "class ResNet3d(nn.Module):\n    def inflate_weights(self):\n"
            "        state = _load_checkpoint(self.pretrained)  # expect: DL301\n"
            "use_gpu = torch.cuda.is_available()\n",
            "import torch\nimport torch.nn as nn\ndef _load_checkpoint(filename, map_location=None):\n"
            "    return torch.load(filename, map_location=map_location)\n"
            "class ResNet3d(nn.Module):\n    def inflate_weights(self):\n"
            "        state = _load_checkpoint(self.pretrained, map_location=\"cpu\")  # expect: DL301\n"
            "use_gpu = torch.cuda.is_available()\n",
        ),
        # loaders in a chain, the path joined from a parameter, None by default all the way (flambe's load_from_path)
        Example(
            "import os\nimport torch\ndef load_state_from_file(path, map_location=None):\n"
            "    return torch.load(os.path.join(path, 'state.pt'), map_location)\n"
            "def load_component(path, map_location=None):\n"
            "    return load_state_from_file(path, map_location=map_location)\n"
            "def load_from_path(path, saved_config=True):\n"
            "    if saved_config:\n        return load_component(path)  # expect: DL301\n"
            "    return load_state_from_file(path)  # expect: DL301\n"
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
            "import os\nimport torch\ndef load_state_from_file(path, map_location=None):\n"
            "    return torch.load(os.path.join(path, 'state.pt'), map_location)\n"
            "def load_component(path, map_location=None):\n"
            "    return load_state_from_file(path, map_location=map_location)\n"
            "def load_from_path(path, saved_config=True):\n"
            "    if saved_config:\n        return load_component(path, map_location=device)  # expect: DL301\n"
            "    return load_state_from_file(path, map_location=device)  # expect: DL301\n"
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
        ),
        # None on the GPU's arm, handed to a loader: at the call and where None is chosen (mmocr's init_detector)
        Example(
            "import torch\ndef load_checkpoint(model, filename, map_location=None):\n"
            "    model.load_state_dict(torch.load(filename, map_location=map_location))\n"
            "def init_detector(model, checkpoint, device='cuda:0'):\n"
            "    map_loc = 'cpu' if device == 'cpu' else None  # expect: DL301\n"
            "    load_checkpoint(model, checkpoint, map_location=map_loc)  # expect: DL301\n"
            "    return model.to(device)\n"
            "use_gpu = torch.cuda.device_count() > 0\n"
        ),
        # the same straight into torch.load, and None passed outright
        Example(
            "import torch\nuse_gpu = torch.cuda.is_available()\n"
            "location = 'cpu' if args.device == 'cpu' else None  # expect: DL301\n"
            "a = torch.load('a.pt', map_location=location)  # expect: DL301\n"
            "b = torch.load('b.pt', map_location=None)  # expect: DL301\n",
            "import torch\nuse_gpu = torch.cuda.is_available()\n"
            "location = 'cpu' if args.device == 'cpu' else None  # expect: DL301\n"
            "a = torch.load('a.pt', map_location=location)  # expect: DL301\n"
            "b = torch.load('b.pt', map_location=\"cpu\")  # expect: DL301\n",
        ),
        # mmcv's and mmengine's loaders default to map_location=None and end in torch.load
        Example(
            "import torch\nfrom mmcv.runner import load_checkpoint, _load_checkpoint\n"
            "from mmengine.runner import load_checkpoint as load_engine_checkpoint\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "load_checkpoint(model, 'det.pth')  # expect: DL301\n"
            "state = _load_checkpoint('det.pth', None)  # expect: DL301\n"
            "load_engine_checkpoint(model, filename='det.pth', strict=True)  # expect: DL301\n",
            "import torch\nfrom mmcv.runner import load_checkpoint, _load_checkpoint\n"
            "from mmengine.runner import load_checkpoint as load_engine_checkpoint\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "load_checkpoint(model, 'det.pth', map_location=device)  # expect: DL301\n"
            "state = _load_checkpoint('det.pth', device)  # expect: DL301\n"
            "load_engine_checkpoint(model, filename='det.pth', strict=True, map_location=device)  # expect: DL301\n",
        ),
        Example(
            "import torch as t\ndevice = t.device('cuda' if t.cuda.is_available() else 'cpu')\n"
            "state = t.load(path, weights_only=True)  # expect: DL301\n",
            "import torch as t\ndevice = t.device('cuda' if t.cuda.is_available() else 'cpu')\n"
            "state = t.load(path, weights_only=True, map_location=device)  # expect: DL301\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: loads without map_location, reported at the end once every save of the file is known
        self._loads: list[_PendingLoad] = []
        #: torch.save calls seen so far, in execution order
        #: (the path's text, the function it is in, its object is on the host)
        self._saves: list[tuple[str, Optional[cst.FunctionDef], bool]] = []
        #: loads given a map_location: (the path's text, the function they are in, the call)
        self._mapped: list[tuple[str, Optional[cst.FunctionDef], cst.Call]] = []
        #: ``m.state_dict()`` calls, by id: the module whose state they take
        self._state_of: dict[int, Value] = {}
        #: per function (None: the module body), the expression each local name was last bound to
        self._bound_to: dict[tuple[Optional[cst.FunctionDef], str], cst.BaseExpression] = {}
        #: saves of values not known to be on an accelerator: (the path's text, the call)
        self._unplaced_saves: list[tuple[str, cst.Call]] = []
        #: the file saves a model's state (``torch.save(m.state_dict(), p)``)
        self._saves_model_state = False
        #: every model state the file saves was moved to the host first (``model.cpu()``)
        self._model_state_saved_from_a_move = True
        #: the file pickles whole models (``torch.save(model, p)``, or an object of a class of
        #: the file that keeps one): what it loads back and returns is a model
        self._pickles_models = False
        #: whole modules saved with a device kept in a plain attribute: (save call, the attribute)
        self._pickled_devices: list[tuple[cst.Call, str]] = []
        #: loads that restore whole objects (`weights_only=False`)
        self._whole_loads: list[cst.Call] = []
        #: loads in a module's own method (not a static one): the caller places the module
        self._in_module_method: set[int] = set()
        #: loads whose map_location names CUDA itself: (the call, its map_location, the fix's location)
        self._cuda_mapped: list[tuple[cst.Call, cst.BaseExpression, str]] = []
        #: loads by another function than ``torch.load`` (``torch.jit.load``): the call's id -> its name
        self._loaded_with: dict[int, str] = {}

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in _SAVES or self._is_accelerate_save(event):
            self._record_save(event)
            return
        if event.method == "state_dict" and event.receiver is not None and event.receiver.kind == Kind.MODULE:
            self._state_of[id(event.node)] = event.receiver
            return
        through_loader = self.ctx.analyzer.checkpoint_load_call(event.qualname, event.callee, event.args)
        if through_loader is not None:
            unmapped, definition = through_loader
            if unmapped.loader.location_parameter is not None or (definition is not None and self.ctx.analyzer.foreign_home(definition) is not None):
                # (a wrapper of this file whose own torch.load has no map_location is reported there)
                self._consider_load(event, unmapped.path, unmapped.location, unmapped.none_on_arm, unmapped.loader)
            return
        if event.callee.kind == Kind.FUNCTION or event.qualname not in _LOADS:
            return
        node = event.node
        if event.qualname != "torch.load":
            self._loaded_with[id(node)] = event.qualname
        weights_only = keyword_arg(node, "weights_only")
        if weights_only is not None and isinstance(weights_only.value, cst.Name) and weights_only.value.value == "False":
            self._whole_loads.append(node)
        if any(arg.star for arg in node.args) or not node.args:
            return
        location_arg = keyword_arg(node, "map_location")
        if location_arg is None and len(positional_args(node)) >= 2:
            location_arg = positional_args(node)[1]
        if location_arg is None:
            self._consider_load(event, node.args[0], None, None, None)
        elif _maps_to_host(location_arg.value):
            self._mapped.append((self.ctx.source_of(node.args[0].value), self.ctx.current_function.node, node))
        elif self._maps_to_cuda_literal(location_arg.value, event):
            self._cuda_mapped.append((node, location_arg.value, self._location_in_scope(event)))
        elif is_none_literal(location_arg.value):
            self._consider_load(event, node.args[0], location_arg, None, None)
        else:
            arm = none_on_one_arm(_value_of(event, location_arg))
            if arm is not None and not self._is_own_parameter(location_arg.value):
                # (a parameter's value is its callers': the call of this function is the load to report)
                self._consider_load(event, node.args[0], location_arg, arm, None)

    def _is_own_parameter(self, node: cst.BaseExpression) -> bool:
        function = self.ctx.current_function.node
        if function is None or not isinstance(node, cst.Name):
            return False
        params = function.params
        return any(param.name.value == node.value for param in [*params.posonly_params, *params.params, *params.kwonly_params])

    def _consider_load(
        self,
        event: CallEvent,
        path_arg: cst.Arg,
        location_arg: Optional[cst.Arg],
        none_on_arm: Optional[NoneOnOneArm],
        loader: Optional[CheckpointLoader],
    ) -> None:
        """A load without a map_location - ``torch.load(p)``, ``torch.load(p, map_location=None)``,
        or a checkpoint loader's call that leaves its location ``None`` - unless it reads back
        what the same run wrote; kept to report in ``finish``, once every save is known."""
        node = event.node
        if _value_of(event, path_arg).role is Role.IN_PROCESS_BUFFER:
            return  # saved and loaded by the same process: map_location would change the result
        location = self._location_in_scope(event)
        function = self.ctx.current_function.node
        path = self._path_text(path_arg.value, function)
        if any(saved == path and _runs_within(function, home) for saved, home, _ in self._saves):
            # the same run has just written it (a test's round trip, a conversion script's temp
            # file, a helper nested in the training function that reloads its output): same
            # machine, same devices. A save *after* the load is a resume: not this.
            return
        if function is not None and _is_test_with_temporary_directory(function) and not isinstance(path_arg.value, cst.SimpleString):
            # a pytest test given a fresh temporary directory loads what it wrote there itself
            return
        self._loads.append(_PendingLoad(node, path, function, location, location_arg, none_on_arm, loader))
        context = self.ctx.current_function
        if function is not None and context.class_info is not None and context.class_info.is_module and not _is_static(function):
            self._in_module_method.add(id(node))

    def _location_in_scope(self, event: CallEvent) -> str:
        """``device`` when a variable of that name holds a ``torch.device`` here, else ``"cpu"``."""
        device = self.ctx.analyzer.lookup("device", event.state)
        return "device" if device.kind == Kind.DEVICE else '"cpu"'

    def _maps_to_cuda_literal(self, node: cst.BaseExpression, event: CallEvent) -> bool:
        """``"cuda:0"``, ``torch.device("cuda")``, ``{"cuda:1": "cuda:0"}`` or ``lambda storage,
        loc: storage.cuda()``: a map_location that names CUDA itself, whatever device the run
        chose. (``.cuda(args.gpu)`` and ``f"cuda:{rank}"`` take the GPU from configuration.)"""
        if isinstance(node, cst.Dict):
            return any(isinstance(element, cst.DictElement) and self._maps_to_cuda_literal(element.value, event) for element in node.elements)
        if isinstance(node, cst.Lambda):
            body = node.body
            return (
                isinstance(body, cst.Call)
                and isinstance(body.func, cst.Attribute)
                and body.func.attr.value == "cuda"
                and all(isinstance(arg.value, cst.Integer) for arg in body.args)
            )
        if isinstance(node, cst.Call) and node.args and self.ctx.analyzer.qualname_of(node.func, event.state) == "torch.device":
            node = node.args[0].value
        return is_cuda_literal(node)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            # the node, not its text: generating source for every assignment costs as much as
            # the rest of the analysis of them, and only paths of loads and saves are ever read
            self._bound_to[(self.ctx.current_function.node, target.value)] = value_node

    def _path_text(self, path: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> str:
        """How the source spells a path; for a local name, the expression it was last bound
        to (``checkpoint = os.path.join(out, "lora.pt")``), so that it matches the save's."""
        if isinstance(path, cst.Name):
            bound = self._bound_to.get((function, path.value))
            return path.value if bound is None else self.ctx.source_of(bound)
        return self.ctx.source_of(path)

    def _is_accelerate_save(self, event: CallEvent) -> bool:
        """``accelerator.save(obj, path)``: accelerate's ``torch.save`` (once per machine)."""
        receiver = event.receiver
        if event.method != "save" or receiver is None or receiver.origin is None or not isinstance(receiver.origin.node, cst.Call):
            return False
        return self.ctx.analyzer.qualname_of(receiver.origin.node.func, event.state) == "accelerate.Accelerator"

    def _other_branch_maps(self, load: cst.Call, path: str, function: Optional[cst.FunctionDef]) -> bool:
        """``if not gpu: torch.load(p, map_location="cpu") else: torch.load(p)``: the other branch
        of an ``if`` loads the same file onto the host, so that branch is the host's and the plain
        load runs on the GPU side. (A branch that maps to a GPU, ``map_location=f"cuda:{i}"``,
        says nothing about the other: that may be the CPU-only run.)"""
        mapped = [call for other_path, home, call in self._mapped if other_path == path and home is function]
        if not mapped:
            return False
        finder = _BranchesHolding(load, frozenset(id(call) for call in mapped))
        walk.visit(function if function is not None else self.ctx.module, finder)
        return finder.found

    def _picked_gpu(self, function: Optional[cst.FunctionDef]) -> Optional[str]:
        """A move to a GPU picked by a configured index in ``function`` (``.cuda(device_id)``,
        ``.cuda(args.gpu)``, ``.to(f"cuda:{i}")``), as written; None where there is none."""
        if function is None:
            return None
        found = _PICKED_GPU.search(self.ctx.analyzer.body_text(function))
        return found.group(0) if found is not None else None

    def _cache_filled_by_other_arm(self, load: cst.Call, path: str, function: Optional[cst.FunctionDef]) -> bool:
        """``if os.path.isfile(cache): v = torch.load(cache) else: v = compute(); torch.save(v,
        cache)``: a cache that this program fills itself, in the other arm of the ``if``, with
        values it never placed on an accelerator (pytorch/examples snli's word vectors)."""
        fills = frozenset(id(call) for saved, call in self._unplaced_saves if saved == path)
        if not fills:
            return False
        finder = _BranchesHolding(load, fills)
        walk.visit(function if function is not None else self.ctx.module, finder)
        return finder.found

    def _record_save(self, event: CallEvent) -> None:
        positional = [(arg, value) for arg, value in event.args if arg.keyword is None and not arg.star]
        target = keyword_arg(event.node, "f")
        if target is None and len(positional) >= 2:
            target = positional[1][0]
        if target is None:
            return
        saved = positional[0][1] if positional else None
        on_host = saved is not None and _on_host(saved)
        saved_node = positional[0][0].value if positional else None
        state_of = self._state_of.get(id(saved_node)) if saved_node is not None else None
        if state_of is not None:
            # ``torch.save(model.state_dict(), p)``: the model's tensors, where the model is
            on_host = state_of.device is not None and state_of.device.is_cpu
            self._saves_model_state = True
            # a model brought to the host to be saved (``model.cpu()``) says the program's
            # checkpoints are host state; one never placed (a fresh ``Net()``) says nothing of
            # the trained checkpoints it loads
            self._model_state_saved_from_a_move &= on_host and _brought_to_host(state_of)
        if saved is not None and _holds_a_model(saved):
            self._pickles_models = True
            self._check_pickled_device(event, saved)
        function = self.ctx.current_function.node
        path = self._path_text(target.value, function)
        self._saves.append((path, function, on_host))
        placed = state_of if state_of is not None else saved
        if placed is None or placed.device is None or not placed.device.may_be_accelerator:
            self._unplaced_saves.append((path, event.node))

    def _check_pickled_device(self, event: CallEvent, saved: Value) -> None:
        """``torch.save(model, path)`` of a module of the file whose class keeps the device it
        places with in a plain attribute (``self.device = device`` in ``__init__``, then
        ``x.to(self.device)``): pickling saves that attribute, and ``map_location`` on load moves
        the tensors only - the restored model goes on placing its inputs on the device it was
        trained on."""
        info = saved.info
        if saved.kind != Kind.MODULE or not isinstance(info, ClassInfo):
            return
        chain = (info, *info.ancestors())
        texts = [self.ctx.analyzer.body_text(method) for owner in chain for method in owner.methods.values()]
        for match in _PLACES_WITH_SELF_ATTRIBUTE.finditer("\n".join(texts)):
            attribute = match.group(1)
            stored = re.compile(rf"\bself\.{re.escape(attribute)}\s*=(?!=)")
            inits = [self.ctx.analyzer.body_text(owner.methods["__init__"]) for owner in chain if "__init__" in owner.methods]
            if not any(stored.search(text) for text in inits):
                continue
            others = [self.ctx.analyzer.body_text(method) for owner in chain for name, method in owner.methods.items() if name != "__init__"]
            if any(stored.search(text) for text in others):
                continue  # kept current (an overridden `to`, a `set_device`)
            self._pickled_devices.append((event.node, attribute))
            return

    def _report_pickled_devices(self) -> None:
        if not self._pickled_devices:
            return
        first, first_attribute = self._pickled_devices[0]
        for call, attribute in self._pickled_devices:
            self.ctx.report(
                call,
                f"this pickles the whole model, with the device it places its inputs on (`self.{attribute}`, a plain "
                "attribute): `map_location` on load moves its tensors, not that attribute, so the restored model "
                "goes on moving inputs to the device it was trained on; save `state_dict()` and load it into a model "
                "built for the machine that loads it",
            )
        for load in self._whole_loads:
            self.ctx.report(
                load,
                f"this restores a whole pickled model (`weights_only=False`), and the file saves one that keeps its device "
                f"in `self.{first_attribute}` (line {self.ctx.line(first)}): `map_location` moves its tensors, not that "
                "attribute; load a `state_dict()` into a model built for this machine",
            )

    def finish(self) -> None:
        self._report_pickled_devices()
        # a program that never asks which device it has runs where its checkpoints were made;
        # a model's own loading code does not know where it runs: its caller places the model
        chooses_device = self.ctx.analyzer.facts.chooses_device_at_run_time
        if chooses_device:
            self._report_cuda_mapped()
        # where each load's result goes: one walk per function that loads, run only when a
        # question below needs it (a file of many loads must not walk its scope once per load)
        flows: dict[int, _LoadFlows] = {}

        def flow_of(load: cst.Call, function: Optional[cst.FunctionDef]) -> _LoadFlows:
            found = flows.get(id(function))
            if found is None:
                scope: cst.CSTNode = function if function is not None else self.ctx.module
                loads = [load for load in self._loads if load.function is function]
                found = flows[id(function)] = _LoadFlows([load.call for load in loads], _restored_models(loads))
                walk.visit(scope, found)
            return found

        for load in self._loads:
            node, path, function = load.call, load.path, load.function
            # module-level code returns nothing: only a function hands its caller a model
            placed_by_caller = id(node) in self._in_module_method or (
                not chooses_device
                and function is not None
                and (
                    flow_of(node, function).loads_into_returned_module(node)
                    or self._pickles_models and flow_of(node, function).returns_load(node)
                )
            )
            if not chooses_device and not placed_by_caller:
                continue
            # (a download from a URL reads a published checkpoint, never one this program saved)
            downloaded = load.loader is not None and load.loader.downloads
            if not downloaded and any(saved == path and on_host for saved, _, on_host in self._saves):
                continue  # the file holds host tensors only: there is nothing to map
            if not downloaded and self._reads_back_own_host_state(lambda: bool(flow_of(node, function).module_loads.get(id(node)))):
                continue
            picked = None
            if self._other_branch_maps(node, path, function):
                # the other branch is the host's: this one runs on a GPU, fine unless it picks
                # one by index (`.cuda(device_id)`) - the bare load uses the saving GPU instead
                picked = self._picked_gpu(function)
                if picked is None:
                    continue
            if self._cache_filled_by_other_arm(node, path, function):
                continue
            where = (
                f"this branch runs on the GPU the code picks (`{picked}`), but the tensors land on the saving GPU "
                f"(GPU 0 for most checkpoints), and a machine without that GPU cannot load them"
                if picked is not None
                else "the model's own loading code cannot know where its caller will run it"
                if placed_by_caller and not chooses_device
                else "it fails on a machine without that GPU"
            )
            self._report_load(load, where)

    def _report_load(self, load: "_PendingLoad", where: str) -> None:
        """The finding at the load (or the loader's call), and for a location that a
        conditional expression makes None on one arm, one at that ``None`` too."""
        node, location, loader, location_arg, arm = load.call, load.location, load.loader, load.location_arg, load.none_on_arm
        restores = "tensors come back onto the device they were saved from"
        fix = None
        if arm is not None:
            what = f"`{self.ctx.source_of(location_arg.value)}`" if location_arg is not None else "the location"
            none_where = f"None where `{self.ctx.source_of(arm.choice.test)}` {'holds' if arm.none_when_test_holds else 'does not hold'}"
            if loader is None:
                taker, handed = f"`{self._loaded_with.get(id(node), 'torch.load')}`", "as `map_location`"
            else:
                parameter = loader.location_parameter
                taker = f"`{_loader_name(loader)}()`"
                handed = f"as `{parameter}`" + ("" if parameter == "map_location" else " (its `torch.load`'s `map_location`)")
            # chosen in the call itself (`_load(p, None if gpu else "cpu")`): one finding says it
            inline = location_arg is not None and location_arg.value is arm.choice
            message = (
                f"{taker} is given {what} {handed}, and that is {none_where}{'' if inline else f' (line {self.ctx.line(arm.none_arm)})'}: "
                f"there {restores}; {where}; map to `{location}` on every path"
            )
            if not inline:
                self.ctx.report(
                    arm.none_arm,
                    f"{what} is {none_where}, and {taker} takes it {handed} (line {self.ctx.line(node)}): on that branch - a run on a GPU - "
                    f"{restores}, not onto the device the code chose; choose `{location}` here as well (and move the model after loading)",
                )
        elif loader is None and location_arg is None:
            with_location = with_keyword_argument(node, "map_location", location).with_changes(lpar=(), rpar=())
            fix = FixSpec(f"Add `map_location={location}`", (NodeEdit(node, "replace", self.ctx.module.code_for_node(with_location)),))
            message = f"`{self._loaded_with.get(id(node), 'torch.load')}` without `map_location` restores tensors onto the device they were saved from: {where}; pass `map_location={location}`"
        elif loader is None:
            fix = FixSpec(f"Map to `{location}`", (NodeEdit(location_arg.value, "replace", location),))
            message = f"`{self._loaded_with.get(id(node), 'torch.load')}` with `map_location=None` restores tensors onto the device they were saved from: {where}; pass `map_location={location}`"
        elif loader.location_parameter is None:
            load_line = f" (line {self.ctx.line(loader.load)})" if loader.load is not None else ""
            message = (
                f"`{loader.name}()` loads with `{loader.loads_with}` without `map_location`{load_line}: {restores}; {where}; "
                f"give `{loader.name}()` a `map_location` (e.g. `\"cpu\"`) to pass on"
            )
        else:
            parameter = loader.location_parameter
            load_line = f" (line {self.ctx.line(loader.load)})" if loader.load is not None else ""
            if location_arg is None:
                with_location = with_keyword_argument(node, parameter, location).with_changes(lpar=(), rpar=())
                fix = FixSpec(f"Add `{parameter}={location}`", (NodeEdit(node, "replace", self.ctx.module.code_for_node(with_location)),))
                given = f"leaves `{parameter}` at its default, None"
            else:
                fix = FixSpec(f"Map to `{location}`", (NodeEdit(location_arg.value, "replace", location),))
                given = f"passes `{parameter}=None`"
            message = (
                f"this call of `{_loader_name(loader)}()` {given}, which it hands to `{loader.loads_with}` as `map_location`{load_line}: "
                f"{restores}; {where}; pass `{parameter}={location}`"
            )
        self.ctx.report(node, message, fix=fix)

    def _report_cuda_mapped(self) -> None:
        """Loads mapped to a CUDA literal in a program that also runs without a GPU, on a path
        not taken only with one (``if torch.cuda.is_available():``, ``@require_torch_gpu``, an
        earlier ``if not use_cuda: raise``) in a file not written for CUDA alone."""
        if not self._cuda_mapped or CUDA_ONLY_FILE.search(self.ctx.source):
            return
        paths = GpuOnlyPaths(frozenset(id(call) for call, _, _ in self._cuda_mapped))
        walk.visit(self.ctx.module, paths)
        for call, mapped_to, location in self._cuda_mapped:
            if id(call) in paths.gated:
                continue
            fix = FixSpec(
                f"Map to `{location}`",
                (NodeEdit(mapped_to, "replace", location),),
                # the run's own device keeps a GPU run as it was; the host may not suit code that
                # uses the loaded tensors as they are
                safe=location == "device",
            )
            self.ctx.report(
                call,
                f"`torch.load` maps the checkpoint to `{self.ctx.source_of(mapped_to)}` in a program that also runs without a GPU: "
                f"it fails there (\"Attempting to deserialize object on a CUDA device\"); pass `map_location={location}`",
                fix=fix,
            )

    def _reads_back_own_host_state(self, restores_model_state: Callable[[], bool]) -> bool:
        """The load restores a model's state (``model.load_state_dict(state)``), and the file
        saves model state only from the host, moved there to be saved (``model.cpu()`` then
        ``torch.save(model.state_dict(), p)``), and nothing else: the program reads back the
        checkpoints it makes, which hold nothing to map (pytorch/examples fast_neural_style)."""
        return (
            self._saves_model_state
            and self._model_state_saved_from_a_move
            and all(on_host for _, _, on_host in self._saves)
            and restores_model_state()
        )

@dataclass(frozen=True)
class _PendingLoad:
    """A load without a map_location, to report once every save of the file is known."""

    #: ``torch.load(...)``, or the call of a checkpoint loader
    call: cst.Call
    #: the path's text (see LoadWithoutMapLocation._path_text)
    path: str
    function: Optional[cst.FunctionDef]
    #: what the fix maps to: ``device`` or ``"cpu"``
    location: str
    #: the argument given as the location where it is None (a literal, or on one arm)
    location_arg: Optional[cst.Arg] = None
    none_on_arm: Optional[NoneOnOneArm] = None
    #: the checkpoint loader called (None: ``torch.load`` itself)
    loader: Optional[CheckpointLoader] = None


def _value_of(event: CallEvent, arg: cst.Arg) -> Value:
    for given, value in event.args:
        if given is arg:
            return value
    return Value(Kind.UNKNOWN)


def _loader_name(loader: CheckpointLoader) -> str:
    """``_load_checkpoint``; a library's by its own name, ``load_checkpoint`` of mmcv.runner."""
    return loader.name.rsplit(".", 1)[-1]


def _maps_to_host(node: cst.BaseExpression) -> bool:
    """``"cpu"``, ``torch.device("cpu")``, ``lambda storage, loc: storage`` (each storage stays
    where it was deserialised: the host)."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value == "cpu"
    if isinstance(node, cst.Call) and len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString):
        return node.args[0].value.evaluated_value == "cpu"
    if isinstance(node, cst.Lambda) and node.params.params and isinstance(node.body, cst.Name):
        return node.body.value == node.params.params[0].name.value
    return False


#: loads that restore each tensor onto the device it was saved from unless given a map_location
#: (``torch.jit.load``: "first loaded onto CPU, and then are moved to the devices they were saved from")
_LOADS = frozenset({"torch.load", "torch.jit.load"})
#: ... and the saves they read back
_SAVES = frozenset({"torch.save", "torch.jit.save"})
#: a move to a GPU picked by an index the code is given (not a literal, not the current GPU)
_PICKED_GPU = re.compile(r"""\.cuda\(\s*(?:device\s*=\s*)?[A-Za-z_][\w.]*\s*\)|\.to\(\s*f["']cuda:\{[^}]+\}["']\s*\)""")


class _BranchesHolding(cst.CSTVisitor):
    """Is there an ``if`` one branch of which holds ``load`` and the other one of ``others``?"""

    def __init__(self, load: cst.Call, others: frozenset[int]) -> None:
        self.load = load
        self.others = others
        self.found = False

    def visit_If(self, node: cst.If) -> Optional[bool]:
        if self.found or node.orelse is None:
            return not self.found
        body, orelse = _calls_in(node.body), _calls_in(node.orelse)
        if (id(self.load) in body and orelse & self.others) or (id(self.load) in orelse and body & self.others):
            self.found = True
            return False
        return True


def _calls_in(node: cst.CSTNode) -> set[int]:
    """The ids of the calls under ``node``."""
    collector = _CallIds()
    walk.visit(node, collector)
    return collector.ids


class _CallIds(cst.CSTVisitor):
    def __init__(self) -> None:
        self.ids: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self.ids.add(id(node))


#: pytest fixtures that hand a test a fresh, empty directory of its own
_TEMPORARY_DIRECTORY_FIXTURES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory"})


def _is_test_with_temporary_directory(function: cst.FunctionDef) -> bool:
    """``def test_resume(tmp_path): ...``: a pytest test whose files live in its own temp dir."""
    if not function.name.value.startswith("test"):
        return False
    params = function.params
    return any(param.name.value in _TEMPORARY_DIRECTORY_FIXTURES for param in [*params.posonly_params, *params.params, *params.kwonly_params])


def _on_host(value: Value) -> bool:
    """Only host tensors (or containers of them): a file of these loads anywhere."""
    if value.kind == Kind.TENSOR:
        return value.device is not None and value.device.is_cpu
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and value.info:
        return all(_on_host(item) for item in value.info)
    return False


def _is_static(function: cst.FunctionDef) -> bool:
    """A ``@staticmethod``: it has no ``self``, no module whose device its caller chose."""
    return any(isinstance(decorator.decorator, cst.Name) and decorator.decorator.value == "staticmethod" for decorator in function.decorators)


def _runs_within(function: Optional[cst.FunctionDef], home: Optional[cst.FunctionDef]) -> bool:
    """``function`` is ``home`` or a function nested in it (a helper the training function
    defines to reload its own output): it runs during ``home``'s run."""
    if function is home:
        return True
    if function is None or home is None:
        return False
    finder = _NodeFinder(function)
    walk.visit(home.body, finder)
    return finder.found


class _NodeFinder(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.target:
            self.found = True
        return not self.found


#: module methods that return the module itself
_RETURNS_MODULE_ITSELF = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double", "requires_grad_"})


def _restored_models(loads: list[_PendingLoad]) -> dict[int, str]:
    """Per call of a checkpoint loader that restores the model it is handed
    (``load_checkpoint(model, path)``): the name of the model handed to it."""
    restored: dict[int, str] = {}
    for load in loads:
        if load.loader is None:
            continue
        arg = restored_argument(load.call, load.loader)
        if arg is not None and isinstance(arg.value, cst.Name):
            restored[id(load.call)] = arg.value.value
    return restored


class _LoadFlows(cst.CSTVisitor):
    """Where what each of a function's loads returns goes, in one walk of the function: the
    locals bound to it, the ``m.load_state_dict(...)`` calls handed it (or an entry of it,
    ``loaded["model"]``), and the names the function returns."""

    def __init__(self, loads: list[cst.Call], restored: dict[int, str]) -> None:
        self.loads = {id(load) for load in loads}
        #: local name -> the load whose result it holds (the last binding)
        self.bound: dict[str, int] = {}
        #: load -> the ``load_state_dict`` calls handed its result
        self.module_loads: dict[int, list[cst.Call]] = {}
        #: load -> the names of the modules whose ``load_state_dict`` was handed its result, or
        #: that a checkpoint loader was handed to restore (``load_checkpoint(model, path)``)
        self.receivers: dict[int, set[str]] = {load: {name} for load, name in restored.items()}
        self.returned: set[str] = set()
        #: loads returned as they are (``return torch.load(p)``)
        self.returned_loads: set[int] = set()

    def _carried(self, node: cst.BaseExpression) -> Optional[int]:
        """The load whose result ``node`` is or is made from, if any: the load itself, an entry
        of it (``loaded["model"]``), or any expression that reads a name bound to it
        (``m.state_dict() if isinstance(m, nn.Module) else m``, a dict of its renamed keys)."""
        while isinstance(node, cst.Subscript):
            node = node.value
        if id(node) in self.loads:
            return id(node)
        if isinstance(node, cst.Name):
            return self.bound.get(node.value)
        if not self.bound and not self.loads:
            return None
        inner = _LoadsAndNames(self.loads)
        walk.visit(node, inner)
        if inner.load is not None:
            return inner.load
        return next((self.bound[name] for name in inner.names if name in self.bound), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        load = self._carried(node.value)
        if load is None:
            return
        for target in node.targets:
            # `renamed[key] = value` fills a dict with what the load holds
            base = target.target
            while isinstance(base, cst.Subscript):
                base = base.value
            for name in bound_names(base):
                self.bound[name] = load

    def visit_For(self, node: cst.For) -> None:
        # `for key, value in loaded["state_dict"].items():` binds parts of it
        load = self._carried(node.iter)
        if load is not None:
            for name in bound_names(node.target):
                self.bound[name] = load

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "load_state_dict":
            return
        for arg in node.args:
            load = self._carried(arg.value)
            if load is None:
                continue
            self.module_loads.setdefault(load, []).append(node)
            if isinstance(func.value, cst.Name):
                self.receivers.setdefault(load, set()).add(func.value.value)

    def visit_Return(self, node: cst.Return) -> None:
        returned = node.value
        # `return model.eval()`, `return model.to(device)`: the module itself
        while isinstance(returned, cst.Call) and isinstance(returned.func, cst.Attribute) and returned.func.attr.value in _RETURNS_MODULE_ITSELF:
            returned = returned.func.value
        if isinstance(returned, cst.Name):
            self.returned.add(returned.value)
        elif node.value is not None and id(node.value) in self.loads:
            self.returned_loads.add(id(node.value))

    def returns_load(self, load: cst.Call) -> bool:
        """The function returns what the load gave (``m = torch.load(p)``, then ``return m``)."""
        return id(load) in self.returned_loads or any(self.bound.get(name) == id(load) for name in self.returned)

    def loads_into_returned_module(self, load: cst.Call) -> bool:
        """``imagen.load_state_dict(loaded["model"])`` then ``return imagen``: the function
        hands its caller a restored model, to place where the caller runs."""
        return bool(self.receivers.get(id(load), set()) & self.returned)


class _LoadsAndNames(cst.CSTVisitor):
    """In an expression: the first of ``loads`` it calls, and the plain names it reads."""

    def __init__(self, loads: set[int]) -> None:
        self.loads = loads
        self.load: Optional[int] = None
        self.names: list[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.load is None and id(node) in self.loads:
            self.load = id(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk.visit(node.value, self)  # `m.state_dict` reads `m`, not a name `state_dict`
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk.visit(node.value, self)  # a keyword is no name read
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _brought_to_host(module: Value) -> bool:
    """Was the module's host placement a move (``model.cpu()``, ``model.to("cpu")``), not where
    a fresh module starts?"""
    origin = module.origin
    if origin is None or not isinstance(origin.node, cst.Call):
        return False
    func = origin.node.func
    return isinstance(func, cst.Attribute) and func.attr.value in ("cpu", "to")


#: a method places with a plain attribute of its own: `x.to(self.device)`, `device=self.device`, `.cuda(self.gpu)`
_PLACES_WITH_SELF_ATTRIBUTE = re.compile(r"(?:\.to\(\s*|\bdevice\s*=\s*|\.cuda\(\s*)self\.(\w+)\s*[,)]")


def _holds_a_model(saved: Value) -> bool:
    """A module, or an object of a class of the file that keeps one in an attribute."""
    if saved.kind == Kind.MODULE:
        return True
    info = saved.info
    return isinstance(info, ClassInfo) and any(value.kind == Kind.MODULE for value in info.attributes.values())
