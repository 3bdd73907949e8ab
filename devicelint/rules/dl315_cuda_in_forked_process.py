from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: what starts a child process from the default context (``fork`` on Linux)
_DEFAULT_PROCESS = frozenset({"multiprocessing.Process", "torch.multiprocessing.Process"})
_GET_CONTEXT = frozenset({"multiprocessing.get_context", "torch.multiprocessing.get_context"})
_SET_START_METHOD = frozenset({"multiprocessing.set_start_method", "torch.multiprocessing.set_start_method"})
#: synchronisation objects of a context: one created from the default (fork) context cannot be
#: handed to a process of a spawn context (CPython refuses to pickle its semaphore)
_PRIMITIVES = frozenset({"Event", "Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "Barrier", "Queue", "SimpleQueue", "JoinableQueue"})
_DEFAULT_PRIMITIVES = frozenset(f"{package}.{name}" for package in ("multiprocessing", "torch.multiprocessing") for name in _PRIMITIVES)
#: ``torch.cuda`` calls that initialise CUDA (``torch.cuda._lazy_init``). Not among them:
#: ``is_available()`` and ``device_count()`` (they leave the fork usable where NVML answers:
#: PyTorch's docs of ``device_count``, and of ``is_available`` with
#: ``PYTORCH_NVML_BASED_CUDA_CHECK=1``; not counted, so that the common ``"cuda" if
#: torch.cuda.is_available() else "cpu"`` never suffices), the seeding calls (queued until
#: CUDA initialises) and the memory statistics (empty until then)
_INITIALISING = frozenset(
    f"torch.cuda.{name}"
    for name in (
        "set_device current_device init synchronize get_device_name get_device_properties get_device_capability "
        "mem_get_info current_stream default_stream Stream Event CUDAGraph is_bf16_supported get_rng_state"
    ).split()
)
_NON_FORK_METHODS = frozenset({"spawn", "forkserver"})


@dataclass
class _Creation:
    node: cst.Call
    function: Optional[cst.FunctionDef]
    order: int
    #: the functions the child runs: the target (a class target: its ``__init__``), or a
    #: Process subclass's ``run``
    child_code: tuple[cst.FunctionDef, ...]
    #: synchronisation objects of the default context handed to the child
    primitives: list[cst.Call] = field(default_factory=list)


class CudaInForkedProcess(Rule):
    """
    ## What it does
    Flags the creation of a child process that starts with the `fork` start method (the
    default on Linux): `multiprocessing.Process(target=f, ...)` (or `torch.multiprocessing`'s,
    or one of `get_context("fork")`), or an instance of a `Process` subclass of the file, where
    the child uses CUDA (`f`'s body, a target class's `__init__`, or the subclass's `run()`
    calls `torch.cuda.*`, `.cuda()`, or creates or moves a tensor or module onto a GPU) and
    the parent used CUDA before: earlier in the function that creates the process, in a
    function that calls it (before the call), or in the `Process` subclass's `__init__`
    (which runs in the parent). Also flags the `Event`, `Lock`, `Queue`, ... of the default
    context handed to such a process: they must come from the same spawn context.

    `torch.cuda.is_available()` and `torch.cuda.device_count()` do not count as the parent's
    use of CUDA (they leave the fork usable where NVML answers). Left alone: a program that
    calls `set_start_method("spawn")` or `"forkserver"` anywhere, processes of
    `get_context("spawn")`, `torch.multiprocessing.spawn(...)`, children that use no CUDA, and
    parents whose CUDA use the rule cannot place before the start (in a helper they call).
    Not followed: `Pool` workers (the functions handed to `map`/`apply_async`). DataLoader
    workers are DL312's.

    ## Why is this bad?
    A process forked after its parent initialised CUDA cannot use CUDA: its first CUDA call
    raises `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with
    multiprocessing, you must use the 'spawn' start method`.

    ## Example
    ```python
    model = Net().cuda()
    for rank in range(1, world_size):
        mp.Process(target=worker, args=(rank,)).start()   # worker calls torch.cuda.set_device
    ```

    ## Use instead
    ```python
    ctx = mp.get_context("spawn")
    for rank in range(1, world_size):
        ctx.Process(target=worker, args=(rank,)).start()
    ```
    """

    code = "DL315"
    name = "cuda-in-forked-process"
    severity = Severity.ERROR
    summary = "A process forked after the parent used CUDA uses CUDA: `Cannot re-initialize CUDA in forked subprocess`."
    valid = (
        # the spawn start method
        "import torch\nimport torch.multiprocessing as mp\ndef work(rank):\n    torch.cuda.set_device(rank)\n"
        "def main():\n    mp.set_start_method(method='spawn', force=True)\n    x = torch.zeros(1).cuda()\n"
        "    p = mp.Process(target=work, args=(1,))\n    p.start()\n",
        # a spawn context
        "import torch\nimport multiprocessing as mp\ndef work(rank):\n    torch.cuda.set_device(rank)\n"
        "def main():\n    x = torch.zeros(1).cuda()\n    ctx = mp.get_context('spawn')\n"
        "    event = ctx.Event()\n    p = ctx.Process(target=work, args=(1, event))\n    p.start()\n",
        # the parent only asks whether there is a GPU
        "import torch\nimport multiprocessing as mp\ndef work(rank):\n    torch.cuda.set_device(rank)\n"
        "def main():\n    if torch.cuda.is_available() and torch.cuda.device_count() > 1:\n"
        "        p = mp.Process(target=work, args=(1,))\n        p.start()\n",
        # a start method the analysis cannot read: no crash, no finding
        "import torch\nimport multiprocessing as mp\ndef work(rank):\n    torch.cuda.set_device(rank)\n"
        "def main(method):\n    mp.set_start_method(method)\n    ctx = mp.get_context(method)\n    x = torch.zeros(1).cuda()\n"
        "    p = ctx.Process(target=work, args=(1,))\n    p.start()\n",
        # the child uses no CUDA
        "import torch\nimport multiprocessing as mp\ndef log(queue):\n    print(queue.get())\n"
        "def main(queue):\n    x = torch.zeros(1).cuda()\n    p = mp.Process(target=log, args=(queue,))\n    p.start()\n",
        # the parent uses CUDA only after starting the child
        "import torch\nimport multiprocessing as mp\ndef work(rank):\n    torch.cuda.set_device(rank)\n"
        "def main():\n    p = mp.Process(target=work, args=(1,))\n    p.start()\n    x = torch.zeros(1).cuda()\n",
    )
    invalid = (
        Example(
            "import torch\nimport torch.multiprocessing as mp\ndef work(rank, event):\n    torch.cuda.set_device(rank)\n"
            "def main():\n    x = torch.zeros(1).cuda()\n    event = mp.Event()  # expect: DL315\n"
            "    p = mp.Process(target=work, args=(1, event))  # expect: DL315\n    p.start()\n"
        ),
        Example(
            # the parent initialised CUDA before calling the function that starts the children
            "import torch\nimport multiprocessing as mp\nclass Runner:\n    def __init__(self, rank):\n"
            "        self.w = torch.zeros(4, device='cuda')\n"
            "def start(n):\n    return [mp.get_context('fork').Process(target=Runner, args=(i,)) for i in range(n)]  # expect: DL315\n"
            "if __name__ == '__main__':\n    print(torch.cuda.get_device_name(0))\n    start(2)\n"
        ),
        Example(
            # a Process subclass whose __init__ (in the parent) and run() (in the child) use CUDA
            "import torch\nimport multiprocessing as mp\nclass Worker(mp.Process):\n    def __init__(self):\n"
            "        super().__init__()\n        self.net = torch.nn.Linear(2, 2).cuda()\n"
            "    def run(self):\n        self.net(torch.zeros(2).cuda())\n"
            "def main():\n    workers = [Worker() for _ in range(2)]  # expect: DL315\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: events seen so far: orders the calls of one function
        self._clock = 0
        #: per function (None: module level), when it first used CUDA
        self._first_cuda_use: dict[Optional[cst.FunctionDef], int] = {}
        #: per function, the functions of the file it calls, and when
        self._calls: dict[Optional[cst.FunctionDef], list[tuple[int, cst.FunctionDef]]] = {}
        self._creations: list[_Creation] = []
        self._start_method_chosen = False
        #: per function, its names bound to a fork context / to a primitive of the default context
        self._fork_contexts: dict[Optional[cst.FunctionDef], set[str]] = {}
        self._primitives: dict[Optional[cst.FunctionDef], dict[str, cst.Call]] = {}
        #: calls that made a fork context / a primitive of the default context
        self._fork_context_calls: set[cst.Call] = set()
        self._primitive_calls: set[cst.Call] = set()
        #: per ``run`` of a Process subclass, the ``__init__`` its instances ran in the parent
        self._process_inits: dict[cst.FunctionDef, set[cst.FunctionDef]] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        if not isinstance(target, cst.Name) or not isinstance(value_node, cst.Call):
            return
        function = self.ctx.current_function.node
        if self._is_fork_context(value_node):
            self._fork_contexts.setdefault(function, set()).add(target.value)
        elif self._is_default_primitive(value_node):
            self._primitives.setdefault(function, {})[target.value] = value_node

    def on_call(self, event: CallEvent) -> None:
        self._clock += 1
        function = self.ctx.current_function.node
        if event.qualname in _SET_START_METHOD and any(isinstance(value.literal, str) and value.literal in _NON_FORK_METHODS for _, value in event.args):
            self._start_method_chosen = True
            return
        if event.qualname in _GET_CONTEXT and event.args and event.args[0][1].literal == "fork":
            self._fork_context_calls.add(event.node)
        elif event.qualname in _DEFAULT_PRIMITIVES:
            self._primitive_calls.add(event.node)
        if self._uses_cuda(event):
            self._first_cuda_use.setdefault(function, self._clock)
        called = self._called_definition(event.callee)
        if called is not None:
            self._calls.setdefault(function, []).append((self._clock, called))
        child_code = self._forked_child_code(event)
        if child_code:
            creation = _Creation(event.node, function, self._clock, child_code)
            primitives = self._primitives.get(function, {})
            for arg, _ in event.args:
                elements = arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else ()
                for element in elements:
                    if isinstance(element.value, cst.Name) and element.value.value in primitives:
                        creation.primitives.append(primitives[element.value.value])
            self._creations.append(creation)

    def finish(self) -> None:
        if self._start_method_chosen:
            return
        for creation in self._creations:
            child_use = next((code for code in creation.child_code if code in self._first_cuda_use), None)
            if child_use is None or not self._parent_used_cuda_before(creation):
                continue
            remedy = (
                "derive the class from `multiprocessing.get_context(\"spawn\").Process` or call "
                "`multiprocessing.set_start_method(\"spawn\")` first"
                if child_use.name.value == "run" and child_use in self._process_inits
                else "create it from `multiprocessing.get_context(\"spawn\")`"
            )
            message = (
                f"this process is forked (the default start method) after the parent used CUDA, and it uses CUDA "
                f"(in `{child_use.name.value}`): it fails with `Cannot re-initialize CUDA in forked subprocess`; {remedy}"
            )
            self.ctx.report(creation.node, message)
            for primitive in creation.primitives:
                self.ctx.report(
                    primitive,
                    f"this {self.ctx.source_of(primitive.func)} of the default (fork) context is handed to the process "
                    f"at line {self.ctx.line(creation.node)}, which must be spawned: create it from the same spawn context",
                )

    # ------------------------------------------------------------------ helpers

    def _parent_used_cuda_before(self, creation: _Creation) -> bool:
        creator = creation.function
        first = self._first_cuda_use.get(creator)
        if creator not in creation.child_code and first is not None and first < creation.order:
            return True
        for caller, calls in self._calls.items():
            first = self._first_cuda_use.get(caller)
            if caller in creation.child_code or first is None:
                continue
            if any(callee is creator and first < order for order, callee in calls):
                return True
        # a Process subclass's __init__ runs in the parent, before start()
        return any(code.name.value == "run" and self._subclass_init_uses_cuda(code) for code in creation.child_code)

    def _subclass_init_uses_cuda(self, run: cst.FunctionDef) -> bool:
        return any(init in self._first_cuda_use for init in self._process_inits.get(run, ()))

    def _forked_child_code(self, event: CallEvent) -> tuple[cst.FunctionDef, ...]:
        callee = event.callee
        if callee.kind == Kind.CLASS and isinstance(callee.info, ClassInfo) and callee.info.is_process:
            run = _method_of(callee.info, "run")
            if run is None:
                return ()
            init = _method_of(callee.info, "__init__")
            self._process_inits.setdefault(run, set()).update({init} if init is not None else set())
            return (run,)
        func = event.node.func
        forked = event.qualname in _DEFAULT_PROCESS or (
            isinstance(func, cst.Attribute) and func.attr.value == "Process" and (
                (isinstance(func.value, cst.Call) and self._is_fork_context(func.value))
                or (isinstance(func.value, cst.Name) and func.value.value in self._fork_contexts.get(self.ctx.current_function.node, ()))
            )
        )
        if not forked:
            return ()
        target = next((value for arg, value in event.args if arg.keyword is not None and arg.keyword.value == "target"), None)
        code = self._called_definition(target) if target is not None else None
        return (code,) if code is not None else ()

    @staticmethod
    def _called_definition(callee: Optional[Value]) -> Optional[cst.FunctionDef]:
        """The function of the file that calling ``callee`` runs (a class: its ``__init__``)."""
        if callee is None:
            return None
        if callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            return callee.info
        if callee.kind == Kind.CLASS and isinstance(callee.info, ClassInfo):
            return _method_of(callee.info, "__init__")
        return None

    def _is_fork_context(self, call: cst.Call) -> bool:
        return call in self._fork_context_calls

    def _is_default_primitive(self, call: cst.Call) -> bool:
        return call in self._primitive_calls

    @staticmethod
    def _uses_cuda(event: CallEvent) -> bool:
        if event.qualname in _INITIALISING or event.method == "cuda":
            return True
        result = event.result
        return (
            result.kind in (Kind.TENSOR, Kind.MODULE) and result.device is not None and result.device.is_accel
            and result.origin is not None and result.origin.node is event.node
        )


def _method_of(info: ClassInfo, name: str) -> Optional[cst.FunctionDef]:
    """``name`` of the class or of a base the analysis knows (ClassInfo.find_method)."""
    found = info.find_method(name)
    return found[0] if found is not None else None
