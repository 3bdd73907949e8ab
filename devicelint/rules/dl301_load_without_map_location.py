from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.analysis.values import Kind, Role, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules._arguments import with_keyword_argument
from devicelint.rules.base import Example, Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(f)` called without `map_location` in a program that picks its device
    when it runs (it calls `torch.cuda.is_available()` or `torch.cuda.device_count()`, or
    builds `torch.device(...)` from configuration): such a program is meant for machines
    with and without that GPU, and the load is what breaks on the ones without. Also a call of
    a wrapper from another module of the project (`load_checkpoint(path)` in `utils.py`) whose
    `torch.load` of the path it is given has no `map_location`: the finding is at the call,
    naming the wrapper's line.

    Left alone: loading back an empty `io.BytesIO()` that the same code saved into; a path
    the same function (or script body) wrote earlier with `torch.save` - the same run, on the
    same devices (a save *after* the load is a resume, and is flagged); a path the file writes
    only host tensors to; a non-literal path in a pytest test that takes a fresh temporary
    directory (`tmp_path`, `tmpdir`): what it loads, it wrote there itself.

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
    holding a `torch.device` is in scope, as the last argument and in the call's own layout:
    on a line of its own where the arguments are one per line. Loading to the CPU and then
    moving the model is always correct; the fix is safe.
    """

    code = "DL301"
    name = "load-without-map-location"
    severity = Severity.WARNING
    summary = "`torch.load` without `map_location` restores tensors onto the device they were saved from."
    fix_safety = "safe"
    valid = (
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
        # a file of host tensors only: nothing to map
        "import torch\nuse_gpu = torch.cuda.is_available()\nclass Cache:\n    def write(self):\n        torch.save((torch.zeros(3), torch.ones(3)), self.path)\n"
        "    def read(self):\n        return torch.load(self.path)\n",
    )
    invalid = (
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
        self._loads: list[tuple[cst.Call, str, Optional[cst.FunctionDef], str]] = []
        #: torch.save calls seen so far, in execution order
        #: (the path's text, the function it is in, its object is on the host)
        self._saves: list[tuple[str, Optional[cst.FunctionDef], bool]] = []
        #: calls of a wrapper in another module of the project that loads without map_location
        self._wrapped: list[tuple[cst.Call, cst.FunctionDef, cst.Call]] = []
        #: per wrapper of another module: its torch.load without map_location of a parameter
        self._unmapped_load_of: dict[cst.FunctionDef, Optional[cst.Call]] = {}
        #: loads given a map_location: (the path's text, the function they are in, the call)
        self._mapped: list[tuple[str, Optional[cst.FunctionDef], cst.Call]] = []

    def on_call(self, event: CallEvent) -> None:
        if event.qualname == "torch.save":
            self._record_save(event)
            return
        if event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._check_imported_wrapper(event, event.callee.info)
            return
        if event.qualname != "torch.load":
            return
        node = event.node
        if any(arg.star for arg in node.args) or not node.args:
            return
        location_arg = keyword_arg(node, "map_location")
        if location_arg is None and len(positional_args(node)) >= 2:
            location_arg = positional_args(node)[1]
        if location_arg is not None:
            if _maps_to_host(location_arg.value):
                self._mapped.append((self.ctx.source_of(node.args[0].value), self.ctx.current_function.node, node))
            return
        if event.args[0][1].role is Role.IN_PROCESS_BUFFER:
            return  # saved and loaded by the same process: map_location would change the result
        location = '"cpu"'
        device = self.ctx.analyzer.lookup("device", event.state)
        if device.kind == Kind.DEVICE:
            location = "device"
        path = self.ctx.source_of(node.args[0].value)
        function = self.ctx.current_function.node
        if any(saved == path and home is function for saved, home, _ in self._saves):
            # the same run has just written it (a test's round trip, a conversion script's temp
            # file): same machine, same devices. A save *after* the load is a resume: not this.
            return
        if function is not None and _is_test_with_temporary_directory(function) and not isinstance(node.args[0].value, cst.SimpleString):
            # a pytest test given a fresh temporary directory loads what it wrote there itself
            return
        self._loads.append((node, path, function, location))

    def _check_imported_wrapper(self, event: CallEvent, function: cst.FunctionDef) -> None:
        """``load_checkpoint(path)`` from another module of the project, whose ``torch.load``
        of the path it is given has no ``map_location``: the load happens here, in a program
        that picks its device at run time (``finish``), and the wrapper alone never says so."""
        analyzer = self.ctx.analyzer
        if analyzer.foreign_home(function) is None:
            return  # a wrapper in this file: its own torch.load is reported where it is
        # kept with the other module (shared by every file of the batch that imports it)
        unmapped_load_of = analyzer.function_memo(function, self._unmapped_load_of, "unmapped loads")
        if function not in unmapped_load_of:
            found = None
            if "load" in analyzer.body_text(function):  # spare the walk of bodies that cannot load
                params = {p.name.value for p in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]}
                finder = _UnmappedLoads(lambda node: analyzer.qualname_of(node, analyzer.home_state(function)), params)
                function.body.visit(finder)
                found = finder.found
            unmapped_load_of[function] = found
        load = unmapped_load_of[function]
        if load is not None:
            self._wrapped.append((event.node, function, load))

    def _other_branch_maps(self, load: cst.Call, path: str, function: Optional[cst.FunctionDef]) -> bool:
        """``if not gpu: torch.load(p, map_location="cpu") else: torch.load(p)``: the other branch
        of an ``if`` loads the same file onto the host, so that branch is the host's and the plain
        load runs on the GPU side. (A branch that maps to a GPU, ``map_location=f"cuda:{i}"``,
        says nothing about the other: that may be the CPU-only run.)"""
        mapped = [call for other_path, home, call in self._mapped if other_path == path and home is function]
        if not mapped:
            return False
        finder = _BranchesHolding(load, frozenset(id(call) for call in mapped))
        (function if function is not None else self.ctx.module).visit(finder)
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
        self._saves.append((self.ctx.source_of(target.value), self.ctx.current_function.node, on_host))

    def finish(self) -> None:
        if not self.ctx.analyzer.facts.chooses_device_at_run_time:
            return  # a program that never asks which device it has runs where its checkpoints were made
        for call, wrapper, load in self._wrapped:
            self.ctx.report(
                call,
                f"`{wrapper.name.value}()` loads with `torch.load` without `map_location` (line {self.ctx.line(load)}): "
                "tensors come back onto the device they were saved from, which fails on a machine without that GPU; "
                f"give `{wrapper.name.value}()` a `map_location` (e.g. `\"cpu\"`) to pass on",
            )
        for node, path, function, location in self._loads:
            if any(saved == path and on_host for saved, _, on_host in self._saves):
                continue  # the file holds host tensors only: there is nothing to map
            if self._other_branch_maps(node, path, function):
                continue
            with_location = with_keyword_argument(node, "map_location", location).with_changes(lpar=(), rpar=())
            fix = FixSpec(f"Add `map_location={location}`", (NodeEdit(node, "replace", self.ctx.module.code_for_node(with_location)),))
            self.ctx.report(
                node,
                "`torch.load` without `map_location` restores tensors onto the device they were saved from: "
                f"it fails on a machine without that GPU; pass `map_location={location}`",
                fix=fix,
            )


class _UnmappedLoads(cst.CSTVisitor):
    """The first ``torch.load(p)`` without ``map_location`` whose path is a parameter."""

    def __init__(self, qualname_of, params: set[str]) -> None:  # type: ignore[no-untyped-def]
        self.qualname_of = qualname_of
        self.params = params
        self.found: Optional[cst.Call] = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None or self.qualname_of(node.func) != "torch.load":
            return
        if keyword_arg(node, "map_location") is not None or len(positional_args(node)) >= 2 or not node.args or node.args[0].keyword:
            return
        first = node.args[0].value
        if isinstance(first, cst.Name) and first.value in self.params:
            self.found = node


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
    node.visit(collector)
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
