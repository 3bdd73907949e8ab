from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.names import NamesRead, dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


@dataclass
class _Produced:
    #: the stream current when it was produced: None for the stream current outside any
    #: ``with torch.cuda.stream(...)`` block, else that block's stream label
    stream: Optional[str]
    #: position in the function's event order
    order: int
    node: cst.CSTNode


@dataclass
class _FunctionFacts:
    produced: dict[str, _Produced] = field(default_factory=dict)
    #: position of the last call that makes a stream wait (or the host synchronise)
    last_sync: int = -1
    order: int = 0


class StreamWithoutSync(Rule):
    """
    ## What it does
    Flags, inside `with torch.cuda.stream(s):` where `s` is a stream the program made with
    `torch.cuda.Stream()`, a use of a tensor that the same function produced on the GPU on
    another stream - the one current before the block, or another side stream - when nothing
    between the two makes the streams wait for each other: `s.wait_stream(...)`,
    `s.wait_event(e)` / `e.wait(...)`, `torch.cuda.synchronize()`, `.synchronize()`.
    Only tensors the analysis knows to be on an accelerator and produced in the same function
    count; tensors that come from the caller, or from the host, are left alone.

    ## Why is this bad?
    Work queued on different CUDA streams runs in no fixed order. The side stream may read the
    tensor before the kernels that write it on the other stream have run, and reads garbage or
    stale values - silently, and only sometimes.

    ## Example
    ```python
    side = torch.cuda.Stream()
    hidden = model(x.to("cuda"))
    with torch.cuda.stream(side):
        summary = hidden.mean(dim=0)
    ```

    ## Use instead
    ```python
    side = torch.cuda.Stream()
    hidden = model(x.to("cuda"))
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        summary = hidden.mean(dim=0)
    ```
    """

    code = "DL406"
    name = "stream-without-sync"
    severity = Severity.ERROR
    summary = "A side stream uses a tensor another stream produced, without waiting for that stream."
    valid = (
        # the side stream waits for the current one
        "import torch\nside = torch.cuda.Stream()\nh = torch.randn(8, device='cuda')\n"
        "side.wait_stream(torch.cuda.current_stream())\nwith torch.cuda.stream(side):\n    y = h * 2\n",
        # an event recorded after the producer and waited for inside the block
        "import torch\nside = torch.cuda.Stream()\nready = torch.cuda.Event()\nh = torch.randn(8, device='cuda')\n"
        "ready.record()\nwith torch.cuda.stream(side):\n    ready.wait()\n    y = h * 2\n",
        # produced on the side stream itself
        "import torch\nside = torch.cuda.Stream()\nwith torch.cuda.stream(side):\n"
        "    h = torch.randn(8, device='cuda')\n    y = h * 2\n",
        # host data copied in by the side stream (prefetching): nothing on the GPU to wait for
        "import torch\nside = torch.cuda.Stream()\nbatch = torch.randn(8)\nwith torch.cuda.stream(side):\n"
        "    batch = batch.cuda(non_blocking=True)\n",
        # a stream handed in by the caller: it may already wait
        "import torch\ndef run(stream):\n    h = torch.randn(8, device='cuda')\n    with torch.cuda.stream(stream):\n"
        "        return h * 2\n",
    )
    invalid = (
        Example(
            "import torch\nside = torch.cuda.Stream()\nh = torch.randn(8, device='cuda')\n"
            "with torch.cuda.stream(side):\n    y = h * 2  # expect: DL406\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Prefetch(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.side = torch.cuda.Stream()\n    def step(self, x: torch.Tensor):\n        h = x.cuda() + 1\n"
            "        with torch.cuda.stream(self.side):\n            out = torch.relu(h)  # expect: DL406\n"
            "        torch.cuda.current_stream().wait_stream(self.side)\n        return out\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._facts: dict[int, _FunctionFacts] = {}
        self._reported: set[tuple[int, str]] = set()
        #: a side stream is entered only through `torch.cuda.stream(...)` / `StreamContext`: a
        #: file that never spells "stream" has none, and its assignments need no tracking
        self._file_may_use_streams = not ctx.source or _STREAM_TEXT.search(ctx.source) is not None

    # ------------------------------------------------------------------ events

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        if not self._file_may_use_streams:
            return
        key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if key is None:
            return
        facts = self._function_facts()
        facts.order += 1
        reads_produced = False
        if facts.produced:
            # operators on values of unknown kind emit no event: read the names syntactically
            reads = NamesRead(into_lambdas=False)
            walk.visit(value_node, reads)
            for read in reads.nodes:
                name = dotted_name(read)
                if name in facts.produced:
                    reads_produced = True
                    self._check_use(read, None, facts)
        off_accelerator = value.device is not None and not value.device.may_be_accelerator
        if _on_accelerator(value) or (reads_produced and not off_accelerator):
            # computed on the GPU from a GPU tensor: produced on the current stream as well
            facts.produced[key] = _Produced(self._current_stream(), facts.order, statement)
        else:
            facts.produced.pop(key, None)

    def on_call(self, event: CallEvent) -> None:
        if not self._file_may_use_streams:
            return
        facts = self._function_facts()
        facts.order += 1
        if self._synchronises(event):
            facts.last_sync = facts.order
            return
        operands = [(arg.value, value) for arg, value in event.args]
        if isinstance(event.node.func, cst.Attribute) and event.receiver is not None:
            operands.append((event.node.func.value, event.receiver))
        for node, value in operands:
            self._check_use(node, value, facts)

    def on_binary(self, event: BinaryEvent) -> None:
        if not self._file_may_use_streams:
            return
        facts = self._function_facts()
        facts.order += 1
        self._check_use(event.left_node, event.left, facts)
        self._check_use(event.right_node, event.right, facts)

    # ------------------------------------------------------------------ helpers

    def _function_facts(self) -> _FunctionFacts:
        node = self.ctx.current_function.node
        return self._facts.setdefault(id(node), _FunctionFacts())

    def _current_stream(self) -> Optional[str]:
        stack = self.ctx.analyzer.stream_stack
        return stack[-1].label if stack else None

    def _synchronises(self, event: CallEvent) -> bool:
        if event.qualname in api.STREAM_SYNC_FUNCTIONS:
            return True
        if event.method not in api.STREAM_SYNC_METHODS:
            return False
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        if event.method == "wait_stream" and not self.ctx.analyzer.stream_stack and self._is_current_stream(func.value):
            # torch.cuda.current_stream().wait_stream(side) outside the block: the other direction
            return False
        return True

    def _is_current_stream(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Call):
            return False
        return self.ctx.analyzer.qualname_of(node.func, self.ctx.analyzer.module_state) in api.CURRENT_STREAM_FUNCTIONS

    def _check_use(self, node: cst.BaseExpression, value: Optional[Value], facts: _FunctionFacts) -> None:
        stack = self.ctx.analyzer.stream_stack
        if not stack or not stack[-1].side_stream:
            return
        if value is not None and value.device is not None and not value.device.may_be_accelerator:
            return
        key = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if key is None:
            return
        produced = facts.produced.get(key)
        current = stack[-1].label
        if produced is None or produced.stream == current or produced.order < facts.last_sync:
            return
        if (id(produced.node), current) in self._reported:
            return
        self._reported.add((id(produced.node), current))
        if produced.stream is None:
            where, other = "the stream current before the block", "torch.cuda.current_stream()"
        else:
            where, other = f"stream `{produced.stream}`", produced.stream
        self.ctx.report(
            node,
            f"`{key}` was produced on {where} at line {self.ctx.line(produced.node)} and is used on stream "
            f"`{current}` with nothing making `{current}` wait: `{current}` may run before `{key}` is ready; "
            f"call `{current}.wait_stream({other})` before the block",
        )


_STREAM_TEXT = re.compile("stream", re.IGNORECASE)


def _on_accelerator(value: Value) -> bool:
    """A tensor (or something moved like one: ``torch.cat(parts).to(device)``) known to be on
    an accelerator."""
    return value.kind in (Kind.TENSOR, Kind.BATCH, Kind.UNKNOWN) and value.device is not None and value.device.may_be_accelerator
