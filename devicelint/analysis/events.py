"""What the analysis tells the rules as it runs: the events of an EventSink.

The interpreter (devicelint.analysis.flow) emits them on its reporting passes only - calls,
binary operations, expression statements, subscript and plain assignments, conditions, tensor
indexing - each with the abstract Values it computed; rules subscribe to them and never walk the
tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

import libcst as cst

from devicelint.analysis.state import State
from devicelint.analysis.values import Kind, Value, homogeneous_element


@dataclass(frozen=True)
class CallEvent:
    node: cst.Call
    #: the callee's qualified name when it resolves to an import (``torch.zeros``)
    qualname: Optional[str]
    callee: Value
    #: for ``obj.method(...)`` calls on a non-import object
    method: Optional[str]
    receiver: Optional[Value]
    args: tuple[tuple[cst.Arg, Value], ...]
    result: Value
    state: State
    #: the call is a whole expression statement: its result is thrown away
    discarded: bool = False
    #: for a library function that runs a module on inputs it is handed (thop's
    #: ``profile(model, inputs=(x,))``, see torch_api.MODULE_RUNNERS): the module's expression.
    #: The event is then that module's call - ``callee`` the module, ``args`` its inputs
    runs_module: Optional[cst.BaseExpression] = None

    @property
    def callee_node(self) -> cst.BaseExpression:
        """The expression of what is called: ``node.func``, or the module a library function
        runs (``runs_module``)."""
        return self.runs_module if self.runs_module is not None else self.node.func

    def operands(self, keywords: Optional[frozenset[str]] = None) -> list[tuple[cst.BaseExpression, Value]]:
        """The tensors a mixing call (``torch.cat``, ``torch.where``, ``x.gather``) puts on one
        device: its tensor arguments, with the tensor elements of a literal list or tuple
        (``torch.cat([a, b])``); of its keyword arguments only those named in ``keywords``
        (all when None)."""
        found: list[tuple[cst.BaseExpression, Value]] = []
        for arg, value in self.args:
            if arg.keyword is not None and keywords is not None and arg.keyword.value not in keywords:
                continue
            if value.is_tensor_like:
                found.append((arg.value, value))
            elif value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and isinstance(arg.value, (cst.List, cst.Tuple)):
                found.extend((element.value, item) for element, item in zip(arg.value.elements, value.info) if item.is_tensor_like)
        return found

    def list_elements(self) -> list[tuple[cst.BaseExpression, Value]]:
        """What the tensor lists a ``torch._foreach_*`` call takes hold (``[p.data for p in
        params]``, a list of tensors): per list argument whose elements are known tensors, the
        argument's expression and what every element is."""
        found: list[tuple[cst.BaseExpression, Value]] = []
        for arg, value in self.args:
            if arg.star or value.kind != Kind.CONTAINER:
                continue
            element = homogeneous_element(value)
            if element is not None and element.is_tensor_like:
                found.append((arg.value, element))
        return found


@dataclass(frozen=True)
class BinaryEvent:
    node: cst.CSTNode
    left_node: cst.BaseExpression
    left: Value
    right_node: cst.BaseExpression
    right: Value


class EventSink(Protocol):
    def on_call(self, event: CallEvent) -> None: ...

    def on_binary(self, event: BinaryEvent) -> None: ...

    def on_expression_statement(self, node: cst.Expr, value: Value) -> None: ...

    def on_subscript_assign(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None: ...

    def on_condition(self, node: cst.BaseExpression, value: Value) -> None: ...

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None: ...

    def on_index(self, node: cst.Subscript, base: Value, index_node: cst.BaseExpression, index: Value) -> None:
        """``base[index]`` read, where both are tensor-like; ``node.value`` is the indexed
        expression. Once per tensor index of the subscript. Not for assignment targets
        (``base[index] = v``): PyTorch moves their indices to ``base``'s device itself."""
        ...

    def on_return(self, node: cst.Return, value: Value) -> None:
        """``return value`` in the function being analysed (not in a summarised helper)."""
        ...

    def on_ndarray_store(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        """``array[i] = value`` where ``array`` is a numpy array."""
        ...

    def on_index_put(self, target: cst.Subscript, base: Value, index: Value, value_node: cst.BaseExpression, value: Value) -> None:
        """``base[index] = value`` where ``index`` (one tensor index of the subscript, the first)
        is tensor-like: PyTorch runs ``index_put_``, which moves the indices to ``base``'s device
        but needs ``value`` (unless 0-dim) on that device too."""
        ...
