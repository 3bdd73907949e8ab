from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo, LoaderInfo
from devicelint.analysis.names import keyword_arg, parameter_names
from devicelint.analysis.values import Kind, Value, homogeneous_element
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: the methods of a dataset that DataLoader workers run (``__init__`` builds what they inherit)
_LOADING_METHODS = frozenset({"__init__", "__getitem__", "__getitems__", "__iter__", "__next__"})


class CudaTensorInDataset(Rule):
    """
    ## What it does
    Flags a `torch.utils.data.Dataset` or `IterableDataset` subclass (of the file, or of
    another dataset class of the file) that creates or moves tensors onto an accelerator in
    `__init__`, `__getitem__`, `__getitems__`, `__iter__` or `__next__`: `.cuda()`,
    `.to("cuda")`, `.to(device)` / `torch.zeros(..., device=device)` where `device` is a
    device the code chose (`"cuda" if torch.cuda.is_available() else "cpu"`) or one handed in
    (a `device` argument of the dataset).

    Also flags a dataset that keeps a module handed to it (`self.graph_definition =
    graph_definition`) and uses it in those methods, where the file hands the same module (one
    variable) to a model of the file that keeps it as a submodule and is then moved: the move
    takes the shared module and its buffers to the GPU, and the workers run it there (graphnet).
    A dataset given its own copy (`copy.deepcopy(module)`) is left alone.

    Also flags a `collate_fn` of the file (a function, or a method of the object that builds
    the loader: `collate_fn=self._collate`) that returns batch tensors it put on an
    accelerator, where the DataLoader pins memory (`pin_memory=`, not `False`) or collates
    in worker processes (`num_workers=` a number above 0): pinning raises `cannot pin
    'torch.cuda.FloatTensor' only dense CPU tensors can be pinned` whether or not workers run
    (darts), and forked workers cannot use CUDA. A collate function that moves its batches
    for a loader that does neither runs, in the main process, and is left alone.

    Left alone: moves to a device known to be the CPU (`.cpu()`, `.to("cpu")`,
    `device="cpu"`), moves whose target the analysis does not know (`.to(other_tensor)` of
    unknown placement), dtype conversions (`.to(torch.float32)`), `.pin_memory()`, modules,
    and every method other than the ones above and the methods of the class they call on
    `self` (`__getitem__` calling `self._load(i)` runs `_load` in the worker; a helper that the
    training loop calls on a batch runs in the main process). In such a helper, a placement on
    the device of one of its parameters (`device=tensor.device`) is not followed back to
    the caller and is left alone. There is no fix: the move belongs in the training loop
    (`batch.to(device, non_blocking=True)` with `pin_memory=True` on the loader).

    Severity warning, not error: the program crashes only when the loader uses worker
    processes (`num_workers > 0`) started by `fork` (the default on Linux) after the parent
    process used CUDA; with `num_workers=0` it runs, one sample at a time.

    Verified in torch 2.13's source: `torch.cuda._lazy_init` raises `RuntimeError: Cannot
    re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use
    the 'spawn' start method` in a process forked after CUDA was initialised (the parent
    marks forked children "in bad fork"). PyTorch's multiprocessing notes ("CUDA in
    multiprocessing") say the CUDA runtime does not support the `fork` start method, as a
    PyTorch forum answer recalls:
    https://discuss.pytorch.org/t/a-call-to-torch-cuda-is-available-makes-an-unrelated-multi-processing-computation-crash/4075/2

    ## Why is this bad?
    DataLoader workers are forked from the training process, which has usually initialised
    CUDA already (the model is on the GPU). The first CUDA call in a worker - creating or
    moving a tensor in `__getitem__`, or touching a CUDA tensor built in `__init__` - raises
    `RuntimeError: Cannot re-initialize CUDA in forked subprocess`. With `num_workers=0` it
    runs, but every sample is copied to the GPU on its own, small and synchronous, inside the
    loader instead of one pinned, asynchronous batch copy in the training loop.

    ## Example
    ```python
    class Frames(Dataset):
        def __init__(self, paths, device):
            self.paths, self.device = paths, device

        def __getitem__(self, i):
            return torch.load(self.paths[i]).to(self.device)
    ```

    ## Use instead
    ```python
    class Frames(Dataset):
        def __init__(self, paths):
            self.paths = paths

        def __getitem__(self, i):
            return torch.load(self.paths[i], map_location="cpu")

    for batch in DataLoader(Frames(paths), num_workers=4, pin_memory=True):
        batch = batch.to(device, non_blocking=True)
    ```
    """

    code = "DL312"
    name = "cuda-tensor-in-dataset"
    severity = Severity.WARNING
    summary = "A Dataset creates or moves tensors onto the GPU: forked DataLoader workers cannot use CUDA."
    valid = (
        # a collate function that moves its batches, in the main process, for a loader that
        # does not pin memory
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def to_gpu(batch):\n    return torch.stack(batch).cuda()\n"
        "for x in DataLoader(ds, num_workers=0, collate_fn=to_gpu):\n    print(x.shape)\n",
        "import torch\nfrom torch.utils.data import Dataset\nclass Points(Dataset):\n"
        "    def __init__(self, n):\n        self.data = torch.randn(n, 3)\n"
        "    def __len__(self):\n        return len(self.data)\n"
        "    def __getitem__(self, i):\n        return self.data[i].to(torch.float32)\n",
        # a device that is the CPU
        "import torch\nfrom torch.utils.data import Dataset\nclass Points(Dataset):\n"
        "    def __getitem__(self, i):\n        return torch.zeros(3, device='cpu')\n",
        # not a dataset: a helper the training loop calls
        "import torch\nclass Batcher:\n    def __init__(self, device):\n        self.device = device\n"
        "    def __call__(self, batch):\n        return batch.to(self.device)\n",
        # the dataset has its own copy of the module the model keeps (graphnet after its fix)
        "import copy\nimport torch\nfrom torch import nn\nfrom torch.utils.data import Dataset\n"
        "class Scale(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('s', torch.ones(4))\n    def forward(self, x):\n        return x * self.s\n"
        "class Events(Dataset):\n    def __init__(self, events, scale):\n        self.events, self.scale = events, scale\n"
        "        self.transform = scale\n    def __getitem__(self, i):\n        return self.transform(self.events[i])\n"
        "class Model(nn.Module):\n    def __init__(self, scale):\n        super().__init__()\n        self.scale = scale\n"
        "        self.fc = nn.Linear(4, 1)\n    def forward(self, x):\n        return self.fc(self.scale(x))\n"
        "scale = Scale()\ndata = Events([torch.randn(4)], copy.deepcopy(scale))\nmodel = Model(scale).to('cuda')\n",
        # the name is rebound between the dataset and the model: two different modules
        "import torch\nfrom torch import nn\nfrom torch.utils.data import Dataset\n"
        "class Scale(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('s', torch.ones(4))\n    def forward(self, x):\n        return x * self.s\n"
        "class Events(Dataset):\n    def __init__(self, events, scale):\n        self.events = events\n"
        "        self.transform = scale\n    def __getitem__(self, i):\n        return self.transform(self.events[i])\n"
        "class Model(nn.Module):\n    def __init__(self, scale):\n        super().__init__()\n        self.scale = scale\n"
        "        self.fc = nn.Linear(4, 1)\n    def forward(self, x):\n        return self.fc(self.scale(x))\n"
        "scale = Scale()\ndata = Events([torch.randn(4)], scale)\nscale = Scale()\nmodel = Model(scale).to('cuda')\n",
        # the move happens in the training loop
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\nclass Points(Dataset):\n"
        "    def __getitem__(self, i):\n        return torch.randn(3)\n    def __len__(self):\n        return 8\n"
        "for x in DataLoader(Points(), num_workers=2):\n    x = x.cuda()\n",
    )
    invalid = (
        # a method collates the samples onto the GPU for a loader that pins memory (darts)
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nclass Forecaster:\n"
            "    def __init__(self):\n        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "    def _collate(self, batch):\n"
            "        return tuple(torch.stack([s[i] for s in batch]).to(self.device) for i in range(2))  # expect: DL312\n"
            "    def fit(self, ds):\n"
            "        for x, y in DataLoader(ds, batch_size=4, pin_memory=True, collate_fn=self._collate):\n"
            "            print(x.shape)\n"
        ),
        # a function of the file collates onto the GPU in worker processes
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "def to_gpu(batch):\n    return torch.stack(batch).cuda()  # expect: DL312\n"
            "for x in DataLoader(ds, num_workers=4, collate_fn=to_gpu):\n    print(x.shape)\n"
        ),
        # the dataset runs the very module a moved model keeps as a submodule (graphnet)
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import Dataset\n"
            "class Scale(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('s', torch.ones(4))\n    def forward(self, x):\n        return x * self.s\n"
            "class Events(Dataset):\n    def __init__(self, events, scale):\n        self.events = events\n"
            "        self.transform = scale  # expect: DL312\n    def __getitem__(self, i):\n        return self.transform(self.events[i])\n"
            "class Model(nn.Module):\n    def __init__(self, scale):\n        super().__init__()\n        self.scale = scale\n"
            "        self.fc = nn.Linear(4, 1)\n    def forward(self, x):\n        return self.fc(self.scale(x))\n"
            "scale = Scale()\ndata = Events([torch.randn(4)], scale)\nmodel = Model(scale).to('cuda')\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import Dataset\nclass Points(Dataset):\n"
            "    def __init__(self, n):\n        self.data = torch.randn(n, 3).cuda()  # expect: DL312\n"
            "    def __len__(self):\n        return len(self.data)\n"
            "    def __getitem__(self, i):\n        return self.data[i]\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import IterableDataset\nclass Stream(IterableDataset):\n"
            "    def __init__(self, device):\n        self.device = device\n"
            "    def __iter__(self):\n        for i in range(10):\n"
            "            yield torch.full((3,), i, device=self.device)  # expect: DL312\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per dataset class: the names of the methods worker processes run
        self._worker_methods: dict[int, frozenset[str]] = {}
        #: `self.x = x` in a dataset's `__init__`, `x` a parameter kept as it came in:
        #: (class, attribute, parameter, the assignment)
        self._kept_arguments: list[tuple[ClassInfo, str, str, cst.CSTNode]] = []
        #: calls of the file that build an object of a class of the file: (the call, the class,
        #: the function it is made in, the values of its arguments) by the call's id
        self._constructions: dict[int, tuple[cst.Call, ClassInfo, int, tuple[Value, ...]]] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        context = self.ctx.current_function
        if context.class_info is None or not context.class_info.is_dataset or context.name != "__init__" or context.node is None:
            return
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return
        parameter = self.ctx.analyzer.parameter_read_unchanged(context.node, value_node)
        if parameter is not None and all(other is not statement for *_, other in self._kept_arguments):
            self._kept_arguments.append((context.class_info, target.attr.value, parameter, statement))

    def on_call(self, event: CallEvent) -> None:
        if event.callee.kind == Kind.CLASS and isinstance(event.callee.info, ClassInfo):
            arguments = tuple(value for _, value in event.args)
            self._constructions.setdefault(id(event.node), (event.node, event.callee.info, id(self.ctx.current_function.node), arguments))
        self._placed_in_worker(event)
        self._placed_by_collate_fn(event)

    def _placed_by_collate_fn(self, event: CallEvent) -> None:
        """A DataLoader whose `collate_fn` (a function or method of the file) returns batch
        tensors it put on an accelerator, while the loader pins memory or collates in worker
        processes: pinning rejects CUDA tensors, and forked workers cannot use CUDA."""
        result = event.result
        if result.kind != Kind.LOADER or not isinstance(result.info, LoaderInfo) or result.info.collated is None:
            return
        workers = keyword_arg(event.node, "num_workers")
        in_workers = workers is not None and isinstance(workers.value, cst.Integer) and int(workers.value.value) > 0
        if not result.info.pin_memory and not in_workers:
            return  # collated in the main process and never pinned: it runs
        for placed in _batch_tensors(result.info.collated):
            device = placed.device
            if device is None or not device.may_be_accelerator or placed.origin is None or not isinstance(placed.origin.node, cst.Call):
                continue
            move = placed.origin.node
            why = (
                "the loader pins memory (`pin_memory=`), which raises 'cannot pin torch.cuda.FloatTensor: only dense CPU tensors can be pinned'"
                if result.info.pin_memory else
                "the loader collates in worker processes, which raise 'Cannot re-initialize CUDA in forked subprocess'"
            )
            self.ctx.report(
                move,
                f"`{self.ctx.source_of(move)}` puts a batch tensor on {device.describe()} in the `collate_fn` of the "
                f"DataLoader at line {self.ctx.line(event.node)}: {why}; return host tensors and move the batch "
                f"in the training loop",
            )
            return

    def _placed_in_worker(self, event: CallEvent) -> None:
        context = self.ctx.current_function
        if context.class_info is None or not context.class_info.is_dataset or context.name not in self._methods_workers_run(context.class_info):
            return
        result = event.result
        if result.kind == Kind.MODULE or result.device is None or not result.device.may_be_accelerator:
            return
        if result.origin is None or result.origin.node is not event.node:
            return  # not placed by this call: it carries a device from elsewhere
        if context.name not in _LOADING_METHODS and result.device.is_symbolic and context.node is not None and result.device.label in parameter_names(context.node):
            # a helper the loading methods call, placing on the device of what they hand it
            # (`device=tensor.device`): not followed back to the caller, so not known
            return
        if result.kind not in (Kind.TENSOR, Kind.BATCH, Kind.UNKNOWN):
            return
        what = "a tensor" if result.is_tensor_like else "its result"
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(event.node)}` puts {what} on {result.device.describe()} in "
            f"`{context.class_info.name}.{context.name}`: DataLoader workers forked after the program used CUDA "
            f"raise 'Cannot re-initialize CUDA in forked subprocess'; return host tensors and move the batch "
            f"in the training loop",
        )

    def finish(self) -> None:
        self._report_shared_modules()

    def _report_shared_modules(self) -> None:
        """A dataset that keeps a module handed to it (`self.graph_definition = graph_definition`)
        and uses it in the methods workers run, where the file hands the very same module (one
        variable) to a model of the file that keeps it as a submodule and is then moved to a
        device that may be the GPU (graphnet): the move takes this module, and its buffers,
        to the GPU too, and the forked workers run it there."""
        if not self._kept_arguments or not self.ctx.facts.module_constructions:
            return
        for class_info, attribute, parameter, statement in self._kept_arguments:
            if not self._used_by_workers(class_info, attribute):
                continue
            for call, built_class, scope, arguments in self._constructions.values():
                if built_class is not class_info:
                    continue
                handed = _argument_for(call, class_info.methods.get("__init__"), parameter)
                if not isinstance(handed, cst.Name):
                    continue
                given = next((value for arg, value in zip(call.args, arguments) if arg.value is handed), None)
                found = self._moved_model_keeping(handed.value, scope, given)
                if found is None:
                    continue
                model_call, model_class, moved_by = found
                line = self.ctx.line
                self.ctx.report(
                    statement,
                    f"`self.{attribute}` keeps the module `{handed.value}` handed to `{class_info.name}` (line {line(call)}), "
                    f"which `{model_class.name}` also keeps as a submodule (line {line(model_call)}); that model is moved at "
                    f"line {line(moved_by)}, and the shared module and its buffers move with it, so the DataLoader "
                    f"workers run it on the GPU: forked after the program used CUDA, they raise 'Cannot re-initialize "
                    f"CUDA in forked subprocess'; give the dataset its own copy (`copy.deepcopy`) that stays on the CPU",
                    related=((model_call, "kept by the model here"), (moved_by, "moved here")),
                )
                break

    def _moved_model_keeping(self, name: str, scope: int, given: Optional[Value]) -> Optional[tuple[cst.Call, ClassInfo, cst.Call]]:
        """A construction, in the function ``scope``, of a module class of the file that is
        handed the variable ``name`` holding the module the dataset was given (``given``: the
        same construction made both, so the name was not rebound in between), keeps it as an
        attribute (a submodule) and is moved afterwards."""
        if given is None or given.origin is None:
            return None
        for built in self.ctx.facts.module_constructions.values():
            if built.moved_by is None:
                continue
            located = self._constructions.get(id(built.node))
            if located is None or located[2] != scope:
                continue
            for parameter, value in built.bound.items():
                if value.kind != Kind.MODULE:
                    continue
                handed = _argument_for(built.node, built.init, parameter)
                if not (isinstance(handed, cst.Name) and handed.value == name):
                    continue
                if value.origin is None or value.origin.node is not given.origin.node:
                    continue  # `name` was rebound between the two calls: two modules
                if re.search(rf"\bself\.\w+\s*=\s*{re.escape(parameter)}\s*$", self.ctx.analyzer.body_text(built.init), re.MULTILINE):
                    return built.node, located[1], built.moved_by
        return None

    def _used_by_workers(self, info: ClassInfo, attribute: str) -> bool:
        """Does a method that workers run, other than ``__init__``, read ``self.<attribute>``?"""
        pattern = re.compile(rf"\bself\.{re.escape(attribute)}\b")
        for name in self._methods_workers_run(info) - {"__init__"}:
            located = info.find_method(name)
            if located is not None and pattern.search(self.ctx.analyzer.body_text(located[0])):
                return True
        return False

    def _methods_workers_run(self, info: ClassInfo) -> frozenset[str]:
        """The loading methods and the methods of the class (or its bases) they call on
        ``self``, transitively: ``__getitem__`` calling ``self._load(i)`` runs ``_load`` in the
        worker too."""
        known = self._worker_methods.get(id(info))
        if known is None:
            found = set()
            waiting = [name for name in _LOADING_METHODS if info.find_method(name) is not None]
            while waiting:
                name = waiting.pop()
                if name in found:
                    continue
                found.add(name)
                located = info.find_method(name)
                if located is None:
                    continue
                method = located[0]
                positional = [*method.params.posonly_params, *method.params.params]
                if not positional:
                    continue
                receiver = re.escape(positional[0].name.value)
                for called in re.findall(rf"\b{receiver}\s*\.\s*(\w+)\s*\(", self.ctx.analyzer.body_text(method)):
                    if called not in found and info.find_method(called) is not None:
                        waiting.append(called)
            known = self._worker_methods[id(info)] = frozenset(found)
        return known


def _argument_for(call: cst.Call, init: Optional[cst.FunctionDef], parameter: str) -> Optional[cst.BaseExpression]:
    """The expression ``call`` hands to ``parameter`` of ``init`` (by keyword, or by position
    after ``self``); None where it cannot be told (a starred argument before it)."""
    if init is None:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    positional = [*init.params.posonly_params, *init.params.params][1:]
    names = [param.name.value for param in positional]
    if parameter not in names:
        return None
    index = names.index(parameter)
    given = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in given[: index + 1]) or index >= len(given):
        return None
    return given[index].value


def _batch_tensors(batch: Value) -> list[Value]:
    """The tensors a collated batch holds: itself, or the items of a tuple, list or dict."""
    if batch.kind != Kind.CONTAINER:
        return [batch]
    if isinstance(batch.info, tuple):
        return [item for item in batch.info if isinstance(item, Value)]
    element = homogeneous_element(batch)
    return [element] if element is not None else []
