from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import OwnScopeVisitor
from devicelint.analysis.values import Device, Kind, Value
from devicelint.findings import Severity
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule


class GeneratorDeviceMismatch(Rule):
    """
    ## What it does
    Flags a `torch.Generator` handed as `generator=` to a call that draws random numbers on
    another device: a random factory (`torch.rand`, `torch.randn`, `torch.randint`,
    `torch.randperm`, `torch.normal`, `torch.bernoulli`, `torch.multinomial`, `torch.poisson`,
    `torch.randn_like` ...), which draws where it creates its tensor (`device=`, else the CPU),
    or an in-place filler (`normal_`, `uniform_`, `bernoulli_`, `random_`, `exponential_`,
    `geometric_`, `cauchy_`, `log_normal_`, `torch.nn.init.*_`), which draws on its tensor's
    device. `torch.Generator()` and `torch.manual_seed(n)` (which returns the default CPU
    generator) draw on the CPU; `torch.Generator("cuda")` / `torch.Generator(device=d)` on that
    device. Reported where one side is on the host and the other can be an accelerator (PyTorch
    checks the device type only: a `cuda:0` generator may draw on `cuda:1`). A draw on a name
    the function sets to the generator's own device where the two differ (diffusers'
    `randn_tensor`: `if generator.device.type != ...: rand_device = generator.device`) is left
    alone: the analysis joins both paths, the code takes the one that matches. A shuffling
    `DataLoader(..., shuffle=True)` (or a `RandomSampler`) built without `generator=` where the
    default device may be an accelerator (`torch.set_default_device("cuda")`,
    `torch.set_default_tensor_type(torch.cuda.FloatTensor)`, also where every call of the
    function runs under it) is flagged too: its sampler seeds a CPU `torch.Generator()` and
    draws `torch.randperm(n, generator=...)` on the default device (the state where the loader
    is built is taken for the one where it is iterated); so is `random_split(dataset, lengths)`
    without `generator=`, which permutes with `randperm(n, generator=default_generator)`, the
    default CPU generator (both checked on an H200). There is no fix:
    either the generator or the draw has to move, and which one decides the random stream.

    Verified on torch 2.13: `torch.manual_seed(0)` returns a CPU `torch.Generator`,
    `torch.cuda.manual_seed(0)` returns None, `Generator.manual_seed` returns the generator.
    Fake and meta tensors do not model the generator check (`torch.randn(3, device="cuda",
    generator=cpu_gen)` passes under `FakeTensorMode`); the check is ATen's `check_generator`
    ("Expected a 'cuda' device type for generator but found 'cpu'", in libtorch), which every
    CUDA and CPU random kernel runs, in both directions. `randperm` on CUDA draws its sort keys
    with `random_(generator)` on the output's device, so it needs a CUDA generator too (its old
    small-n CPU detour, which took a CPU generator, is gone from current PyTorch).

    ## Why is this bad?
    On a GPU machine the draw raises `RuntimeError: Expected a 'cuda' device type for
    generator but found 'cpu'` (or the reverse). Seeding for reproducibility with
    `torch.manual_seed(0)` and sampling latents on the GPU is the classic way to hit it.

    ## Example
    ```python
    generator = torch.manual_seed(0)
    latents = torch.randn(shape, generator=generator, device="cuda")
    ```

    ## Use instead
    ```python
    generator = torch.Generator(device="cuda").manual_seed(0)
    latents = torch.randn(shape, generator=generator, device="cuda")
    ```
    """

    code = "DL208"
    name = "generator-device-mismatch"
    severity = Severity.ERROR
    summary = "A random generator used to draw on another device than its own."
    valid = (
        "import torch\ng = torch.Generator(device='cuda').manual_seed(0)\nx = torch.randn(4, generator=g, device='cuda')\n",
        "import torch\ng = torch.manual_seed(0)\nperm = torch.randperm(10, generator=g)\n",
        # drawn on the host, then moved
        "import torch\ng = torch.Generator().manual_seed(0)\nx = torch.randn(4, generator=g).to('cuda')\n",
        # a pipeline draws where the caller's generator lives, then moves the noise
        "import torch\nfrom diffusers import DiffusionPipeline\nclass Pyramid(DiffusionPipeline):\n"
            "    def noise(self, n, device, generator):\n"
            "        draw_on = generator.device if generator is not None else device\n        return torch.randn(n, device=draw_on, generator=generator).to(device)\n"
            "    def __call__(self, latents, generator=None):\n"
            "        return latents + self.noise(4, self._execution_device, generator)\n"
            "pipe = Pyramid.from_pretrained('org/model').to('cuda')\n"
            "video = pipe(torch.randn(4, device='cuda'), generator=torch.Generator('cpu').manual_seed(0))\n",
        # device unknown on one side
        "import torch\ndef sample(shape, generator, device):\n    return torch.randn(shape, generator=generator, device=device)\n",
        # diffusers' randn_tensor: where the devices differ, the draw is on the generator's own
        "import torch\ndef randn_tensor(shape, generator=None, device=None):\n    rand_device = device\n"
        "    if generator is not None and generator.device.type != torch.device(device).type:\n"
        "        rand_device = generator.device\n"
        "    return torch.randn(shape, generator=generator, device=rand_device).to(device)\n"
        "noise = randn_tensor((2, 4), generator=torch.Generator().manual_seed(0), device='cuda')\n",
    )
    invalid = (
        Example(
            "import torch\ngenerator = torch.manual_seed(0)\n"
            "latents = torch.randn((1, 4, 64, 64), generator=generator, device='cuda')  # expect: DL208\n"
        ),
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "g = torch.Generator(device=device)\ng.manual_seed(1)\nmask = torch.rand(8, generator=g)  # expect: DL208\n"
        ),
        Example(
            "import torch\nweights = torch.empty(16, 16, device='cuda')\ng = torch.Generator().manual_seed(0)\n"
            "weights.normal_(0.0, 0.02, generator=g)  # expect: DL208\n"
        ),
        # a diffusers pipeline of the file, moved and called with a CPU generator: its `__call__`
        # hands the generator to a helper that draws on the pipeline's device
        Example(
            "import torch\nfrom diffusers import DiffusionPipeline\nclass Pyramid(DiffusionPipeline):\n"
            "    def noise(self, n, device, generator):\n"
            "        return torch.randn(n, device=device, generator=generator)  # expect: DL208\n"
            "    def __call__(self, latents, generator=None):\n"
            "        return latents + self.noise(4, self._execution_device, generator)\n"
            "pipe = Pyramid.from_pretrained('org/model').to('cuda')\n"
            "video = pipe(torch.randn(4, device='cuda'), generator=torch.Generator('cpu').manual_seed(0))\n"
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        generator = _keyword(event, "generator")
        if generator is None:
            self._check_shuffle_under_default(event)
            return
        generator_node, generator_value = generator
        if generator_value.kind != Kind.GENERATOR or generator_value.device is None:
            return
        drawn = self._drawn_on(event)
        if drawn is None:
            return
        target_node, target = drawn
        if target.device is None or not _incompatible(generator_value.device, target.device):
            return
        if target.device.argument:
            return  # a free function's tensor argument: its callers decide where it lives
        if target_node is None and self._draws_on_generator_device_where_they_differ(event, generator_node):
            return
        what = f"`{self.ctx.source_of(event.node.func)}`"
        if target_node is None:
            place = f"{what} creates its tensor on {target.device.describe()}"
        else:
            place = f"{what} fills `{self.ctx.source_of(target_node)}`, which is {where(target, self.ctx)}"
        want, got = _type(target.device), _type(generator_value.device)
        self.ctx.report(
            event.node,
            f"the generator `{self.ctx.source_of(generator_node)}` draws {where(generator_value, self.ctx)}, but "
            f"{place}: PyTorch raises \"Expected a '{want}' device type for generator but found '{got}'\"; "
            "make the generator on the device it draws for (`torch.Generator(device=...)`), or draw on the "
            "generator's device and move the result",
        )

    def _check_shuffle_under_default(self, event: CallEvent) -> None:
        """``DataLoader(ds, shuffle=True)`` (or ``RandomSampler(ds)``) without a ``generator=``
        where the default device may be an accelerator (``torch.set_default_device("cuda")``,
        also set by every caller of the function): the sampler seeds a CPU ``torch.Generator()``
        and draws ``torch.randperm(n, generator=...)``, which the default device puts on the GPU."""
        qualname = event.qualname
        if qualname in api.DATALOADER_NAMES:
            if any(arg.star for arg, _ in event.args) or _keyword(event, "sampler") or _keyword(event, "batch_sampler"):
                return
            shuffle = _keyword(event, "shuffle")
            if shuffle is None:
                positional = [(arg.value, value) for arg, value in event.args if arg.keyword is None]
                shuffle = positional[2] if len(positional) > 2 else None
            if shuffle is None or not (isinstance(shuffle[0], cst.Name) and shuffle[0].value == "True"):
                return
            what = f"`{self.ctx.source_of(event.node.func)}(..., shuffle=True)`"
        elif qualname in ("torch.utils.data.RandomSampler", "torch.utils.data.sampler.RandomSampler"):
            if any(arg.star for arg, _ in event.args):
                return
            what = f"`{self.ctx.source_of(event.node.func)}(...)`"
        elif qualname in ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split"):
            # `random_split(dataset, lengths, generator=default_generator)`: its permutation is
            # `randperm(sum(lengths), generator=generator)`, drawn with the default CPU generator
            positional = [arg for arg, _ in event.args if arg.keyword is None]
            if any(arg.star for arg, _ in event.args) or len(positional) > 2:
                return
            what = f"`{self.ctx.source_of(event.node.func)}(...)`"
        else:
            return
        default = self.ctx.analyzer.default_device_at(event.state)
        if default is None or default.device is None or not default.device.may_be_accelerator:
            return
        split = "random_split" in (qualname or "")
        drawer = "its `torch.randperm`" if split else "its sampler's `torch.randperm`"
        uses = "permutes with the default CPU generator" if split else "shuffles with a CPU generator it makes itself"
        self.ctx.report(
            event.node,
            f"{what} {uses} (no `generator=`), but the default device here is "
            f"{default.device.describe()}"
            + (f" (set at line {self.ctx.line(default.origin.node)})" if default.origin is not None else "")
            + f": {drawer} draws there and PyTorch raises \"Expected a 'cuda' device type for "
            "generator but found 'cpu'\"; pass `generator=torch.Generator(device=...)` on the default device",
        )

    def _draws_on_generator_device_where_they_differ(self, event: CallEvent, generator_node: cst.BaseExpression) -> bool:
        """diffusers' ``randn_tensor``: ``rand_device = device``, then ``if generator.device.type
        != torch.device(device).type: rand_device = generator.device``, and the draw on
        ``device=rand_device``: the branch that runs where the two differ draws on the
        generator's own device (and the result is moved). The analysis joins both paths; the
        function's own assignment of the generator's device to that name says which one runs."""
        device = _keyword(event, "device")
        function = self.ctx.current_function.node
        if device is None or function is None or not isinstance(device[0], cst.Name):
            return False
        name, wanted = device[0].value, f"{self.ctx.source_of(generator_node)}.device"
        finder = _AssignmentFinder(name)
        walk.visit(function.body, finder)
        return any(self.ctx.source_of(value) == wanted for value in finder.values)

    def _drawn_on(self, event: CallEvent) -> Optional[tuple[Optional[cst.BaseExpression], Value]]:
        """Where the call draws: the tensor it fills (node and value) or, for a factory, its
        result (node None)."""
        if event.method in api.RANDOM_FILL_METHODS and event.receiver is not None and isinstance(event.node.func, cst.Attribute):
            if event.receiver.kind != Kind.TENSOR:
                return None
            return event.node.func.value, event.receiver
        qualname = event.qualname
        if qualname is None:
            return None
        if qualname.startswith("torch.nn.init.") and event.args:
            arg, value = event.args[0]
            return (arg.value, value) if value.kind == Kind.TENSOR and arg.keyword is None else None
        if qualname in ("torch.normal", "torch.bernoulli", "torch.multinomial", "torch.poisson") and _keyword(event, "device") is None:
            # drawn on the device of the tensors they take (torch.normal also takes sizes)
            for arg, value in event.args:
                if arg.keyword is None and value.is_tensor_like:
                    return None, value
            return (None, event.result) if qualname == "torch.normal" else None
        if qualname in api.RANDOM_FACTORIES or qualname in api.RANDOM_LIKE_FACTORIES:
            return None, event.result
        return None


def _keyword(event: CallEvent, name: str) -> Optional[tuple[cst.BaseExpression, Value]]:
    for arg, value in event.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value, value
    return None


def _incompatible(generator: Device, target: Device) -> bool:
    """One side on the host and the other possibly an accelerator. PyTorch checks the device
    type only: a `cuda:0` generator may draw on `cuda:1`."""
    return generator.is_cpu and target.may_be_accelerator or target.is_cpu and generator.may_be_accelerator


def _type(device: Device) -> str:
    if device.is_cpu:
        return "cpu"
    if device.kind == "meta":
        return "meta"
    label = device.label.strip("\"'")
    return label.split(":")[0] if label.split(":")[0] in ("cuda", "xpu", "mps", "hpu", "npu") else "cuda"


class _AssignmentFinder(OwnScopeVisitor):
    """The values a function's own body assigns to one plain name (not in nested functions)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[cst.BaseExpression] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(target.target, cst.Name) and target.target.value == self.name for target in node.targets):
            self.values.append(node.value)
