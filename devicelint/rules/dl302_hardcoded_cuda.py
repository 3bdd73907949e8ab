from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

import libcst as cst

from devicelint.analysis import helpers, walk
from devicelint.analysis import torch_api as api
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import OwnScopeVisitor, dotted_name, has_decorator, keyword_arg, parameter_names, positional_args, string_value
from devicelint.analysis.values import PLACED_KINDS, Kind, Value, container_items, is_none_literal
from devicelint.findings import Severity
from devicelint.rules._cuda_code import ASKS_WHERE_IT_RUNS, CUDA_ONLY_FILE, NCCL_NAMED, device_argument, device_spelling, is_cuda_literal, is_cuda_literal_label
from devicelint.rules._cpu_choice import CpuChoices
from devicelint.rules._flag_paths import BranchConditions, PlacementGuards, asks_cuda_available
from devicelint.rules._gpu_only_paths import GpuOnlyPaths
from devicelint.rules._thread_devices import ThreadDevices
from devicelint.rules.base import Example, Rule

#: an ``if`` test about the size of the data (see _tests_data)
_DATA_TEST = re.compile(r"\blen\s*\(|\.shape\b|\.numel\s*\(|\.size\s*\(|[!=]=\s*(\[\s*\]|\(\s*\)|\{\s*\})|\bis\s+(not\s+)?None\b")
#: the CPU named as a device (a program's choice of it is looked for only where this is written)
_CPU_LITERAL = re.compile(r"""['"]cpu['"]""")
#: a literal GPU index above 0 (`cuda:1`)
_NONZERO_GPU_INDEX = re.compile(r"cuda:[1-9]\d*")
#: code that counts the GPUs (a guard for a choice of a second one)
_COUNTS_GPUS = re.compile(r"device_count\s*\(")
#: a program that plans for several GPUs: it counts them, names several, spreads work over them
#: or runs one process per GPU (model-parallel and multi-GPU code chooses GPU 1 on purpose)
_PLANS_SEVERAL_GPUS = re.compile(
    r"device_count\s*\(|min_cuda_gpus|DataParallel|device_ids|local_rank|LOCAL_RANK|\brpc\b|torch\.distributed|set_device\s*\("
)
#: NCCL named as a process group's backend
#: a name handed to a move or a factory's `device=` (formatted with the escaped name)
_PLACED_BY_NAME = r"(?:\.to\(|\.cuda\(|device\s*=)\s*{}\s*[,)]"
#: a parameter (formatted in, escaped) that a body places tensors on: `.to(d)`,
#: `.to(device=d)`, `device=d`
_PLACED_BY_PARAMETER = r"(?:\.to\(\s*(?:device\s*=\s*)?{0}\s*[,)]|\bdevice\s*=\s*{0}\s*[,)])"
#: code that sets the current GPU (to a tensor's, or the process's): a bare `.cuda()` there is
#: no longer "GPU 0"
_PINS_CURRENT_GPU = re.compile(r"cuda\.device\s*\(|cuda\.device_of\s*\(|set_device\s*\(")
#: a program that places work on a GPU it picks (not just "a GPU, if there is one"): by count,
#: by index, by the local rank, or from configuration
_OTHER_GPU_PLACEMENT = re.compile(r"device_count\s*\(|cuda:[1-9]|set_device\s*\(|LOCAL_RANK|local_rank|\.device\s*=\s*torch\.device\(\s*['\"]cuda:")
#: ... or whether the machine has a GPU
_ASKS_AVAILABILITY = re.compile(r"is_available\s*\(|device_count\s*\(")
#: either: it asks where it runs before it places anything, a CUDA-only path on purpose
_CHECKS_DEVICE = re.compile(f"{ASKS_WHERE_IT_RUNS.pattern}|{_ASKS_AVAILABILITY.pattern}")


class HardcodedCuda(Rule):
    """
    ## What it does
    Flags a hard-coded CUDA device - `.cuda()`, `.to("cuda")`, `device="cuda:0"`,
    `torch.device("cuda")` handed to a factory or a move, a legacy typed CUDA constructor
    (`torch.cuda.FloatTensor(n)`, reported here rather than as DL306) - in code whose other tensors are
    placed by its caller: a method of an `nn.Module` (its parameters, buffers and inputs are on
    the model's device, wherever the model was put), a method of a `torch.optim.Optimizer`
    subclass (its `step` works on the model's parameters, wherever they are), or a function or
    method that works on tensors it is handed (unless its calls hand it tensors they put on a
    CUDA literal themselves). A function that asks where it runs first (`x.is_cuda`,
    `torch.cuda.is_available()`, `x.device.type == "cuda"`) or places the tensor on one branch
    only (`if self.use_cuda: mask = mask.cuda()`, the program's own choice; a branch taken for
    the data - its size, emptiness or `is None` - is not a choice) is left alone, and so
    is a file written for CUDA alone (streams, CUDA graphs, CUDA extensions, Triton or CuPy
    kernels). So is a bare `.cuda()` in a module's method when the file runs the model itself
    and places everything - model and data - with bare `.cuda()` and nothing else (no device
    object or string, no `.to(`, no index, no availability test, no parallel wrapper): its
    inputs are on the current GPU too. `.cuda(args.gpu)` takes its device from configuration and is not flagged;
    `.cuda(x.get_device())` (or `torch.device("cuda", x.get_device())`) follows `x` only while
    `x` is on a GPU - `get_device()` is -1 for a CPU tensor - so it is flagged as failing on a
    CPU run, unless the function asks where `x` is first or the path is one a test about
    placement selects (`if get_device_of(x) >= 0:`, a flag that elsewhere chooses a device; not
    `if sampling:`, a path a CPU run takes too). A CUDA device bound to a name in the function
    itself (`dev = torch.device("cuda")`, then `torch.arange(n, device=dev)`) is the same
    hard-coded device, reported where it is bound. A function of the file that returns
    its one argument's `get_device()`, maybe -1 on another path (allennlp's `get_device_of(t)`:
    `return t.get_device() if t.is_cuda else -1`), is the same index: `.cuda(get_device_of(x))`.
    A path taken because a tensor is on a GPU (`if x.is_cuda:`, `x.device.type == "cuda"`)
    is a CUDA path on purpose, but hard-coded CUDA there is the current GPU, not `x`'s: it is
    flagged unless the code sets the current GPU (`with torch.cuda.device(x.device):`,
    `torch.cuda.set_device`); with `x` on a second GPU the two meet on different devices.
    So is hard-coded CUDA in a function that places its other tensors on a device it is
    handed (`.to(device=cuda)` with `cuda` a parameter): the bare `.cuda()` ignores it.
    So is a device chosen by name on that path (`device = "cuda"` under `if x.is_cuda:`, or
    `"cuda" if x.is_cuda else "cpu"`, with `x` a parameter) that the function places with or
    returns to callers of the file that place with it, instead of `x.device`.

    In a program that sets up an NCCL process group (one process per GPU) and never makes the
    rank's GPU the current one (no `torch.cuda.set_device`, `with torch.cuda.device(...)` or
    `CUDA_VISIBLE_DEVICES` in its code), it flags the first hard-coded CUDA placement of a
    function after it called `init_process_group` (itself or through a function of the file):
    `"cuda"` is GPU 0 in every process, so every rank works on GPU 0.

    In a program that chooses the CPU when there is no GPU - a conditional expression or an
    `if` with a CUDA device on one side and the CPU on the other (`torch.device("cuda" if
    torch.cuda.is_available() else "cpu")`, `torch.device(f"cuda:{ids[0]}") if ids else
    torch.device("cpu")`) - it also flags hard-coded CUDA anywhere else in the file: a
    trainer's `batch.cuda()`, a loader's `model.cuda()`. The program promises a run without a
    GPU, and that run fails there. Left alone are the paths that run only with a GPU: in a
    branch of an `if` or conditional expression (a test of a flag or the device, not of the
    data), in a function that asks where it runs, or whose every call in the file is on such
    a path, in a function or class whose decorators ask for a GPU (`@require_torch_gpu`,
    `skipIf(not torch.cuda.is_available())`), or after a guard of its scope (`if not
    use_cuda: raise ...`). Scripts that hard-code CUDA and never choose are DL314's (off by
    default).

    In the same code placed by its caller, it also flags a call of a function or method of
    the file that leaves a parameter defaulting to CUDA (`def one_hot(x, n, device="cuda")`),
    which the callee uses to place something, at that default: the callee's hard-coded device
    becomes the caller's. A parameter defaulting to None that the callee replaces with CUDA
    first thing (`if device is None: device = torch.device("cuda")`) is the same default,
    reported at that replacement. And it flags CUDA chosen by whether the machine
    has a GPU rather than by where the inputs are - `device="cuda" if
    torch.cuda.is_available() else "cpu"`, or a `.cuda()` in the branch of `if
    torch.cuda.is_available():` - unless the rest of the program places its work by that same
    test and never on a GPU it picks (by count, index, local rank or configuration): then the
    two agree on every machine. A model run on the CPU of a GPU machine, or on a second GPU,
    fails there. The same choice bound to a name (`device = torch.device("cuda" if
    torch.cuda.is_available() else "cpu")`) in a function handed a model or tensors, which places
    with it (a move there, or a function of the file that places its parameter), is flagged in a
    program that puts work on GPUs it picks elsewhere (by count, index or local rank): the
    caller's model on another GPU is moved to GPU 0 (torchinfo's `summary`). A plain object
    whose method stores a tensor moved to CUDA in the branch of `if torch.cuda.is_available():`
    on itself (`self.mask = self.mask.cuda()`), which another of its methods combines with a
    tensor it is handed (`output * self.mask` in `__call__`), counts as code its caller places.

    Anywhere in a file, it also flags a GPU index above 0 written as the device to use
    whenever CUDA is available, and used to place something (a move, a `device=`):
    `torch.device("cuda:1" if torch.cuda.is_available() else "cpu")`, or an `if
    torch.cuda.is_available():` branch that sets `"cuda:1"`. The test promises a run on any
    machine, but a machine with one GPU has no GPU 1. Code that counts the GPUs around the
    choice is not flagged: a test of `torch.cuda.device_count()` in the same expression, an
    enclosing `if`, the enclosing function, or a decorator of it or of its class (a test
    skipped below two GPUs).
    In a program that asks whether CUDA is available (it is meant to run on machines it does
    not know) and plans for no second GPU - it never counts them, names `device_ids`, uses
    DataParallel, RPC, `torch.distributed` or a local rank - a GPU index above 0 is flagged
    wherever it places something, not only in the branch of the test: `.to("cuda:1")`,
    `device = torch.device("cuda:1")` handed to a move, a parameter defaulting to it
    (`def train(..., device=torch.device("cuda:1"))`) that the code places with.
    In a program that selects its GPU with `torch.cuda.set_device(i)`, an index-less
    `torch.device("cuda")` (or `"cuda"`) that a function run in another thread places with
    (`executor.submit(f, ...)`, `executor.map(f, ...)` of a `ThreadPoolExecutor`,
    `threading.Thread(target=f)`) is flagged where the device is made: the current GPU belongs
    to the calling thread, so in the worker it is GPU 0, not the selected one (a prefetch thread
    moving batches to GPU 0 while the model is on GPU 1).

    ## Why is this bad?
    The layer or loss works only where its author ran it. On a CPU run the hard-coded tensor
    meets CPU inputs and the call fails ("Expected all tensors to be on the same device");
    on a machine with several GPUs `"cuda"` and `"cuda:0"` mean GPU 0, so every replica or rank
    placed on another GPU fails the same way, and the code cannot run on other accelerators.

    The guarded index fails there at the first move: "CUDA error: invalid device ordinal".

    ## Example
    ```python
    class SIGReg(nn.Module):
        def forward(self, proj):
            A = torch.randn(proj.size(-1), 256, device="cuda")
            return (proj @ A).mean()
    ```

    ## Use instead
    ```python
    class SIGReg(nn.Module):
        def forward(self, proj):
            A = torch.randn(proj.size(-1), 256, device=proj.device)
            return (proj @ A).mean()
    ```
    """

    code = "DL302"
    name = "hardcoded-cuda"
    severity = Severity.WARNING
    summary = "`.cuda()` / `device=\"cuda\"` hard-coded (or chosen because a GPU exists) in a module's methods or a function of tensor arguments, which otherwise run where their inputs are, or in a program that chooses the CPU without a GPU; or `\"cuda:1\"` chosen whenever CUDA is available, or hard-coded in a program that asks for a GPU and never counts them."
    valid = (
        # ... the same, with the device made current for the bare moves
        "import torch\ndef train_step(net, batch, device):\n    torch.cuda.set_device(device)\n"
        "    points = batch['points'].to(device=device)\n    joints = batch['joints'].cuda()\n    return net(points, joints)\n",
        # the rank's GPU made current first; a process group set up by another function
        "import os\nimport torch\nimport torch.distributed as dist\ndef main(net):\n    dist.init_process_group('nccl')\n"
        "    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n    return net.cuda()\n",
        "import torch\nimport torch.distributed as dist\ndef setup():\n    dist.init_process_group('nccl')\n"
        "def evaluate(net, x):\n    if torch.cuda.is_available():\n        net, x = net.cuda(), x.cuda()\n    return net(x)\n",
        # a device type chosen from the input for autocast (no index wanted), a device made
        # current first, a device chosen from a tensor the function does not take
        "import torch\ndef run(model, x):\n    kind = 'cuda' if x.is_cuda else 'cpu'\n"
        "    with torch.autocast(device_type=kind):\n        return model(x)\n"
        "def pinned(x):\n    device = 'cuda' if x.is_cuda else 'cpu'\n    with torch.cuda.device(x.device):\n"
        "        return torch.zeros(3, device=device)\n"
        "def helper(n):\n    device = 'cuda' if WEIGHTS.is_cuda else 'cpu'\n    return torch.zeros(n, device=device)\n",
        # a helper of a CUDA script moving the host frames it is handed (dino's video
        # segmentation evaluation): the script's own placement, DL314's concern
        "import torch\ndef extract(model, frame):\n    return model(frame.unsqueeze(0).cuda())\n"
        "model = torch.nn.Linear(4, 2).cuda()\nout = extract(model, torch.rand(4))\n",
        # follows its input
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.ones(3, device=x.device)\n",
        # a CUDA-only path chosen on purpose, on the input's own GPU
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if x.is_cuda:\n            with torch.cuda.device(x.device):\n                return x + torch.ones(3, device='cuda')\n        return x + 1\n",
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if x.is_cuda:\n            return x + torch.ones(3, device=x.device)\n        return x + 1\n",
        # the branch taken when the tensor is on the host moves it: a CUDA script's own placement
        "import torch\ndef to_gpu(x):\n    if not x.is_cuda:\n        x = x.cuda()\n    return x\n",
        # the module's constructor is set-up code, not code placed by a caller
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lin = nn.Linear(2, 2).cuda()\n",
        # a free function of no tensor argument: where it runs is its own choice (DL314 checks scripts)
        "import torch\ndef make():\n    return torch.zeros(3, device='cuda')\n",
        # a CUDA path the program chose (a flag or configuration): the old way, DL314's business
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(3)\n        if self.use_cuda:\n            mask = mask.cuda()\n        return x * mask\n",
        # a GPU index the configuration chose
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x.cuda(self.gpu_ids[0])\n",
        # a numpy array indexed like one (numpy's argmax): where the function runs is its own choice
        "import torch\nclass Boxes:\n    def best(self, scores):\n        top = scores[:, 0]\n"
        "        return torch.tensor([top.argmax()], device='cuda')\n",
        # a second GPU only where there is one
        "import torch\ndevice = torch.device('cuda:1' if torch.cuda.device_count() > 1 else 'cuda' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\ndevice = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nif torch.cuda.device_count() > 1:\n    device = torch.device('cuda:1' if torch.cuda.is_available() else 'cpu')\n"
        "    net = torch.nn.Linear(4, 2).to(device)\n",
        # a test skipped below two GPUs; a device only compared, never used to place anything
        "import torch\nimport unittest\n@unittest.skipIf(torch.cuda.device_count() < 2, 'two GPUs')\nclass T(unittest.TestCase):\n"
        "    def test_second(self):\n        net = torch.nn.Linear(4, 2).to('cuda:1' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nexpected = torch.device('cuda:1' if torch.cuda.is_available() else 'cpu')\nassert parse_device('1') == expected\n",
        # the caller hands the device; or the default is left by code that is no tensor function
        "import torch\ndef one_hot(x, n, device='cuda'):\n    return torch.zeros(len(x), n, device=device).scatter_(1, x.view(-1, 1), 1.0)\n"
        "def mix(target, n):\n    return one_hot(target, n, device=target.device)\n"
        "def main():\n    return one_hot(torch.tensor([1, 2]).cuda(), 4)\n",
        # a program that chooses the CPU without a GPU, whose CUDA moves are on the GPU's path:
        # under a test of a flag, in a helper called only there, or in a test skipped without a GPU
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def train(model, loader, use_cuda):\n    for x in loader:\n        if use_cuda:\n            x = x.cuda()\n        model(x)\n",
        "import torch\ndef pin(model):\n    model.cuda()\n    return model\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel = torch.nn.Linear(4, 2)\n"
        "model = pin(model) if device == 'cuda' else model\n",
        "import torch\nimport unittest\nDEVICE = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')\n"
        "class T(unittest.TestCase):\n    @unittest.skipIf(not torch.cuda.is_available(), 'needs a GPU')\n"
        "    def test_gpu(self):\n        net = torch.nn.Linear(4, 2).cuda()\n",
        # the program places everything by the same test: on every machine the forward's choice
        # agrees with where the model is (PyTorchZeroToAll's char-RNN after its fix)
        "import torch\nfrom torch import nn\nclass RNN(nn.Module):\n    def forward(self, x):\n        h = torch.zeros(1, x.size(0), 8)\n"
        "        if torch.cuda.is_available():\n            h = h.cuda()\n        return self.rnn(x, h)\n"
        "model = RNN()\nif torch.cuda.is_available():\n    model.cuda()\n",
        # the choice is another function's, which never runs the CUDA-only benchmark
        "import torch\ndef train_portable(loader):\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    model = torch.nn.Linear(4, 2).to(device)\n"
        "def benchmark_gpu(loader):\n    model = torch.nn.Linear(4, 2).cuda()\n    for x in loader:\n        model(x.cuda())\n",
        # a script that never chooses the CPU: DL314's (off by default)
        "import torch\nmodel = torch.nn.Linear(4, 2).cuda()\nx = torch.rand(3, 4).cuda()\nprint(model(x))\n",
        # a comparison, not a placement
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        assert x.device == torch.device('cuda')\n        return x\n",
    )
    invalid = (
        # a training step handed its device that moves some batch entries with a bare .cuda()
        # (SCANimate on cuda:1: "cuda:1 and cuda:0")
        Example(
            "import torch\ndef train_step(net, batch, device):\n    points = batch['points'].to(device=device)\n"
            "    joints = batch['joints'].cuda()  # expect: DL302\n    return net(points, joints)\n"
        ),
        # a legacy typed CUDA constructor is made on the current GPU (pytorch-segmentation's
        # make_one_hot: "arguments are located on different GPUs"); DL306 yields to this finding
        Example(
            "import torch\ndef make_one_hot(labels, classes):\n"
            "    one_hot = torch.cuda.FloatTensor(labels.size(0), classes).zero_()  # expect: DL302\n"
            "    return one_hot.scatter_(1, labels.unsqueeze(1), 1)\n"
        ),
        # one process per GPU under NCCL, and the current GPU never set: every rank on GPU 0
        Example(
            "import torch\nimport torch.distributed as dist\ndef setup():\n    dist.init_process_group('nccl')\n"
            "    return dist.get_rank()\ndef main(net, batches):\n    rank = setup()\n    net = net.cuda()  # expect: DL302\n"
            "    for x in batches:\n        net(x.cuda())\n"
        ),
        # a device chosen by name because the input is on a GPU, placed with here or by the
        # callers of the helper that returns it (snntorch#188)
        Example(
            "import torch\ndef zeros_like_rows(x):\n    device = 'cuda' if x.is_cuda else 'cpu'  # expect: DL302\n"
            "    return torch.zeros(x.size(0), device=device)\n"
        ),
        Example(
            "import torch\nclass Loss:\n    def _check(self, out):\n        device = 'cpu'\n        if out.is_cuda:\n"
            "            device = 'cuda'  # expect: DL302\n        return device, out.size(0)\n"
            "    def __call__(self, out, target):\n        device, steps = self._check(out)\n"
            "        total = torch.zeros(1, device=device)\n        for step in range(steps):\n"
            "            total += ((out[step] - target) ** 2).mean()\n        return total\n"
        ),
        # a CUDA path chosen for inputs on a GPU, but on the current GPU, not theirs (the
        # chamfer-distance extension's output buffers: "cuda:6 and cuda:0")
        Example(
            "import torch\ndef chamfer(xyz1, xyz2):\n    dist = torch.zeros(xyz1.size(0), xyz1.size(1))\n"
            "    if xyz1.is_cuda:\n        dist = dist.cuda()  # expect: DL302\n    return dist + torch.cdist(xyz1, xyz2).min(2)[0]\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        if x.device.type == 'cuda':\n            return x + torch.ones(3, device='cuda')  # expect: DL302\n        return x + 1\n"
        ),
        # the script's device is the second GPU whenever CUDA is available (odcnn's training
        # script; a one-GPU machine fails at the first move)
        Example(
            "import torch\ndevice = torch.device('cuda:1' if torch.cuda.is_available() else 'cpu')  # expect: DL302\n"
            "net = torch.nn.Linear(4, 2).to(device)\n"
        ),
        Example(
            "import torch\nif torch.cuda.is_available():\n    device = 'cuda:2'  # expect: DL302\nelse:\n    device = 'cpu'\n"
            "x = torch.zeros(3, device=device)\n"
        ),
        # a helper over lists of parameters and their saved copies (an accelerated line-search
        # optimizer): the copies go to GPU 0 whatever GPU the parameters are on
        Example(
            "import torch\ndevice = torch.device('cuda:1' if torch.cuda.device_count() > 1 else 'cpu')\n"
            "def polyak_update(params, saved, momentum):\n    for p, old in zip(params, saved):\n"
            "        p.data = p.data + momentum * (p.data - old.cuda())  # expect: DL302\n"
            "params = [torch.randn(4, device=device)]\npolyak_update(params, [p.detach().cpu() for p in params], 0.5)\n"
        ),
        # an optimizer's step keeps its state where the parameters are, but hard-codes CUDA
        # for it (Adam-mini), also under `if p.grad is None:` (a test of the data)
        Example(
            "import torch\nfrom torch.optim import Optimizer\nclass AdamMini(Optimizer):\n    def step(self):\n"
            "        for group in self.param_groups:\n            for p in group['params']:\n                state = self.state[p]\n"
            "                if len(state) == 0:\n                    state['vmean'] = torch.tensor(0.0).cuda()  # expect: DL302\n"
            "                if p.grad is None:\n                    state['lr'] = torch.tensor(0.0).cuda()  # expect: DL302\n"
        ),
        # a helper of tensor arguments whose caller places them on a device chosen at run time
        # (jiant's one-hot encoding of predictions)
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "def make_one_hot(batch, depth=2):\n    ones = torch.sparse.torch.eye(depth).cuda()  # expect: DL302\n"
            "    return ones.index_select(0, batch)\n"
            "preds = make_one_hot(torch.randint(0, 2, (4,)).to(device))\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, proj):\n"
            "        a = torch.randn(proj.size(-1), 8, device='cuda')  # expect: DL302\n        return proj @ a\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        index = torch.arange(x.size(-1)).cuda()  # expect: DL302\n        return x.gather(-1, index.expand_as(x))\n"
        ),
        # the program picks the CPU when there is no GPU, but its trainer moves every batch to
        # CUDA (AlphaZeroSimple) and its loader moves the model there (stable-diffusion's txt2img)
        Example(
            "import torch\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
            "    def train(self, examples):\n        for boards, targets in examples:\n"
            "            boards = boards.contiguous().cuda()  # expect: DL302\n            self.model(boards)\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "Trainer(torch.nn.Linear(4, 2).to(device)).train([(torch.rand(2, 4), torch.rand(2))])\n"
        ),
        Example(
            "import torch\ndef load_model(path):\n    model = torch.nn.Linear(4, 2)\n"
            "    model.load_state_dict(torch.load(path, map_location='cpu'))\n    model.cuda()  # expect: DL302\n    return model\n"
            "def main(path):\n    if torch.cuda.is_available():\n        device = 'cuda'\n    else:\n        device = 'cpu'\n"
            "    model = load_model(path).to(device)\n"
        ),
        # a helper of tensor arguments places its result by whether a GPU exists, not where its
        # targets are (ClassyVision's one-hot encoding): CPU targets on a GPU machine fail
        Example(
            "import torch\ndef one_hot(targets, classes):\n"
            "    out = torch.zeros(targets.shape[0], classes, device='cuda' if torch.cuda.is_available() else 'cpu')  # expect: DL302\n"
            "    return out.scatter_(1, targets.long(), 1)\n"
        ),
        # a model's method moves its input to the default GPU whenever there is one, while the
        # program may put the model on another (flair's text generation)
        Example(
            "import torch\nfrom torch import nn\nclass LM(nn.Module):\n    def generate(self, prefix):\n        ids = torch.tensor(prefix).unsqueeze(0)\n"
            "        if torch.cuda.is_available():\n            ids = ids.cuda()  # expect: DL302\n        return self.forward(ids)\n"
            "model = LM().to(torch.device('cuda:1') if torch.cuda.device_count() > 1 else 'cpu')\n"
        ),
        # a helper's device defaults to CUDA, and the code that works on the caller's tensors
        # leaves it there (timm's mixup_target before its fix)
        Example(
            "import torch\ndef one_hot(x, n, device='cuda'):\n    return torch.zeros(len(x), n, device=device).scatter_(1, x.view(-1, 1), 1.0)\n"
            "class Mixup:\n    def __call__(self, x, target):\n        x = x.flip(0)\n"
            "        return x, one_hot(target.long(), 4)  # expect: DL302\n"
        ),
        # a base model chooses its device from the GPU ids (the CPU for none); a subclass moves
        # its loss network to CUDA regardless (uORF)
        Example(
            "import torch\nclass BaseModel:\n    def __init__(self, gpu_ids):\n"
            "        self.device = torch.device(f'cuda:{gpu_ids[0]}') if gpu_ids else torch.device('cpu')\n"
            "class TrainModel(BaseModel):\n    def __init__(self, gpu_ids):\n        super().__init__(gpu_ids)\n"
            "        self.perceptual = torch.nn.Conv2d(3, 8, 3).cuda()  # expect: DL302\n"
        ),
        # a plain class's method working on the tensors it is handed (a loss's target builder)
        Example(
            "import torch\nclass Loss:\n    def build(self, targets):\n"
            "        empty = torch.zeros(0, 6, device='cuda:0')  # expect: DL302\n        return torch.cat([empty, targets.unsqueeze(0)])\n"
        ),
        # targets indexed like an array and what that gives used as a tensor; the branch is
        # taken for empty data, not chosen for the device (WongKinYiu/yolov7#530)
        Example(
            "import torch\nclass ComputeLoss:\n    def build_targets(self, targets, n):\n        found = []\n"
            "        for b in range(n):\n            this = targets[targets[:, 0] == b]\n"
            "            found.append(this[:, 1].long())\n        if found != []:\n            return torch.cat(found)\n"
            "        else:\n            return torch.tensor([], device='cuda:0')  # expect: DL302\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per function: the calls it makes only on some paths (in an `if` or a conditional expression)
        self._conditional: dict[cst.FunctionDef, set[int]] = {}
        #: per function: the calls in the branch an ``if torch.cuda.is_available():`` takes
        self._availability: dict[cst.FunctionDef, set[int]] = {}
        #: per function: the parameter it places tensors on (`.to(device=cuda)`), "" for none
        self._placing_parameters: dict[cst.FunctionDef, str] = {}
        #: per function: the calls in a branch taken because a tensor is on a GPU, with the tensor
        self._tensor_branches: dict[cst.FunctionDef, dict[int, str]] = {}
        #: per function of the file called: its parameters defaulting to CUDA that it places with
        self._cuda_default_params: dict[cst.FunctionDef, tuple[cst.Param, ...]] = {}
        self._cuda_only: Optional[bool] = None
        self._bare_cuda: Optional[bool] = None
        #: per function, its parameters defaulting to None that it replaces with CUDA, and where
        self._none_fallbacks: dict[cst.FunctionDef, dict[str, cst.CSTNode]] = {}
        self._reported_fallbacks: set[int] = set()
        #: per function: the values assigned in branches taken because a tensor is on a GPU
        self._tensor_assignments: dict[cst.FunctionDef, dict[int, str]] = {}
        self._named_devices_seen: set[int] = set()
        #: functions that set up an NCCL process group -> whether their first hard-coded CUDA
        #: placement afterwards was met (see _report_every_rank_on_gpu0)
        self._grouped: dict[cst.FunctionDef, bool] = {}
        self._per_gpu: Optional[bool] = None
        #: hard-coded CUDA outside code its caller places: the node spelling it, its call, and
        #: the function it is in
        self._unchosen: list[tuple[cst.CSTNode, cst.Call, Optional[cst.FunctionDef]]] = []
        #: GPU selections, functions run in threads and their index-less CUDA placements
        self._threads = ThreadDevices(ctx.source)
        #: functions of the file that return their tensor argument's ``get_device()`` (see _device_index_helpers)
        self._index_helpers: Optional[frozenset[str]] = None
        #: the module's tests about placement, walked once, when first asked
        self._guards: Optional[PlacementGuards] = None

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        """``device = "cuda"`` in the branch taken because a tensor argument is on a GPU (``if
        x.is_cuda:``, or ``"cuda" if x.is_cuda else "cpu"``), a device the function then places
        with or returns to callers that do: it names the current GPU, not the tensor's
        (snntorch#188: ``_prediction_check``)."""
        if not isinstance(target, cst.Name) or not isinstance(value_node, (cst.SimpleString, cst.Call, cst.IfExp)):
            return
        if id(value_node) in self._named_devices_seen:
            return
        self._named_devices_seen.add(id(value_node))
        literal = value_node
        tested: Optional[str] = None
        if isinstance(value_node, cst.IfExp):
            test = _tensor_on_cuda_test(value_node.test)
            if test is not None:
                literal = value_node.body if test[1] else value_node.orelse
                tested = test[0]
        if not _names_cuda(literal):
            return
        function = self.ctx.current_function.node
        if function is None or self._cuda_only_file():
            return
        if tested is None:
            tested = self._tensor_on_cuda_assignments(function).get(id(value_node))
        if tested is None or tested.split(".", 1)[0] not in parameter_names(function):
            return
        body = self.ctx.analyzer.body_text(function)
        if _PINS_CURRENT_GPU.search(body):
            return
        use = self._named_device_use(function, target.value, body)
        if use is None:
            return
        self.ctx.report(
            literal,
            f"this device is chosen by name because `{tested}` is on a GPU, but `\"cuda\"` is the current GPU (GPU 0 "
            f"unless the program sets another), not `{tested}`'s: "
            f"what is placed with it ({use}) meets `{tested}` on different devices; use `{tested}.device`",
        )

    def _note_process_group(self, event: CallEvent) -> None:
        """Remember the functions that set up an NCCL process group, one process per GPU:
        ``dist.init_process_group(...)`` here, or a call of a function of the file that makes it."""
        if not self._one_process_per_gpu():
            return
        function = self.ctx.current_function.node
        if function is None or function in self._grouped:
            return
        called = event.callee.info if event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef) else None
        if event.qualname == "torch.distributed.init_process_group" or (
            called is not None and "init_process_group(" in self.ctx.analyzer.body_text(called)
        ):
            self._grouped[function] = False

    def _report_every_rank_on_gpu0(self, found: cst.CSTNode) -> bool:
        """The first hard-coded CUDA placement (``.cuda()``, ``device="cuda"``) of a function
        after it set up an NCCL process group, in a program that never makes the rank's GPU the
        current one (no ``torch.cuda.set_device``, ``with torch.cuda.device(...)``,
        ``CUDA_VISIBLE_DEVICES``): ``"cuda"`` is the current GPU, GPU 0 in every process, so
        every rank works on GPU 0 (MMAudio#57)."""
        function = self.ctx.current_function.node
        if function is None or self._grouped.get(function) is not False:
            return False
        self._grouped[function] = True  # the first placement only: the rest follow from it
        self.ctx.report(
            found,
            "this process set up an NCCL process group (one process per GPU), but the program never makes the rank's GPU "
            "its current one: hard-coded CUDA is GPU 0 in every process, so every rank works on GPU 0 (its memory, and "
            "the collectives on one GPU); call `torch.cuda.set_device(local_rank)` after `init_process_group`, or place "
            "with the rank's device",
        )
        return True

    def _one_process_per_gpu(self) -> bool:
        """Does the file set up an NCCL process group and never set the current GPU?"""
        if self._per_gpu is None:
            source = re.sub(r"#[^\n]*", "", self.ctx.source)  # what the code does, not what its comments say
            self._per_gpu = (
                "init_process_group" in source
                and NCCL_NAMED.search(source) is not None
                and _PINS_CURRENT_GPU.search(source) is None
                and "CUDA_VISIBLE_DEVICES" not in source
            )
        return self._per_gpu

    def _tensor_on_cuda_assignments(self, function: cst.FunctionDef) -> dict[int, str]:
        """The values assigned in ``function``'s branches taken because a tensor is on a GPU,
        with the tensor's spelling (the innermost such test that holds)."""
        found = self._tensor_assignments.get(function)
        if found is None:
            finder = _AssignmentConditions(_tensor_on_cuda_test)
            walk.visit(function.body, finder)
            found = self._tensor_assignments[function] = {
                value: next(tensor for tensor, holds in reversed(conditions) if holds)
                for value, conditions in finder.conditions.items()
                if any(holds for _, holds in conditions)
            }
        return found

    def _named_device_use(self, function: cst.FunctionDef, name: str, body: str) -> Optional[str]:
        """How ``name`` is used as a device: here (``device=name``, ``.to(name)``), or returned
        (alone or in a tuple) to a call of ``function`` in the file whose result, bound to a
        name, places something in the calling function; a phrase for the message, or None."""
        if re.search(_PLACED_BY_NAME.format(re.escape(name)), body):
            return "here"
        returned = _returned_position(function, name)
        if returned is None:
            return None
        finder = _CallResultNames(function.name.value, returned)
        walk.visit(self.ctx.module, finder)
        for caller, bound in finder.found:
            if re.search(_PLACED_BY_NAME.format(re.escape(bound)), self.ctx.analyzer.body_text(caller)):
                return f"by `{caller.name.value}()`, which takes it from this function's result"
        return None

    def on_call(self, event: CallEvent) -> None:
        if self._threads.enabled:
            self._threads.on_call(event, self.ctx.current_function.node)
        self._check_cuda_default_left(event)
        availability_argument = _availability_choice_argument(event)
        self._note_process_group(event)
        helpers = self._device_index_helpers()
        found = availability_argument or _hard_coded_cuda(event, any_receiver=True, helpers=helpers) or self._cuda_bound_here(event)
        if found is None and event.qualname == "torch.device" and not self._cuda_only_file():
            self._check_availability_device_name(event)
        if found is None or self._cuda_only_file():
            return
        indexed_by = _indexed_by_tensor(found, helpers)
        if indexed_by is not None and (
            self.ctx.current_function.node is None or ASKS_WHERE_IT_RUNS.search(self.ctx.analyzer.body_text(self.ctx.current_function.node))
        ):
            return  # `if x.is_cuda: t = t.cuda(x.get_device())`: on x's own GPU, and only there
        if availability_argument is None and indexed_by is None and self._report_every_rank_on_gpu0(found):
            return
        # a tensor placed on CUDA is judged in code its caller places; a module or an object of
        # unknown kind moved there only against the program's choice of the CPU
        on_tensor = availability_argument or _hard_coded_cuda(event, helpers=helpers) or self._cuda_bound_here(event)
        function = self.ctx.current_function.node
        if function is not None and availability_argument is None and _bare_cuda(found) and self._report_beside_handed_device(found, function):
            return
        if on_tensor is None or not self._placed_by_caller(event, by_availability=availability_argument is not None):
            # not code its caller places: hard-coded CUDA contradicts the program only where
            # the program itself chooses the CPU when there is no GPU (see finish). A module
            # moving itself while it is being built is DL107's concern.
            if availability_argument is None and not _moves_itself_in_constructor(event, self.ctx.current_function.name):
                self._unchosen.append((found, event.node, function))
            return
        body = self.ctx.analyzer.body_text(function) if function is not None else ""
        tested = self._tensor_on_cuda_branches(function).get(id(event.node)) if function is not None else None
        if tested is not None and not _PINS_CURRENT_GPU.search(body):
            # the path is right to be a CUDA one, but the device is the current GPU's
            self.ctx.report(
                found,
                f"this branch runs because `{tested}` is on a GPU, but hard-coded CUDA is the current GPU (GPU 0 unless the "
                f"program sets another), not `{tested}`'s: with `{tested}` on a second GPU the two meet on different devices; "
                f"use `.to({tested}.device)` (or `device={tested}.device`)",
            )
            return
        if ASKS_WHERE_IT_RUNS.search(body):
            return  # a CUDA-only path chosen for inputs on a GPU (`if x.is_cuda:`)
        in_optimizer = self._in_optimizer_method()
        follow = "the parameter's device (`device=p.device`, `.to(p.device)`)" if in_optimizer else "the input's device (`device=x.device`, `.to(x.device)`)"
        owner = "the parameters" if in_optimizer else "its inputs"
        if (availability_argument is not None or (function is not None and id(event.node) in self._availability_branches(function))) and (
            not self._places_by_availability_alone(body)
        ):
            self.ctx.report(
                found,
                f"CUDA is chosen here because a GPU exists, not because {owner} are on one: a model run on the CPU of a GPU "
                f"machine, or on another GPU, gets this tensor on GPU 0 and fails; use {follow}",
            )
            return
        if function is not None and (
            _ASKS_AVAILABILITY.search(body)
            or id(event.node) in self._conditional_calls(function) and (indexed_by is None or self._index_tested(event.node, helpers))
        ):
            # a CUDA path the code chose (`if use_cuda: x = x.cuda()`): DL314's business. Not
            # `.cuda(x.get_device())` on a path some other flag selects (`if sampling:`): a CPU
            # run takes that path too, with -1 for the index
            return
        if indexed_by is not None:
            tensor = self.ctx.source_of(indexed_by)
            index = self.ctx.source_of(indexed_by_call(found))
            said = f"`{tensor}.get_device()`" if index == f"{tensor}.get_device()" else f"`{index}` (`{tensor}.get_device()`)"
            self.ctx.report(
                found,
                f"{said} is -1 when `{tensor}` is on the CPU, so this CUDA placement fails on a CPU run (\"Device "
                f"index must not be negative\"); use `.to({tensor}.device)`",
            )
            return
        if self.ctx.in_module_method:
            if _found_bare_cuda(found) and self._bare_cuda_program():
                return  # the program puts everything on the current GPU with `.cuda()`: so are the inputs
            where = "a module's method, whose other tensors are where its caller put them"
        elif in_optimizer:
            where = "an optimizer's method, whose parameters are wherever the model is"
        else:
            where = "a function of tensor arguments, whose other tensors are where its caller put them"
        self.ctx.report(
            found,
            f"CUDA is hard-coded in {where}: it fails on a CPU run and puts this tensor on GPU 0 whatever GPU {'the parameters' if in_optimizer else 'the inputs'} are on; use {follow}",
        )

    def _device_index_helpers(self) -> frozenset[str]:
        """The file's top-level functions of one parameter that return its ``get_device()``,
        maybe -1 on another path (allennlp's ``get_device_of``: ``return t.get_device() if
        t.is_cuda else -1``): a call of one is that ``get_device()``, -1 for a CPU tensor."""
        if self._index_helpers is None:
            found = set()
            if "get_device()" in self.ctx.source:
                for statement in self.ctx.module.body:
                    if isinstance(statement, cst.FunctionDef) and _returns_get_device_of_parameter(statement):
                        found.add(statement.name.value)
            self._index_helpers = frozenset(found)
        return self._index_helpers

    def _check_availability_device_name(self, event: CallEvent) -> None:
        """``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`` in a
        function handed a model or tensors, which it then places with ``device`` (a move here,
        or a function of the file that places its parameter): the caller's model or data, on
        the CPU of a GPU machine or on another GPU, is moved to (or meets) GPU 0. Only in a
        program that places work on a GPU it picks elsewhere (by count, index or local rank)."""
        function = self.ctx.current_function.node
        positional = positional_args(event.node)
        if function is None or len(positional) != 1 or len(event.node.args) != 1:
            return
        choice = positional[0].value
        if not (isinstance(choice, cst.IfExp) and asks_cuda_available(choice.test) and _names_cuda(choice.body) and device_spelling(choice.orelse) == "cpu"):
            return
        finder = _AssignedCall(event.node)
        walk.visit(function.body, finder)
        name = finder.name
        if name is None or not self._handed_placed(function, event):
            return
        body = self.ctx.analyzer.body_text(function)
        # only where the program places work on a GPU it picks elsewhere (by count, index,
        # local rank): a training function choosing by availability is the program's own choice
        rest = self.ctx.source.replace(body, "")
        if _OTHER_GPU_PLACEMENT.search(rest) is None:
            return
        if not (re.search(_PLACED_BY_NAME.format(re.escape(name)), body) or self._handed_to_placing_function(function, name)):
            return
        self.ctx.report(
            choice,
            f"`{name}` is CUDA because a GPU exists, not because the model or tensors this function is handed are on "
            f"one: this program places work on GPUs it picks, and a caller's model on another GPU (or on the CPU) is "
            f"placed on GPU 0 here and no longer meets the caller's tensors; take the device from the model "
            f"(`next(model.parameters()).device`) or the inputs",
        )

    def _handed_placed(self, function: cst.FunctionDef, event: CallEvent) -> bool:
        """Is ``function`` handed a model or a tensor (a parameter whose value is one)?"""
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            if param.name.value in ("self", "cls"):
                continue
            value = self.ctx.analyzer.lookup(param.name.value, event.state)
            if any(item.kind == Kind.MODULE or item.is_tensor_like for item in container_items(value)):
                return True
        return False

    def _handed_to_placing_function(self, function: cst.FunctionDef, name: str) -> bool:
        """Is ``name`` handed (by position or keyword) to a function of the file that places
        tensors or a model on that parameter (``.to(device)``, ``device=device``)?"""
        finder = _CallsHanding(name)
        walk.visit(function.body, finder)
        if not finder.calls:
            return False
        definitions = _module_functions(self.ctx.module)
        for called, position, keyword in finder.calls:
            callee = definitions.get(called)
            if callee is None or callee is function:
                continue
            params = [param for param in (*callee.params.posonly_params, *callee.params.params) if param.name.value not in ("self", "cls")]
            target = keyword if keyword is not None else (params[position].name.value if position is not None and position < len(params) else None)
            if target is not None and re.search(_PLACED_BY_PARAMETER.format(re.escape(target)), self.ctx.analyzer.body_text(callee)):
                return True
        return False

    def _stored_for_handed_tensors(self, event: CallEvent) -> bool:
        """A plain object's method that, in the branch of ``if torch.cuda.is_available():``,
        stores a tensor it moved to CUDA on the object (``self.mask = self.mask.cuda()``), which
        another method of the class combines with a tensor it is handed (``output * self.mask``
        in ``__call__``): that tensor is where the caller put it, not where a GPU exists."""
        context = self.ctx.current_function
        function, info = context.node, context.class_info
        if function is None or info is None or info.is_module or id(event.node) not in self._availability_branches(function):
            return False
        finder = _AssignedCall(event.node, attribute_of="self")
        walk.visit(function.body, finder)
        if finder.name is None:
            return False
        for method in info.methods.values():
            if method is function:
                continue
            params = parameter_names(method) - {"self", "cls"}
            if params:
                combined = _CombinedWithParameter(finder.name, params)
                walk.visit(method.body, combined)
                if combined.found:
                    return True
        return False

    def _check_cuda_default_left(self, event: CallEvent) -> None:
        """A call of a function or method of the file that leaves a parameter defaulting to CUDA
        (``def one_hot(x, n, device="cuda")``), which the callee uses to place something, at that
        default - from code its caller places (a module's method, a function of tensor arguments):
        the hard-coded device is the callee's, the call is where it is chosen (timm's mixup_target,
        mmdetection's grid_anchors)."""
        found = self._callee_definition(event)
        if found is None or self._cuda_only_file():
            return
        function, skip_first = found
        defaults = self._cuda_defaults(function)
        if not defaults or any(arg.star for arg, _ in event.args):
            return
        bound = set(helpers.argument_parameters(function, event.args, skip_first))
        placing = [param for param in defaults if param.name.value not in bound]
        if not placing:
            return
        context = self.ctx.current_function
        caller = context.node
        if caller is None or ASKS_WHERE_IT_RUNS.search(self.ctx.analyzer.body_text(caller)):
            return
        if not (self.ctx.in_module_method or self._in_optimizer_method() or self._handed_tensors(event, any_device=True)):
            return
        param = placing[0]
        fallback = self._none_fallbacks.get(function, {}).get(param.name.value)
        if fallback is not None:
            # `device=None`, then `if device is None: device = torch.device("cuda")`: the CUDA
            # default is written in the callee; reported there, once
            if id(fallback) not in self._reported_fallbacks:
                self._reported_fallbacks.add(id(fallback))
                self.ctx.report(
                    fallback,
                    f"`{param.name.value}` falls back to CUDA here when `{function.name.value}()` is not given one, and "
                    f"`{self.ctx.source_of(event.node)}` (line {self.ctx.line(event.node)}) gives none, in code whose tensors are "
                    "where its caller put them: on a CPU run it fails, on another GPU its result lands on GPU 0; take the "
                    "device from the data (`x.device`) or pass it",
                )
            return
        self.ctx.report(
            event.node,
            f"`{function.name.value}()` is called without `{param.name.value}`, which defaults to "
            f"{self.ctx.source_of(param.default)} (line {self.ctx.line(param)}), in code whose tensors are where its caller put them: "
            f"on a CPU run it fails, on another GPU its result lands on GPU 0; pass `{param.name.value}=x.device` with an input `x`",
        )

    def _cuda_defaults(self, function: cst.FunctionDef) -> tuple[cst.Param, ...]:
        """The parameters of ``function`` that default to CUDA and that its body uses to place
        something (``device=device``, ``.to(device)``), none where it asks where it runs
        (computed once per function: this is asked at every call of it)."""
        found = self._cuda_default_params.get(function)
        if found is None:
            params = function.params
            fallbacks = _cuda_fallbacks_of_none(function)
            if fallbacks:
                self._none_fallbacks[function] = fallbacks
            candidates = [
                param for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                if param.default is not None and (_names_cuda(param.default) or is_none_literal(param.default) and param.name.value in fallbacks)
            ]
            found = ()
            if candidates:
                body = self.ctx.analyzer.body_text(function)
                if not ASKS_WHERE_IT_RUNS.search(body):
                    found = tuple(param for param in candidates if re.search(_PLACED_BY_NAME.format(re.escape(param.name.value)), body))
            self._cuda_default_params[function] = found
        return found

    def _callee_definition(self, event: CallEvent) -> Optional[tuple[cst.FunctionDef, bool]]:
        """The called function or method defined in the file (or project), and whether its first
        parameter is the object (a method called on one)."""
        callee = event.callee
        if callee is not None and callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            return callee.info, False
        receiver = event.receiver
        if event.method is not None and receiver is not None and isinstance(receiver.info, ClassInfo) and receiver.kind != Kind.CLASS:
            found = receiver.info.find_method(event.method)
            if found is not None and not has_decorator(found[0], "staticmethod"):
                return found[0], True
        return None

    def _placed_by_caller(self, event: CallEvent, by_availability: bool) -> bool:
        """Is the call, which places a tensor, in code whose other tensors its caller places: a
        module's or an optimizer's method, or a function that makes (not just moves) a tensor
        beside tensors it is handed (with ``by_availability``, on any device)?"""
        if self.ctx.in_module_method or self._in_optimizer_method():
            return True
        if self._stored_for_handed_tensors(event):
            return True
        # outside a module, a helper that moves what it is handed (`def to_gpu(x): return
        # x.cuda()`) is a device choice of its own: only what the function makes counts
        receiver = event.receiver
        # (a batch drawn from a loader is data the function moves, DL203's and DL311's concern)
        made_here = event.method not in ("cuda", "to") or (
            receiver is not None and receiver.kind != Kind.BATCH and receiver.device is not None and receiver.device.is_cpu
        )
        # a tensor handed in on the host meets a tensor placed by availability on a GPU machine
        return made_here and self._handed_tensors(event, any_device=by_availability)

    def finish(self) -> None:
        self._report_against_cpu_choice()
        for made, function, started, selected in self._threads.found():
            self.ctx.report(
                made,
                f"`{self.ctx.source_of(made)}` is the current GPU of the thread that uses it, and `{function}()` runs in "
                f"another thread (started at line {self.ctx.line(started)}): `torch.cuda.set_device` (line "
                f"{self.ctx.line(selected)}) selects the GPU of the calling thread only, so there it is GPU 0; "
                "name the GPU (`torch.device(\"cuda\", index)`) or select it in the thread",
            )
        if _NONZERO_GPU_INDEX.search(self.ctx.source) is None:
            return  # the common case costs a text search, not a walk
        portable = "is_available(" in self.ctx.source and _PLANS_SEVERAL_GPUS.search(self.ctx.source) is None
        finder = _GuardedGpuIndex(self.ctx.source, self.ctx.analyzer.body_text, portable)
        walk.visit(self.ctx.module, finder)
        for literal, label, guarded in finder.found:
            if guarded:
                said = f"`{label}` is chosen whenever CUDA is available"
            else:
                said = (
                    f"`{label}` is hard-coded in a program meant for other machines (it asks whether CUDA is available) "
                    "that never counts the GPUs"
                )
            self.ctx.report(
                literal,
                f"{said}, but a machine with one GPU has no GPU {label.split(':')[1]}: "
                "the first move there fails (\"invalid device ordinal\"); use `\"cuda\"` (the current GPU), "
                "or take the index from configuration or the local rank",
            )

    def _report_against_cpu_choice(self) -> None:
        """Hard-coded CUDA in a program that chooses the CPU when there is no GPU
        (``torch.device("cuda" if torch.cuda.is_available() else "cpu")``), in code that choice
        governs (see _cpu_choice), on a path that also runs without a GPU: not in a branch the
        program chose (a test of a flag or the device), a function that asks where it runs or
        whose every call is on such a path, or a function or class gated on a GPU by its
        decorators."""
        if not self._unchosen or _CPU_LITERAL.search(self.ctx.source) is None:
            return
        choices = CpuChoices()
        walk.visit(self.ctx.module, choices)
        if not choices.choices:
            return
        # a function whose every call in the file is on a path the program chose runs only there
        callers = {
            name: choices.calls_by_name.get(name, [])
            for name in {function.name.value for _, _, function in self._unchosen if function is not None}
        }
        paths = GpuOnlyPaths(
            frozenset(id(call) for _, call, _ in self._unchosen) | frozenset(id(call) for calls in callers.values() for call in calls)
        )
        walk.visit(self.ctx.module, paths)
        conditional = BranchConditions(_chosen_test)
        walk.visit(self.ctx.module, conditional)
        chosen_paths = paths.gated | set(conditional.conditions)
        chosen_functions = {name for name, calls in callers.items() if calls and all(id(call) in chosen_paths for call in calls)}
        for node, call, function in self._unchosen:
            if id(call) in chosen_paths:
                continue
            if function is not None and (_CHECKS_DEVICE.search(self.ctx.analyzer.body_text(function)) or function.name.value in chosen_functions):
                continue
            choice = choices.first_governing(function)
            if choice is None:
                continue  # the choice is another function's, which does not run this code
            self.ctx.report(
                node,
                f"CUDA is hard-coded here, but this program chooses the CPU when there is no GPU (line {self.ctx.line(choice)}): "
                "on such a machine it fails here; use the device the program chose (`.to(device)`)",
            )

    def _in_optimizer_method(self) -> bool:
        """Is the code being analysed a method (not ``__init__``) of a ``torch.optim.Optimizer``
        subclass? Its ``step`` works on the parameters it was built with."""
        context = self.ctx.current_function
        return context.node is not None and context.class_info is not None and context.class_info.is_optimizer and context.name != "__init__"

    def _bare_cuda_program(self) -> bool:
        """Does the file run its model itself, and place everything - the model, the data - with
        bare ``.cuda()``, nothing else (no device object or string, no ``.to(``, no GPU index, no
        test of whether a GPU exists, no GPU count, no parallel wrapper)? Then every tensor it
        makes is on the current GPU, and so are a module's inputs: a bare ``.cuda()`` in its
        forward agrees with them. (On a CPU machine the whole program fails, not this line.)"""
        if self._bare_cuda is None:
            self._bare_cuda = _places_by_bare_cuda_only(self.ctx.module, self.ctx.source)
        return self._bare_cuda

    def _cuda_only_file(self) -> bool:
        if self._cuda_only is None:
            self._cuda_only = CUDA_ONLY_FILE.search(self.ctx.source) is not None
        return self._cuda_only

    def _places_by_availability_alone(self, function_body: str) -> bool:
        """Does the rest of the program place its work by whether a GPU exists, the same test,
        and never on another GPU? Then on every machine the choice here agrees with where the
        model is (a program of ``if torch.cuda.is_available(): model.cuda()``)."""
        elsewhere = self.ctx.source.count("is_available(") - function_body.count("is_available(")
        return elsewhere > 0 and _OTHER_GPU_PLACEMENT.search(self.ctx.source) is None

    def _availability_branches(self, function: cst.FunctionDef) -> set[int]:
        """The calls of ``function`` whose innermost enclosing ``if`` or conditional expression
        is exactly ``torch.cuda.is_available()``, in the branch it takes when a GPU exists."""
        found = self._availability.get(function)
        if found is None:
            found = self._availability[function] = {
                call for call, conditions in _branch_conditions(function, _availability_test).items() if conditions[-1] == _GPU_EXISTS
            }
        return found

    def _report_beside_handed_device(self, found: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """A function handed the device it places its other tensors on (``.to(device=cuda)``
        with ``cuda`` a parameter), that moves some with a bare ``.cuda()``: that is the
        current GPU, not the one it was handed (SCANimate's training step on ``cuda:1``).
        Whether it reported."""
        handed = self._placing_parameters.get(function)
        if handed is None and function.name.value in ("to", "cuda", "_apply"):
            handed = self._placing_parameters[function] = ""  # an override of the move itself
        if handed is None:
            body = self.ctx.analyzer.body_text(function)
            params = (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
            names = [param.name.value for param in params if param.name.value not in ("self", "cls")]
            placing = [name for name in names if re.search(_PLACED_BY_PARAMETER.format(re.escape(name)), body)]
            handed = self._placing_parameters[function] = placing[0] if placing and not _PINS_CURRENT_GPU.search(body) else ""
        if not handed:
            return False
        self.ctx.report(
            found,
            f"this function places its other tensors on `{handed}`, the device it is handed, but hard-coded CUDA is the "
            f"current GPU (GPU 0 unless the program sets another): with `{handed}` another GPU they meet on different "
            f"devices, and without a GPU this fails; use `.to({handed})`",
        )
        return True

    def _tensor_on_cuda_branches(self, function: cst.FunctionDef) -> dict[int, str]:
        """The calls of ``function`` in the branch taken because a tensor is on a GPU (``if
        x.is_cuda:``), with the tensor's spelling (see _TensorOnCudaBranches)."""
        found = self._tensor_branches.get(function)
        if found is None:
            # the innermost such test that holds: the tensor it asks about is on a GPU there
            found = self._tensor_branches[function] = {
                call: next(tensor for tensor, holds in reversed(conditions) if holds)
                for call, conditions in _branch_conditions(function, _tensor_on_cuda_test).items()
                if any(holds for _, holds in conditions)
            }
        return found

    def _cuda_bound_here(self, event: CallEvent) -> Optional[cst.CSTNode]:
        """``device = torch.device("cuda")`` in the function, then ``torch.arange(n,
        device=device)`` or ``x.to(device)``: the same hard-coded CUDA as written in the call,
        reported where the name is bound (the place to fix). Only a binding in the function
        itself, on every path (a device that a test chose is joined with the other path's)."""
        function = self.ctx.current_function.node
        if function is None:
            return None
        for arg, value in event.args:
            if arg.keyword is not None and arg.keyword.value != "device" or arg.keyword is None and event.method != "to":
                continue
            if not isinstance(arg.value, cst.Name):
                continue
            device, origin = value.device, value.origin
            if (
                value.kind != Kind.DEVICE or device is None or not device.is_accel or device.also_on_host
                or not is_cuda_literal_label(device.label) or origin is None or not isinstance(origin.node, cst.Call)
                or not is_cuda_literal(device_argument(origin.node))  # not `torch.device("cuda" if gpu else "cpu")`
            ):
                continue
            if walk.contains(function, origin.node):
                return origin.node
        return None

    def _index_tested(self, call: cst.Call, helpers: frozenset[str]) -> bool:
        """Is ``t.cuda(x.get_device())`` on a path a test about placement selects: one that
        asks where a tensor is or reads a GPU index (``if get_device_of(x) >= 0:``), or a flag
        that elsewhere chooses a device?"""
        guards = self._placement_guards()
        if guards.guarded(call):
            return True
        for test in guards.tests_of(call):
            text = self.ctx.module.code_for_node(test)
            if "get_device" in text or any(f"{helper}(" in text for helper in helpers):
                return True
        return False

    def _placement_guards(self) -> PlacementGuards:
        if self._guards is None:
            self._guards = PlacementGuards(self.ctx.module)
        return self._guards

    def _conditional_calls(self, function: cst.FunctionDef) -> set[int]:
        """The calls of ``function`` on paths the program chose (see _chosen_test)."""
        found = self._conditional.get(function)
        if found is None:
            found = self._conditional[function] = set(_branch_conditions(function, _chosen_test))
        return found

    def _handed_tensors(self, event: CallEvent, any_device: bool = False) -> bool:
        """Does the function being analysed work on tensors its caller placed: a parameter it
        uses as a tensor, whose device is its caller's (symbolic, or not known here; with
        ``any_device``, wherever it is)?"""
        function = self.ctx.current_function.node
        if function is None:
            return False
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            value = self.ctx.analyzer.lookup(param.name.value, event.state)
            # a list of tensors counts by its elements (an optimizer's parameter copies)
            candidates = container_items(value)
            # its calls may hand it a tensor on a device chosen at run time (`x.to(device)`):
            # only one they place on a CUDA literal themselves, on every path, agrees with the
            # hard-coded one (not `if args.use_cuda: x = x.cuda()`)
            if any(
                item.is_tensor_like
                and (
                    any_device
                    or item.device is None
                    or item.device.is_symbolic
                    or item.device.is_accel and (not is_cuda_literal_label(item.device.label) or item.device.also_on_host)
                )
                for item in candidates
            ):
                return True
        return False


def _branch_conditions(function: cst.FunctionDef, read: Callable[[cst.BaseExpression], Optional[tuple[str, bool]]]) -> dict[int, tuple[tuple[str, bool], ...]]:
    """The conditions each call of the function's body runs under, as ``read`` sees the tests
    (see BranchConditions); callers keep what they derive, once per function."""
    finder = BranchConditions(read)
    walk.visit(function.body, finder)
    return finder.conditions


#: the condition `_availability_test` reads where a GPU exists
_GPU_EXISTS = ("torch.cuda.is_available()", True)


def _availability_test(test: cst.BaseExpression) -> tuple[str, bool]:
    """Every test is a condition here, so that the innermost one tells: exactly
    ``torch.cuda.is_available()``, or another."""
    return _GPU_EXISTS if asks_cuda_available(test) else ("another test", True)


def _chosen_test(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """A test of a flag or the device - a path the program chose - and not one of the data
    (``if matching[i] != []:``, ``if x.shape[0] == 0:``, ``if len(boxes):``): a branch taken
    for empty data is no device the program chose, and runs on any machine."""
    return None if _tests_data(test) else ("chosen", True)


def _hard_coded_cuda(event: CallEvent, any_receiver: bool = False, helpers: frozenset[str] = frozenset()) -> Optional[cst.CSTNode]:
    """The node spelling CUDA where ``event`` places a tensor (with ``any_receiver``, also a
    module or an object of unknown kind: ``.cuda()`` is torch's), if it does."""
    node = event.node
    receiver = event.receiver
    if event.qualname in api.CUDA_TYPED_CONSTRUCTORS:
        return node  # `torch.cuda.FloatTensor(n)`: made on the current GPU
    if event.method == "cuda" and receiver is not None and (
        receiver.is_tensor_like or any_receiver and (receiver.kind in PLACED_KINDS or receiver.kind == Kind.UNKNOWN)
    ):
        # `.cuda()` or `.cuda(0)`; `.cuda(args.gpu)` is a device the configuration chose
        index = positional_args(node)
        if not index or isinstance(index[0].value, cst.Integer) or _tensor_gpu_index(index[0].value, helpers) is not None:
            return node
        return None
    device = keyword_arg(node, "device")
    if device is not None and _names_cuda(device.value):
        return device.value
    positional = positional_args(node)
    if event.method == "to" and positional and _names_cuda(positional[0].value):
        return positional[0].value
    return None


def _tensor_gpu_index(node: cst.BaseExpression, helpers: frozenset[str] = frozenset()) -> Optional[cst.BaseExpression]:
    """``x.get_device()`` as a CUDA index: the tensor ``x`` whose GPU it names, or None. It is -1
    for a tensor on the CPU, so ``.cuda(x.get_device())`` follows ``x`` only while ``x`` is on
    a GPU, and fails ("Device index must not be negative") on a CPU run. So does a call of one
    of the file's ``helpers`` that return it (``get_device_of(x)``)."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get_device":
        return node.func.value
    if (
        helpers and isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in helpers
        and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star
    ):
        return node.args[0].value
    return None


def _returns_get_device_of_parameter(function: cst.FunctionDef) -> bool:
    """``def f(t): return t.get_device() if t.is_cuda else -1`` (or the same with an ``if``):
    one parameter, and every ``return`` gives its ``get_device()`` or a negative number."""
    params = function.params
    if len(params.params) != 1 or isinstance(params.star_arg, cst.Param) or params.kwonly_params or params.star_kwarg is not None:
        return False
    name = params.params[0].name.value
    returns = [statement for statement in _simple_statements(function.body) if isinstance(statement, cst.Return)]
    if not returns:
        return False
    gave_index = False
    for statement in returns:
        parts = [statement.value.body, statement.value.orelse] if isinstance(statement.value, cst.IfExp) else [statement.value]
        for part in parts:
            if isinstance(part, cst.UnaryOperation) and isinstance(part.operator, cst.Minus) and isinstance(part.expression, cst.Integer):
                continue
            receiver = _tensor_gpu_index(part) if isinstance(part, cst.BaseExpression) else None
            if isinstance(receiver, cst.Name) and receiver.value == name:
                gave_index = True
                continue
            return False
    return gave_index


def _simple_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    """The small statements of a function body, also in its ``if``/``else`` blocks (not in loops
    or nested functions)."""
    found: list[cst.BaseSmallStatement] = []
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            found.extend(statement.body)
        elif isinstance(statement, cst.SimpleStatementSuite):
            found.extend(statement.body)
        elif isinstance(statement, cst.If):
            found.extend(_simple_statements(statement.body))
            orelse = statement.orelse
            while orelse is not None:
                found.extend(_simple_statements(orelse.body))
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    return found


def indexed_by_call(found: cst.CSTNode) -> cst.BaseExpression:
    """The index expression of a CUDA placement by a tensor's GPU (``x.get_device()``,
    ``get_device_of(x)``) that _indexed_by_tensor found."""
    assert isinstance(found, cst.Call) and isinstance(found.func, cst.Attribute)
    positional = positional_args(found)
    if found.func.attr.value == "cuda":
        return positional[0].value
    index = keyword_arg(found, "index")
    return index.value if index is not None else positional[1].value


def _indexed_by_tensor(found: cst.CSTNode, helpers: frozenset[str] = frozenset()) -> Optional[cst.BaseExpression]:
    """The tensor whose ``get_device()`` names the GPU of a CUDA placement: ``t.cuda(x.get_device())``,
    ``torch.device("cuda", x.get_device())``; None for any other."""
    if not isinstance(found, cst.Call) or not isinstance(found.func, cst.Attribute):
        return None
    positional = positional_args(found)
    if found.func.attr.value == "cuda" and positional:
        return _tensor_gpu_index(positional[0].value, helpers)
    index = keyword_arg(found, "index")
    if found.func.attr.value == "device" and (len(positional) == 2 or index is not None):
        return _tensor_gpu_index(index.value if index is not None else positional[1].value, helpers)
    return None


def _bare_cuda(found: cst.CSTNode) -> bool:
    """``x.cuda()`` without an index, or ``"cuda"`` itself: the current GPU, whichever it is."""
    if isinstance(found, cst.Call):
        return isinstance(found.func, cst.Attribute) and found.func.attr.value == "cuda" and not found.args
    return isinstance(found, cst.SimpleString) and string_value(found) == "cuda"


def _moves_itself_in_constructor(event: CallEvent, function_name: Optional[str]) -> bool:
    """``self.cuda()`` / ``self.to("cuda")`` in an ``__init__``."""
    func = event.node.func
    return function_name == "__init__" and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"


def _cuda_fallbacks_of_none(function: cst.FunctionDef) -> dict[str, cst.CSTNode]:
    """``if device is None: device = torch.device("cuda")`` among the top-level statements of
    ``function``: the parameter's name and the assignment's statement."""
    found: dict[str, cst.CSTNode] = {}
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if not isinstance(statement, cst.If) or statement.orelse is not None:
            continue
        test = statement.test
        if not (
            isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Is) and is_none_literal(test.comparisons[0].comparator)
        ):
            continue
        inner = helpers.block_statements(statement.body)  # also `if device is None: device = "cuda"`
        if len(inner) != 1 or not isinstance(inner[0], helpers.SIMPLE_LINES) or len(inner[0].body) != 1:
            continue
        assign = inner[0].body[0]
        if (
            isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
            and assign.targets[0].target.value == test.left.value and _names_cuda(assign.value)
        ):
            found[test.left.value] = inner[0]
    return found


def _names_cuda(node: cst.BaseExpression) -> bool:
    """``"cuda"``, ``"cuda:0"``, or ``torch.device("cuda")`` spelled out."""
    if isinstance(node, cst.Call) and node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "device":
        node = node.args[0].value
    return is_cuda_literal(node)


def _availability_choice_argument(event: CallEvent) -> Optional[cst.BaseExpression]:
    """A device argument chosen by whether a GPU exists: ``device=torch.device("cuda" if
    torch.cuda.is_available() else "cpu")``, ``.to("cuda" if torch.cuda.is_available() else
    "cpu")``: the conditional expression, if so."""
    node = event.node
    device = keyword_arg(node, "device")
    candidates = [device.value] if device is not None else []
    positional = positional_args(node)
    if event.method == "to" and positional:
        candidates.append(positional[0].value)
    for candidate in candidates:
        choice = device_argument(candidate)
        if isinstance(choice, cst.IfExp) and asks_cuda_available(choice.test) and _names_cuda(choice.body) and device_spelling(choice.orelse) == "cpu":
            return choice
    return None


def _tensor_on_cuda_test(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """(the tensor's spelling, True) for ``x.is_cuda`` / ``x.device.type == "cuda"``, (..., False)
    for their ``not`` (see BranchConditions); None for any other test."""
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda":
        tensor: cst.BaseExpression = test.value
    elif (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual))
        and isinstance(test.left, cst.Attribute)
        and test.left.attr.value == "type"
        and isinstance(test.left.value, cst.Attribute)
        and test.left.value.attr.value == "device"
        and device_spelling(test.comparisons[0].comparator) == "cuda"
    ):
        tensor = test.left.value.value
        negated ^= isinstance(test.comparisons[0].operator, cst.NotEqual)
    else:
        return None
    spelled = dotted_name(tensor)
    if spelled is None or spelled.startswith("torch."):
        return None
    return spelled, not negated


class _GuardedGpuIndex(cst.CSTVisitor):
    """String literals naming a GPU above 0 (``"cuda:1"``) in the branch a CUDA-availability
    test takes - ``"cuda:1" if torch.cuda.is_available() else "cpu"``, or an assignment in the
    body of ``if torch.cuda.is_available():`` - where the choice places something: written
    into a move or a ``device=`` itself, or bound to a name the file hands to one (a device
    only compared or printed fails nowhere). Code that counts the GPUs around it is left
    alone: an enclosing ``if`` on the count, the enclosing function (an early ``return`` for
    one GPU), or a decorator of an enclosing class (a test skipped below two GPUs)."""

    def __init__(self, source: str, body_text: Callable[[cst.FunctionDef], str], portable: bool = False) -> None:
        self.source = source
        self._body_text = body_text
        #: the program asks whether CUDA is available and plans for no second GPU (see
        #: _PLANS_SEVERAL_GPUS): a GPU index above 0 is wrong wherever it places something,
        #: not only in the branch of the availability test
        self._portable = portable
        #: the literal, its label, and whether an availability test chose it
        self.found: list[tuple[cst.SimpleString, str, bool]] = []
        #: per enclosing function, class and ``if``: does it count the GPUs (in its test, its
        #: body or its decorators)? and how many of them do
        self._counts: list[bool] = []
        self._counting = 0
        #: expressions written straight into a move or a ``device=`` (by id)
        self._placing: set[int] = set()
        #: the value of the assignment visited last (by id), and the names it binds
        self._bound: tuple[int, list[str]] = (0, [])

    def _enter(self, counts: bool) -> None:
        self._counts.append(counts)
        self._counting += counts

    def _leave(self) -> None:
        self._counting -= self._counts.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        counts = _COUNTS_GPUS.search(self._body_text(node)) is not None
        self._enter(counts or any(_counts_gpus(decorator) for decorator in node.decorators))
        if not self._portable or self._counting:
            return
        # a parameter defaulting to a second GPU (`device=torch.device("cuda:1")`), which the
        # function places with or keeps in an attribute that is placed with
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.default is None:
                continue
            name = param.name.value
            stored = re.findall(rf"\b(self\.\w+)\s*=\s*{re.escape(name)}\s*$", self._body_text(node), re.MULTILINE)
            self._choice(param.default, [name, *stored], guarded=False)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter(any(_counts_gpus(decorator) for decorator in node.decorators))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave()

    def visit_If(self, node: cst.If) -> None:
        self._enter(_counts_gpus(node.test))
        if self._counting or not asks_cuda_available(node.test):
            return
        for line in helpers.block_statements(node.body):
            for statement in line.body if isinstance(line, helpers.SIMPLE_LINES) else ():
                if isinstance(statement, cst.Assign):
                    self._choice(statement.value, _names(target.target for target in statement.targets))
                elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
                    self._choice(statement.value, _names([statement.target]))

    def leave_If(self, original_node: cst.If) -> None:
        self._leave()

    def visit_Call(self, node: cst.Call) -> None:
        moves = isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda")
        for arg in node.args:
            if (arg.keyword is not None and arg.keyword.value == "device") or (arg.keyword is None and moves):
                self._placing.add(id(device_argument(arg.value)))
                if self._portable and not self._counting:
                    self._choice(arg.value, [], placed=True, guarded=False)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bound = (id(device_argument(node.value)), _names(target.target for target in node.targets))
        if self._portable and not self._counting:
            self._choice(node.value, self._bound[1], guarded=False)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bound = (id(device_argument(node.value)), _names([node.target]))
            if self._portable and not self._counting:
                self._choice(node.value, self._bound[1], guarded=False)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if self._counting or not asks_cuda_available(node.test):
            return
        names = self._bound[1] if self._bound[0] == id(node) else []
        self._choice(node.body, names, placed=id(node) in self._placing)

    def _choice(self, value: cst.BaseExpression, names: list[str], placed: bool = False, guarded: bool = True) -> None:
        literal = device_argument(value)
        if not isinstance(literal, cst.SimpleString) or any(found is literal for found, _, _ in self.found):
            return
        label = str(string_value(literal))
        if not _NONZERO_GPU_INDEX.fullmatch(label):
            return
        placed = placed or id(literal) in self._placing or any(
            re.search(_PLACED_BY_NAME.format(re.escape(name)), self.source) for name in names
        )
        if placed:
            self.found.append((literal, label, guarded))


def _names(targets: "Iterable[cst.BaseExpression]") -> list[str]:
    return [name for name in (dotted_name(target) for target in targets) if name is not None]


def _counts_gpus(node: cst.CSTNode) -> bool:
    return _COUNTS_GPUS.search(cst.Module([]).code_for_node(node)) is not None


def _tests_data(test: cst.BaseExpression) -> bool:
    """Does an ``if`` test ask about the data - its size or emptiness (``len(x)``, ``x.shape``,
    ``x.numel()``, a comparison with an empty list) - rather than a flag or the device?"""
    return _DATA_TEST.search(cst.Module([]).code_for_node(test)) is not None and _CHECKS_DEVICE.search(cst.Module([]).code_for_node(test)) is None


class _AssignmentConditions(BranchConditions):
    """BranchConditions for the values of plain assignments (``name = value``)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._stack:
            self.conditions[id(node.value)] = tuple(self._stack)


def _returned_position(function: cst.FunctionDef, name: str) -> Optional[int]:
    """Where ``function`` returns ``name``: -1 alone, its index in a returned tuple, or None."""
    finder = _ReturnedName(name)
    walk.visit(function.body, finder)
    return finder.position


class _ReturnedName(OwnScopeVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.position: Optional[int] = None

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if self.position is not None or value is None:
            return
        if isinstance(value, cst.Name) and value.value == self.name:
            self.position = -1
        elif isinstance(value, cst.Tuple):
            for index, element in enumerate(value.elements):
                if isinstance(element.value, cst.Name) and element.value.value == self.name:
                    self.position = index


class _CallResultNames(cst.CSTVisitor):
    """``x = f(...)`` / ``a, x, c = self.f(...)``: the functions of the module that bind the
    result of a call of ``f`` (at ``position`` of a returned tuple, -1 for the whole result)
    to a plain name, with that name."""

    def __init__(self, called: str, position: int) -> None:
        self.called = called
        self.position = position
        self.found: list[tuple[cst.FunctionDef, str]] = []
        self._functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        call = node.value
        if not self._functions or not isinstance(call, cst.Call) or len(node.targets) != 1:
            return
        func = call.func
        called = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) else None
        if called != self.called:
            return
        target = node.targets[0].target
        if self.position == -1 and isinstance(target, cst.Name):
            self.found.append((self._functions[-1], target.value))
        elif self.position >= 0 and isinstance(target, (cst.Tuple, cst.List)) and self.position < len(target.elements):
            element = target.elements[self.position].value
            if isinstance(element, cst.Name):
                self.found.append((self._functions[-1], element.value))


class _AssignedCall(OwnScopeVisitor):
    """``name = <call>``: the plain name the given call node is assigned to."""

    def __init__(self, call: cst.Call, attribute_of: Optional[str] = None) -> None:
        self.call = call
        #: with a name, the attribute of that name assigned to (``self.x = <call>``: ``x``)
        self.attribute_of = attribute_of
        self.name: Optional[str] = None

    def visit_Assign(self, node: cst.Assign) -> None:
        if node.value is not self.call or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if self.attribute_of is None:
            if isinstance(target, cst.Name):
                self.name = target.value
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self.attribute_of:
            self.name = target.attr.value


class _CombinedWithParameter(OwnScopeVisitor):
    """An arithmetic operation with ``self.<attribute>`` on one side and a parameter (or an
    expression of one) on the other."""

    def __init__(self, attribute: str, params: set[str]) -> None:
        self.attribute = attribute
        self.params = params
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        sides = (_names_in(node.left), _names_in(node.right))
        mine = f"self.{self.attribute}"
        if (mine in sides[0] and sides[1] & self.params) or (mine in sides[1] and sides[0] & self.params):
            self.found = True


def _names_in(node: cst.CSTNode) -> set[str]:
    """The plain names and ``self.x`` attributes an expression reads."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute) and isinstance(current.value, cst.Name) and current.value.value == "self":
            found.add(f"self.{current.attr.value}")
            continue
        stack.extend(walk.children(current))
    return found


class _CallsHanding(OwnScopeVisitor):
    """Calls of plain names (``f(..., name)``) handing ``name``: the called name, the
    argument's position (or None) and its keyword (or None)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[str, Optional[int], Optional[str]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name):
            return
        for index, arg in enumerate(node.args):
            if isinstance(arg.value, cst.Name) and arg.value.value == self.name and arg.star == "":
                keyword = arg.keyword.value if arg.keyword is not None else None
                self.calls.append((node.func.value, None if keyword is not None else index, keyword))


def _module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The module's top-level functions by name."""
    return {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}


#: names whose use in code means the program places something otherwise than by bare `.cuda()`
_OTHER_PLACEMENT_NAMES = frozenset({
    "device", "to", "is_available", "set_device", "device_count", "get_device", "DataParallel",
    "DistributedDataParallel", "distributed", "set_default_device", "set_default_tensor_type",
})


def _found_bare_cuda(found: cst.CSTNode) -> bool:
    """Is the hard-coded CUDA a bare ``.cuda()`` call (the current GPU)?"""
    return (
        isinstance(found, cst.Call) and isinstance(found.func, cst.Attribute) and found.func.attr.value == "cuda" and not found.args
    )


def _places_by_bare_cuda_only(module: cst.Module, source: str) -> bool:
    """See ``HardcodedCuda._bare_cuda_program``: read on the file's tokens (not its comments)."""
    import io
    import tokenize

    try:
        tokens = [
            (token.type, token.string)
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type in (tokenize.NAME, tokenize.OP, tokenize.STRING)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    for index, (kind, text) in enumerate(tokens):
        if kind == tokenize.STRING:
            if re.search(r"\bcuda\b|\bcpu\b|\bmps\b", text):
                return False  # a device spelled as a string
            continue
        if kind != tokenize.NAME:
            continue
        if text in _OTHER_PLACEMENT_NAMES or text in ("cpu", "device_ids"):
            if index > 0 and tokens[index - 1][1] == "." or text in ("device", "device_ids", "DataParallel", "DistributedDataParallel"):
                return False
        if text == "cuda" and index > 0 and tokens[index - 1][1] == ".":
            following = tokens[index + 1 : index + 3]
            if following and following[0][1] == "(" and (len(following) < 2 or following[1][1] != ")"):
                return False  # `.cuda(1)`, `.cuda(device)`: a GPU named
    # the program itself runs here: a bare `.cuda()` outside every class (its model, its data)
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            continue
        finder = _BareCudaCalls()
        walk.visit(statement, finder)
        if finder.found:
            return True
    return False


class _BareCudaCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if _found_bare_cuda(node):
            self.found = True
