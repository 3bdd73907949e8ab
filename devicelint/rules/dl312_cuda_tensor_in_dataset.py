from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.values import Kind
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
        # the move happens in the training loop
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\nclass Points(Dataset):\n"
        "    def __getitem__(self, i):\n        return torch.randn(3)\n    def __len__(self):\n        return 8\n"
        "for x in DataLoader(Points(), num_workers=2):\n    x = x.cuda()\n",
    )
    invalid = (
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

    def on_call(self, event: CallEvent) -> None:
        context = self.ctx.current_function
        if context.class_info is None or not context.class_info.is_dataset or context.name not in self._methods_workers_run(context.class_info):
            return
        result = event.result
        if result.kind == Kind.MODULE or result.device is None or not result.device.may_be_accelerator:
            return
        if result.origin is None or result.origin.node is not event.node:
            return  # not placed by this call: it carries a device from elsewhere
        if context.name not in _LOADING_METHODS and result.device.is_symbolic and context.node is not None and result.device.label in _parameter_names(context.node):
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


def _parameter_names(function: cst.FunctionDef) -> frozenset[str]:
    params = function.params
    return frozenset(param.name.value for param in [*params.posonly_params, *params.params, *params.kwonly_params])
