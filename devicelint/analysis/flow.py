"""The flow-sensitive device-flow analysis.

An abstract interpreter over one module: it executes statements on a state that maps names
(``x``, ``self.fc``) to abstract Values, joins states where branches merge, runs loop bodies to a
fixpoint, and analyses every function and method once, methods seeing the ``self.*`` attributes
that ``__init__`` left. It dispatches on node types directly (a generic libcst walk costs more
than the parse itself) and emits events - calls, binary operations, expression statements,
subscript assignments - to an EventSink; rules subscribe to those events and never walk the tree.

Torch names are resolved by qualified name through the imports the interpreter executes, so
``import torch as t``, ``from torch import nn`` and ``from torch.nn import CrossEntropyLoss as CE``
all work, and a local that shadows an import stops being torch.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Protocol

import libcst as cst

from devicelint.analysis import helpers
from devicelint.analysis import torch_api as api
from devicelint.analysis.names import (
    dotted_name,
    keyword_arg,
    looks_like_dtype_name,
    positional_args,
)
from devicelint.analysis.values import (
    CPU,
    MODEL_DEVICE,
    UNKNOWN,
    Device,
    follows,
    Kind,
    Origin,
    Value,
    device_from_string,
    join,
)

State = dict  # name or dotted name ("self.fc") -> Value

#: the state key that holds the default device of factories (torch.set_default_device, with torch.device)
DEFAULT_DEVICE_KEY = "<default device>"

_MAX_FIXPOINT_PASSES = 3
_BUILTIN_REFS = frozenset(
    "enumerate zip range list tuple sorted reversed iter next len print isinstance map filter dict set".split()
)
_DTYPE_NAMES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 long uint8 "
    "bool complex64 complex128 cfloat".split()
)
_SAME_MODULE_METHODS = frozenset(
    "half float double bfloat16 train eval requires_grad_ share_memory zero_grad".split()
)
_MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})
#: methods that can turn a tensor with dimensions into a 0-dim one
_RANK_REDUCING_METHODS = api.FULL_REDUCTIONS | frozenset(
    "squeeze select argmax argmin dot item view reshape flatten unbind split chunk topk sort".split()
)


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    is_module: bool
    #: a framework (Lightning, transformers) places this model itself: its device is unknown
    framework_placed: bool
    is_dataset: bool
    bases: tuple["ClassInfo", ...]
    methods: dict[str, cst.FunctionDef]
    #: ``self.*`` values at the end of ``__init__``
    attributes: dict[str, Value] = field(default_factory=dict)
    owns_parameters: Optional[bool] = None
    #: ``__init__`` has been analysed, so ``attributes`` is final
    init_analysed: bool = False
    #: ``self.*`` names written by methods other than ``__init__`` (computed once)
    written_elsewhere: Optional[frozenset[str]] = None
    places_itself: Optional[bool] = None


@dataclass(eq=False)
class CriterionInfo:
    """Identity shared by a criterion Value across its moves, for DL104."""

    node: cst.Call
    weight: Value
    moved: bool = False
    escaped: bool = False
    registered: bool = False


@dataclass(eq=False)
class LoaderInfo:
    node: cst.Call
    pin_memory: bool


@dataclass(frozen=True)
class Homogeneous:
    """Container payload: every element has this value (comprehensions, list(...), iterators)."""

    element: Value


@dataclass(frozen=True)
class StreamContext:
    """What ``torch.cuda.stream(s)`` returns: entering it makes ``s`` the current stream."""

    #: how the source spells the stream (``s``, ``self.copy_stream``): its identity in messages
    label: str
    #: ``s`` is known to be a stream this program created (``torch.cuda.Stream()``)
    side_stream: bool


#: ``info`` of the value of ``torch.cuda.Stream()``: a new stream, not the current one
NEW_STREAM = "new stream"


@dataclass(eq=False)
class FunctionContext:
    node: Optional[cst.FunctionDef]
    class_info: Optional[ClassInfo]

    @property
    def name(self) -> str:
        return self.node.name.value if self.node is not None else "<module>"


@dataclass(eq=False)
class LoopInfo:
    node: cst.CSTNode
    _assigned: Optional[frozenset[str]] = None

    @property
    def assigned(self) -> frozenset[str]:
        """Names and dotted names written (or mutated in place) anywhere in the loop."""
        if self._assigned is None:
            collector = _AssignedNames()
            self.node.visit(collector)
            self._assigned = frozenset(collector.names)
        return self._assigned


class _AssignedNames(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def _add_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._add_target(element.value)
            return
        if isinstance(target, cst.StarredElement):
            self._add_target(target.value)
            return
        if isinstance(target, cst.Subscript):
            self._add_target(target.value)
            return
        name = dotted_name(target)
        if name is not None:
            self.names.add(name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._add_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._add_target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._add_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._add_target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._add_target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._add_target(node.asname.name)

    def visit_Call(self, node: cst.Call) -> None:
        # x.add_(1), x.copy_(y), x.data = ...: in-place mutation changes what a move copies
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.endswith("__"):
            self._add_target(func.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


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


@dataclass
class FileFacts:
    """Whole-file facts that some rules weigh at the end."""

    #: calls that move something to an accelerator, in analysis order
    accelerator_moves: list[cst.Call] = field(default_factory=list)
    criteria: list[CriterionInfo] = field(default_factory=list)
    #: the program picks its device when it runs (`torch.cuda.is_available()`, a device count,
    #: `torch.device(args.device)`): it is meant for machines with and without that GPU
    chooses_device_at_run_time: bool = False


_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_MODULE_ANNOTATIONS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


class FlowAnalyzer:
    def __init__(self, module: cst.Module, sink: EventSink, source_of: Callable[[cst.CSTNode], str]) -> None:
        self.module = module
        self.sink = sink
        self.source_of = source_of
        self.emitting = True
        self.loop_stack: list[LoopInfo] = []
        self.function_stack: list[FunctionContext] = [FunctionContext(None, None)]
        self.facts = FileFacts()
        self.module_state: State = {}
        #: each analysed function's state at the end of its body, keyed by its node
        self.function_states: dict[cst.FunctionDef, State] = {}
        self._statement_call: Optional[cst.BaseExpression] = None
        self._pending: list[tuple[cst.FunctionDef, Optional[ClassInfo], Optional[State]]] = []
        self._enclosing: list[State] = []
        self._classes: list[ClassInfo] = []
        #: functions defined inside another function: their free names live in the caller
        self._nested_functions: set[cst.FunctionDef] = set()
        self._inline_depth = 0
        self._inlining: set[cst.FunctionDef] = set()
        #: per helper being summarised: the values its return statements gave
        self._returns: list[list[Value]] = []
        self._summaries: dict[tuple, Value] = {}
        self._summaries_left = helpers.MAX_SUMMARIES
        self._helper_facts: dict[cst.FunctionDef, tuple[bool, bool, frozenset[str]]] = {}
        #: every torch factory call evaluated: its qualified name and the function it is in
        self.factory_calls: dict[int, tuple[str, Optional[cst.FunctionDef]]] = {}
        #: per free function: the arguments of each call a reporting pass made of it (None for
        #: a call whose arguments do not bind); its own analysis starts from their join
        self._call_sites: dict[cst.FunctionDef, list[Optional[dict[str, Value]]]] = {}
        #: per function: its body's text, for the two parameter scans below (regenerating it
        #: is not free, so it is done once)
        self._body_texts: dict[cst.FunctionDef, str] = {}
        #: per function: the unannotated parameters its body uses as tensors
        self._tensor_parameters: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per function: the parameters its body may move or hand on (see _may_move)
        self._moving_parameters: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per helper being summarised: did it reach a ``yield``
        self._yielded: list[bool] = []
        #: the ``with torch.cuda.stream(...)`` blocks being executed, innermost last
        self.stream_stack: list[StreamContext] = []
        self._stmt_handlers = {
            cst.SimpleStatementLine: self._exec_simple_line,
            cst.If: self._exec_if,
            cst.For: self._exec_for,
            cst.While: self._exec_while,
            cst.With: self._exec_with,
            cst.Try: self._exec_try,
            cst.FunctionDef: self._exec_function_def,
            cst.ClassDef: self._exec_class_def,
        }
        self._small_handlers = {
            cst.Expr: self._exec_expr_statement,
            cst.Assign: self._exec_assign,
            cst.AnnAssign: self._exec_ann_assign,
            cst.AugAssign: self._exec_aug_assign,
            cst.Return: self._exec_return,
            cst.Import: self._exec_import,
            cst.ImportFrom: self._exec_import_from,
            cst.Assert: self._exec_assert,
            cst.Raise: self._exec_raise,
            cst.Del: self._exec_del,
        }
        self._expr_handlers = {
            cst.Name: self._eval_name,
            cst.Attribute: self._eval_attribute,
            cst.Call: self._eval_call,
            cst.Subscript: self._eval_subscript,
            cst.BinaryOperation: self._eval_binary,
            cst.UnaryOperation: self._eval_unary,
            cst.Comparison: self._eval_comparison,
            cst.BooleanOperation: self._eval_boolean,
            cst.IfExp: self._eval_if_exp,
            cst.Tuple: self._eval_sequence,
            cst.List: self._eval_sequence,
            cst.Set: self._eval_sequence,
            cst.Dict: self._eval_dict,
            cst.ListComp: self._eval_comprehension,
            cst.SetComp: self._eval_comprehension,
            cst.GeneratorExp: self._eval_comprehension,
            cst.DictComp: self._eval_comprehension,
            cst.SimpleString: self._eval_simple_string,
            cst.ConcatenatedString: self._eval_other_string,
            cst.FormattedString: self._eval_other_string,
            cst.Integer: self._eval_number,
            cst.Float: self._eval_number,
            cst.Imaginary: self._eval_number,
            cst.NamedExpr: self._eval_named_expr,
            cst.Await: self._eval_passthrough,
            cst.StarredElement: self._eval_passthrough,
            cst.Lambda: self._eval_opaque,
            cst.Ellipsis: self._eval_opaque,
            cst.Yield: self._eval_yield,
        }

    # ------------------------------------------------------------------ driver

    def run(self) -> None:
        # the module's state is live while the module body runs: classes instantiated at
        # module level resolve the names their __init__ uses through it
        self.exec_block(self.module.body, self.module_state)
        while self._pending:
            function, class_info, enclosing = self._pending.pop(self._next_pending())
            self._analyse_function(function, class_info, enclosing)

    def _next_pending(self) -> int:
        """Callers before callees: a free function with parameters waits until something calls
        it (or nothing else is left), so that its analysis starts from its callers' arguments -
        the model and the loader handed to ``evaluate(model, loader, device)``."""
        for index, (function, class_info, enclosing) in enumerate(self._pending[:_PENDING_LOOKAHEAD]):
            if enclosing is not None or function in self._call_sites:
                return index
            if class_info is not None and function.name.value == "__init__":
                return index  # the other methods see the attributes it sets
            if not _has_arguments(function, class_info is not None):
                return index
        return 0

    def _bound_by_callers(self, function: cst.FunctionDef) -> dict[str, Value]:
        """Each parameter's join over the calls the file makes of the function; a parameter
        some call leaves to its default, or a call that does not bind, gives nothing."""
        sites = self._call_sites.get(function)
        if not sites or any(site is None for site in sites):
            return {}
        bound: dict[str, Value] = {}
        first, *others = sites
        assert first is not None
        for name, value in first.items():
            for other in others:
                assert other is not None
                if name not in other:
                    break
                value = join(value, other[name])
            else:
                if value.kind != Kind.UNKNOWN:
                    bound[name] = value
        return bound

    @property
    def current_function(self) -> FunctionContext:
        return self.function_stack[-1]

    def is_tensor_parameter(self, param: cst.Param) -> bool:
        """Is the parameter annotated ``torch.Tensor`` (or ``nn.Parameter``)?"""
        if param.annotation is None or param.star in ("*", "**"):
            return False
        return self.qualname_of(param.annotation.annotation, self.module_state) in _TENSOR_ANNOTATIONS

    def _parameter_value(self, param: cst.Param) -> Value:
        """A parameter annotated ``torch.Tensor`` is a tensor on a device nobody knows here; one
        annotated ``nn.Module`` (or a module class of the file) is a module the caller placed."""
        if param.annotation is None or param.star in ("*", "**"):
            return UNKNOWN
        if self.is_tensor_parameter(param):
            return Value(Kind.TENSOR)
        annotation = param.annotation.annotation
        qualname = self.qualname_of(annotation, self.module_state)
        if qualname in _MODULE_ANNOTATIONS:
            return Value(Kind.MODULE)
        if qualname in api.DATALOADER_NAMES:
            # batches of a DataLoader are collated on the host
            return Value(Kind.LOADER, CPU, Origin(param, "loader"))
        if isinstance(annotation, cst.Name):
            known = self.module_state.get(annotation.value)
            if known is not None and known.kind == Kind.CLASS and known.info.is_module:
                return Value(Kind.MODULE, info=known.info)
        return UNKNOWN

    def _parameter_state(
        self,
        function: cst.FunctionDef,
        self_param: Optional[cst.Param],
        self_value: Value,
        attributes_of: Optional[ClassInfo],
        bound: dict[str, Value],
        use_defaults: bool,
    ) -> State:
        """The state a function's body starts from: ``self`` (with the ``self.*`` attributes of
        ``attributes_of``), the ``bound`` argument values, then defaults (when ``use_defaults``)
        or what the annotations say."""
        params = function.params
        state: State = {}
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            if param is self_param:
                state[name] = self_value
                if attributes_of is not None:
                    for attribute, value in self._attributes_seen_by_methods(attributes_of).items():
                        state[f"{name}.{attribute}"] = _as_seen_from_method(value, attributes_of.is_module)
            elif name in bound:
                state[name] = bound[name]
            elif use_defaults and param.default is not None:
                state[name] = self.eval(param.default, self.module_state)
            else:
                value = self._parameter_value(param)
                in_module = self_value.kind == Kind.MODULE and self_value.device is MODEL_DEVICE
                if value.kind == Kind.UNKNOWN and name in self._tensor_like_parameters(function, in_module):
                    value = Value(Kind.TENSOR)
                if value.kind == Kind.TENSOR and value.device is None:
                    if in_module:
                        value = Value(Kind.TENSOR, MODEL_DEVICE)  # a module's tensor inputs follow the model
                    elif self_param is None:
                        # a free function's tensor argument is where its caller put it
                        value = Value(Kind.TENSOR, follows(name, argument=True), info=value.info)
                state[name] = value
        for param in (params.star_arg, params.star_kwarg):
            if isinstance(param, cst.Param):
                state[param.name.value] = UNKNOWN
        return state

    @contextlib.contextmanager
    def _running(self, function: cst.FunctionDef, class_info: Optional[ClassInfo], enclosing: Optional[State]) -> Iterator[None]:
        """Make ``function`` the current function, with loops of its own and, for a nested
        function, the state of the function around it."""
        self.function_stack.append(FunctionContext(function, class_info))
        saved_loops, self.loop_stack = self.loop_stack, []
        if enclosing is not None:
            self._enclosing.append(enclosing)
        try:
            yield
        finally:
            if enclosing is not None:
                self._enclosing.pop()
            self.loop_stack = saved_loops
            self.function_stack.pop()

    def _analyse_function(self, node: cst.FunctionDef, class_info: Optional[ClassInfo], enclosing: Optional[State]) -> None:
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg]:
            if isinstance(param, cst.Param) and param.default is not None:
                self.eval(param.default, self.module_state)
        positional = [*params.posonly_params, *params.params]
        is_method = class_info is not None and not _is_static(node)
        self_param = positional[0] if is_method and positional else None
        self_value = UNKNOWN
        attributes_of = None
        if self_param is not None and class_info is not None:
            if class_info.is_module:
                self_value = Value(Kind.MODULE, MODEL_DEVICE, info=class_info)
            else:
                self_value = Value(Kind.UNKNOWN, info=class_info)
            attributes_of = class_info if node.name.value != "__init__" else None
        bound = self._bound_by_callers(node) if enclosing is None else {}
        state = self._parameter_state(node, self_param, self_value, attributes_of, bound, use_defaults=False)
        with self._running(node, class_info, enclosing):
            self.exec_block(helpers.body_statements(node), state)
        self.function_states[node] = state
        if class_info is not None and node.name.value == "__init__" and self_param is not None:
            prefix = self_param.name.value + "."
            for key, value in state.items():
                if key.startswith(prefix) and "." not in key[len(prefix):]:
                    class_info.attributes[key[len(prefix):]] = value
            class_info.init_analysed = True

    def _tensor_like_parameters(self, function: cst.FunctionDef, in_module: bool = False) -> frozenset[str]:
        """Unannotated parameters the body uses as torch tensors: ``x.size(1)``, ``x.unsqueeze(0)``,
        ``x.detach()`` (methods numpy arrays and modules do not have)."""
        found = self._tensor_parameters.get(function)
        if found is None:
            members = _MODULE_INPUT_MEMBERS if in_module else _TENSOR_ONLY_MEMBERS
            params = function.params
            names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params] if p.annotation is None]
            names = [name for name in names if name not in ("self", "cls")]
            found = frozenset()
            if names:
                pattern = re.compile(rf"\b({'|'.join(map(re.escape, names))})\s*\.\s*{members}")
                found = frozenset(match.group(1) for match in pattern.finditer(self._body_text(function)))
            self._tensor_parameters[function] = found
        return found

    def _body_text(self, function: cst.FunctionDef) -> str:
        text = self._body_texts.get(function)
        if text is None:
            text = self._body_texts[function] = self.source_of(function.body)
        return text

    def _written_elsewhere(self, class_info: ClassInfo) -> frozenset[str]:
        """Attributes that methods other than ``__init__`` assign: they may hold anything."""
        if class_info.written_elsewhere is None:
            written: set[str] = set()
            for name, method in class_info.methods.items():
                if name == "__init__":
                    continue
                assigned = helpers.assigned_names(helpers.body_statements(method))
                written.update(name[5:] for name in assigned if name.startswith("self."))
            class_info.written_elsewhere = frozenset(written)
        return class_info.written_elsewhere

    def _attributes_seen_by_methods(self, class_info: ClassInfo) -> dict[str, Value]:
        """``self.*`` as any method but ``__init__`` sees it: what the ``__init__`` of the class
        and of its bases in this file left, less what other methods of the class or of its
        bases assign."""
        merged: dict[str, Value] = {}
        for base in reversed(class_info.bases):
            merged.update(self._attributes_seen_by_methods(base))
        merged.update(class_info.attributes)
        for attribute in self._written_elsewhere(class_info):
            if attribute in merged:
                merged[attribute] = UNKNOWN
        return merged

    def _attributes_ready(self, class_info: ClassInfo) -> bool:
        if "__init__" in class_info.methods and not class_info.init_analysed:
            return False
        return all(self._attributes_ready(base) for base in class_info.bases)

    # ------------------------------------------------------------------ statements

    def exec_block(self, statements: Iterable[cst.BaseStatement], state: State) -> None:
        handlers = self._stmt_handlers
        for statement in statements:
            handler = handlers.get(type(statement))
            if handler is not None:
                handler(statement, state)
            elif isinstance(statement, cst.Match) if hasattr(cst, "Match") else False:
                self._exec_match(statement, state)

    def _exec_simple_line(self, line: cst.SimpleStatementLine, state: State) -> None:
        handlers = self._small_handlers
        for small in line.body:
            handler = handlers.get(type(small))
            if handler is not None:
                handler(small, state)

    def _exec_expr_statement(self, node: cst.Expr, state: State) -> None:
        self._statement_call = node.value
        value = self.eval(node.value, state)
        call = node.value
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in ("to", "cuda", "cpu")
        ):
            self._bare_move_statement(call, value, state)
        if self.emitting:
            self.sink.on_expression_statement(node, value)

    def _bare_move_statement(self, call: cst.Call, result: Value, state: State) -> None:
        """``m.to(d)`` as a statement on an object of unknown kind: only a module moves in place."""
        receiver_node = call.func.value  # type: ignore[union-attr]
        key = dotted_name(receiver_node)
        if key is None or result.device is None:
            return
        current = self.lookup(key, state)
        if current.kind == Kind.UNKNOWN and current.info is None:
            # a module, or anything else that moves in place (a diffusers pipeline): what its
            # call returns is not known to be a tensor
            state[key] = Value(Kind.MODULE, result.device, result.origin, info=INFERRED_MODULE)

    def _exec_assign(self, node: cst.Assign, state: State) -> None:
        value = self.eval(node.value, state)
        for target in node.targets:
            if self.emitting:
                self.sink.on_assign(node, target.target, node.value, value)
            self.assign(target.target, value, state, node.value)

    def _exec_ann_assign(self, node: cst.AnnAssign, state: State) -> None:
        if node.value is not None:
            value = self.eval(node.value, state)
            if self.emitting:
                self.sink.on_assign(node, node.target, node.value, value)
            self.assign(node.target, value, state, node.value)

    def _exec_aug_assign(self, node: cst.AugAssign, state: State) -> None:
        left = self.eval(node.target, state)
        right = self.eval(node.value, state)
        result = self._combine(node, node.target, left, node.value, right)
        if isinstance(node.target, (cst.Name, cst.Attribute)):
            self.assign(node.target, result, state, node.value)

    def _exec_return(self, node: cst.Return, state: State) -> None:
        value = self.eval(node.value, state) if node.value is not None else _NONE
        if self._returns:
            self._returns[-1].append(value)

    def _exec_assert(self, node: cst.Assert, state: State) -> None:
        self.eval_condition(node.test, state)

    def _exec_raise(self, node: cst.Raise, state: State) -> None:
        if node.exc is not None:
            self.eval(node.exc, state)

    def _exec_del(self, node: cst.Del, state: State) -> None:
        key = dotted_name(node.target) if isinstance(node.target, (cst.Name, cst.Attribute)) else None
        if key is not None:
            state.pop(key, None)

    def _exec_import(self, node: cst.Import, state: State) -> None:
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                state[alias.asname.name.value] = Value(Kind.REF, qualname=full)
            else:
                top = full.split(".")[0]
                state[top] = Value(Kind.REF, qualname=top)

    def _exec_import_from(self, node: cst.ImportFrom, state: State) -> None:
        if node.relative or node.module is None:
            base = None
        else:
            base = dotted_name(node.module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            if base is None:
                state[bound] = UNKNOWN
            else:
                state[bound] = Value(Kind.REF, qualname=f"{base}.{name}")

    def _exec_if(self, node: cst.If, state: State) -> None:
        self.eval_condition(node.test, state)
        body_state = dict(state)
        self.exec_block(node.body.body, body_state)
        else_state = dict(state)
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            self._exec_if(orelse, else_state)
        elif isinstance(orelse, cst.Else):
            self.exec_block(orelse.body.body, else_state)
        merged = join_states(body_state, else_state)
        defaulted = _none_checked_name(node.test)
        if defaulted is not None:
            # `if hidden is None: hidden = torch.zeros(...)`: the caller left the argument out,
            # and the function makes its own - that path is the default one, so keep its tensor
            name, none_branch = defaulted
            made = (body_state if none_branch else else_state).get(name)
            if made is not None and made.kind == Kind.TENSOR and merged.get(name, UNKNOWN).kind == Kind.UNKNOWN:
                merged[name] = made
        _replace(state, merged)

    def _exec_match(self, node: cst.CSTNode, state: State) -> None:
        self.eval(node.subject, state)  # type: ignore[attr-defined]
        branches = []
        for case in node.cases:  # type: ignore[attr-defined]
            branch = dict(state)
            self.exec_block(case.body.body, branch)
            branches.append(branch)
        merged = dict(state)
        for branch in branches:
            merged = join_states(merged, branch)
        _replace(state, merged)

    def _exec_for(self, node: cst.For, state: State) -> None:
        iterable = self.eval(node.iter, state)
        element = self.element_of(iterable)

        def bind(loop_state: State) -> None:
            self.assign(node.target, element, loop_state, None)

        self._exec_loop(node, node.body.body, bind, None, state)
        if node.orelse is not None:
            self.exec_block(node.orelse.body.body, state)

    def _exec_while(self, node: cst.While, state: State) -> None:
        self._exec_loop(node, node.body.body, None, node.test, state)
        if node.orelse is not None:
            self.exec_block(node.orelse.body.body, state)

    def _exec_loop(
        self,
        node: cst.CSTNode,
        body: Iterable[cst.BaseStatement],
        bind: Optional[Callable[[State], None]],
        test: Optional[cst.BaseExpression],
        state: State,
    ) -> None:
        body = list(body)
        loop = LoopInfo(node)
        self.loop_stack.append(loop)
        was_emitting = self.emitting
        entry = dict(state)
        try:
            # Silent passes find the loop-head state; inside an outer silent pass one is enough,
            # since the outer loop's reporting pass runs this loop to its own fixpoint.
            self.emitting = False
            passes = _MAX_FIXPOINT_PASSES if was_emitting else 1
            for attempt in range(passes):
                iteration = dict(entry)
                self._run_iteration(body, bind, test, iteration)
                widened = _keep_first_iteration(entry, join_states(entry, iteration))
                if widened == entry:
                    break
                if attempt == passes - 1:
                    widened = _widen(entry, widened)
                entry = widened
            self.emitting = was_emitting
            final = dict(entry)
            self._run_iteration(body, bind, test, final)
        finally:
            self.emitting = was_emitting
            self.loop_stack.pop()
        _replace(state, join_states(entry, final))

    def _run_iteration(
        self,
        body: list[cst.BaseStatement],
        bind: Optional[Callable[[State], None]],
        test: Optional[cst.BaseExpression],
        state: State,
    ) -> None:
        if test is not None:
            self.eval_condition(test, state)
        if bind is not None:
            bind(state)
        self.exec_block(body, state)

    def _exec_with(self, node: cst.With, state: State) -> None:
        scoped_default: Optional[Value] = None
        stream: Optional[StreamContext] = None
        for item in node.items:
            value = self.eval(item.item, state)
            if value.kind == Kind.DEVICE and isinstance(item.item, cst.Call):
                scoped_default = value
            if isinstance(value.info, StreamContext):
                stream = value.info
            if item.asname is not None:
                self.assign(item.asname.name, value if value.kind != Kind.DEVICE else UNKNOWN, state, None)
        if stream is not None:
            self.stream_stack.append(stream)
        try:
            self._exec_with_body(node, scoped_default, state)
        finally:
            if stream is not None:
                self.stream_stack.pop()

    def _exec_with_body(self, node: cst.With, scoped_default: Optional[Value], state: State) -> None:
        if scoped_default is None:
            self.exec_block(node.body.body, state)
            return
        previous = state.get(DEFAULT_DEVICE_KEY)
        state[DEFAULT_DEVICE_KEY] = scoped_default
        self.exec_block(node.body.body, state)
        if previous is None:
            state.pop(DEFAULT_DEVICE_KEY, None)
        else:
            state[DEFAULT_DEVICE_KEY] = previous

    def _exec_try(self, node: cst.Try, state: State) -> None:
        before = dict(state)
        self.exec_block(node.body.body, state)
        after_body = dict(state)
        merged = join_states(before, after_body)
        outcomes = [after_body]
        for handler in node.handlers:
            handler_state = dict(merged)
            if handler.type is not None:
                self.eval(handler.type, handler_state)
            self.exec_block(handler.body.body, handler_state)
            outcomes.append(handler_state)
        if node.orelse is not None:
            self.exec_block(node.orelse.body.body, outcomes[0])
        result = outcomes[0]
        for other in outcomes[1:]:
            result = join_states(result, other)
        if node.finalbody is not None:
            self.exec_block(node.finalbody.body.body, result)
        _replace(state, result)

    def _exec_function_def(self, node: cst.FunctionDef, state: State) -> None:
        for decorator in node.decorators:
            self.eval(decorator.decorator, state)
        state[node.name.value] = Value(Kind.FUNCTION, info=node)
        if not self.emitting:
            return  # a silent pass (loop fixpoint, helper summary): the reporting pass schedules it
        context = self.current_function
        if context.node is None and context.class_info is None:
            self._pending.append((node, None, None))
        else:
            self._nested_functions.add(node)
            self._pending.append((node, None, dict(state)))

    def _exec_class_def(self, node: cst.ClassDef, state: State) -> None:
        base_values = [self.eval(base.value, state) for base in node.bases]
        base_infos = tuple(value.info for value in base_values if value.kind == Kind.CLASS)
        qualnames = [value.qualname for value in base_values if value.kind == Kind.REF and value.qualname]
        is_module = any(api.is_module_base(q) for q in qualnames) or any(info.is_module for info in base_infos)
        framework = any(api.is_framework_module_base(q) for q in qualnames) or any(info.framework_placed for info in base_infos)
        is_dataset = any(q in api.DATASET_BASES for q in qualnames) or any(info.is_dataset for info in base_infos)
        methods: dict[str, cst.FunctionDef] = {}
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                methods[statement.name.value] = statement
        info = ClassInfo(
            name=node.name.value,
            node=node,
            is_module=is_module or framework,
            framework_placed=framework,
            is_dataset=is_dataset,
            bases=base_infos,
            methods=methods,
        )
        state[node.name.value] = Value(Kind.CLASS, info=info)
        if self.emitting:
            self._classes.append(info)
            # __init__ first: the other methods see the attributes it leaves
            ordered = sorted(methods.values(), key=lambda method: method.name.value != "__init__")
            for method in ordered:
                self._pending.append((method, info, None))
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                class_scope = dict(state)
                self._exec_simple_line(statement, class_scope)

    # ------------------------------------------------------------------ assignment

    def assign(self, target: cst.BaseExpression, value: Value, state: State, value_node: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Name):
            state[target.value] = value
            return
        if isinstance(target, cst.Attribute):
            key = dotted_name(target)
            if key is None:
                self.eval(target.value, state)
                return
            state[key] = value
            if value.kind == Kind.CRITERION and isinstance(value.info, CriterionInfo):
                context = self.current_function
                if context.class_info is not None and context.class_info.is_module and key.startswith("self."):
                    value.info.registered = True
            prefix = key + "."
            for stale in [name for name in state if name.startswith(prefix)]:
                del state[stale]
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            items = value.info if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) else None
            has_star = any(isinstance(element, cst.StarredElement) for element in elements)
            for position, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self.assign(element.value, Value(Kind.CONTAINER, info=Homogeneous(self.element_of(value))), state, None)
                    continue
                if items is not None and not has_star and len(items) == len(elements):
                    item = items[position]
                elif value.kind == Kind.TENSOR and value.info == MODEL_OUTPUT:
                    # `loss, kl, acc = model(x)`: a model's tuple of outputs lives on its device,
                    # but not every element is known to be a tensor (some are Python floats)
                    item = Value(Kind.UNKNOWN, value.device, value.origin)
                else:
                    item = self.element_of(value)
                self.assign(element.value, item, state, None)
            return
        if isinstance(target, cst.Subscript):
            self.eval(target.value, state)
            for element in target.slice:
                if isinstance(element.slice, cst.Index):
                    self.eval(element.slice.value, state)
            if self.emitting and value_node is not None:
                self.sink.on_subscript_assign(target, value_node, value)
            key = dotted_name(target.value)
            if key is not None and key in state and state[key].kind in (Kind.BATCH, Kind.CONTAINER):
                # batch["x"] = batch["x"].to(d): the collection is no longer all-CPU
                state[key] = Value(state[key].kind)
            return
        if isinstance(target, cst.StarredElement):
            self.assign(target.value, UNKNOWN, state, None)

    # ------------------------------------------------------------------ expressions

    def eval_condition(self, node: cst.BaseExpression, state: State) -> Value:
        """Evaluate an expression used for its truth value (if/while/assert tests, operands
        of and/or/not, conditional-expression tests)."""
        value = self.eval(node, state)
        if self.emitting:
            self.sink.on_condition(node, value)
        return value

    def eval(self, node: cst.BaseExpression, state: State) -> Value:
        handler = self._expr_handlers.get(type(node))
        if handler is None:
            return UNKNOWN
        return handler(node, state)

    def lookup(self, name: str, state: State) -> Value:
        value = state.get(name)
        if value is not None:
            return value
        for enclosing in reversed(self._enclosing):
            value = enclosing.get(name)
            if value is not None:
                return value
        value = self.module_state.get(name)
        if value is not None:
            return value
        if name in _BUILTIN_REFS:
            return Value(Kind.REF, qualname=name)
        return UNKNOWN

    def qualname_of(self, node: cst.BaseExpression, state: State) -> Optional[str]:
        """The qualified name a dotted expression refers to (``t.zeros`` -> ``torch.zeros``), or
        None. Side-effect free: it emits no event."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        value = self.lookup(head, state)
        if value.kind != Kind.REF or value.qualname is None:
            return None
        return f"{value.qualname}.{rest}" if rest else value.qualname

    def _eval_name(self, node: cst.Name, state: State) -> Value:
        name = node.value
        if name in ("True", "False", "None"):
            return Value(Kind.NUMBER, literal=None)
        return self.lookup(name, state)

    def _lookup_dotted(self, key: str, state: State) -> Optional[Value]:
        """What ``self.fc`` / ``args.device`` holds in this function or the ones around it; at
        module level, in the module's state."""
        known = state.get(key)
        if known is None:
            for enclosing in reversed(self._enclosing):
                known = enclosing.get(key)
                if known is not None:
                    break
        if known is None and self.current_function.node is None:
            known = self.module_state.get(key)
        return known

    def _eval_attribute(self, node: cst.Attribute, state: State) -> Value:
        key = dotted_name(node)
        if key is not None:
            known = self._lookup_dotted(key, state)
            if known is not None:
                return known
        base = self.eval(node.value, state)
        attribute = node.attr.value
        if base.kind == Kind.REF:
            return Value(Kind.REF, qualname=f"{base.qualname}.{attribute}")
        if base.kind == Kind.TENSOR:
            if attribute == "device":
                return Value(Kind.DEVICE, base.device if base.device is not None else follows(self._label(node)), base.origin)
            if attribute in ("T", "mT", "H", "mH", "data", "real", "imag", "values", "indices"):
                return Value(Kind.TENSOR, base.device, base.origin, scalar=base.scalar if attribute != "values" else None)
        return UNKNOWN

    def _eval_subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        index_value: Optional[Value] = None
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                index_value = self.eval(element.slice.value, state)
        if base.kind == Kind.TENSOR:
            return Value(Kind.TENSOR, base.device, base.origin)
        if base.kind == Kind.BATCH:
            return Value(Kind.TENSOR, base.device, base.origin, scalar=base.scalar)
        if base.kind == Kind.DATASET:
            return Value(Kind.BATCH, base.device, base.origin)
        if base.kind == Kind.MODULE:
            return Value(Kind.MODULE, base.device, base.origin)
        if base.kind == Kind.CONTAINER:
            if isinstance(base.info, tuple) and index_value is not None and isinstance(index_value.literal, int):
                position = index_value.literal
                if -len(base.info) <= position < len(base.info) and len(node.slice) == 1:
                    return base.info[position]
                return UNKNOWN
            if isinstance(base.info, Homogeneous) and len(node.slice) == 1:
                return base.info.element
        return UNKNOWN

    def _eval_binary(self, node: cst.BinaryOperation, state: State) -> Value:
        left = self.eval(node.left, state)
        right = self.eval(node.right, state)
        return self._combine(node, node.left, left, node.right, right)

    def _combine(self, node: cst.CSTNode, left_node: cst.BaseExpression, left: Value, right_node: cst.BaseExpression, right: Value) -> Value:
        if left.kind == Kind.STR and right.kind == Kind.STR:
            return Value(Kind.STR)
        left_tensor = left.kind in (Kind.TENSOR, Kind.BATCH)
        right_tensor = right.kind in (Kind.TENSOR, Kind.BATCH)
        if not (left_tensor or right_tensor):
            if left.kind == Kind.NUMBER and right.kind == Kind.NUMBER:
                return Value(Kind.NUMBER)
            return UNKNOWN
        if self.emitting:
            # one tensor side is enough: DL202 needs `model_output * cpu_tensor` where the
            # analysis does not know the model output is a tensor
            self.sink.on_binary(BinaryEvent(node, left_node, left, right_node, right))
        if left_tensor and right_tensor:
            return _propagate(left, right)
        tensor = left if left_tensor else right
        other = right if left_tensor else left
        if other.kind == Kind.NUMBER:
            return Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=tensor.scalar)
        if tensor.scalar is False and tensor.device is not None:
            # if the operation runs at all, its result lives where the non-0-dim operand does
            return Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=False)
        return Value(Kind.TENSOR)

    def _eval_unary(self, node: cst.UnaryOperation, state: State) -> Value:
        if isinstance(node.operator, cst.Not):
            self.eval_condition(node.expression, state)
            return UNKNOWN
        operand = self.eval(node.expression, state)
        if operand.kind == Kind.TENSOR:
            return operand
        if operand.kind == Kind.NUMBER:
            return Value(Kind.NUMBER)
        return UNKNOWN

    def _eval_comparison(self, node: cst.Comparison, state: State) -> Value:
        left_node = node.left
        left = self.eval(left_node, state)
        result = UNKNOWN
        for target in node.comparisons:
            right = self.eval(target.comparator, state)
            if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                continue
            combined = self._combine(node, left_node, left, target.comparator, right)
            if combined.kind == Kind.TENSOR:
                result = combined
            left_node, left = target.comparator, right
        return result

    def _eval_boolean(self, node: cst.BooleanOperation, state: State) -> Value:
        left = self.eval_condition(node.left, state)
        right = self.eval_condition(node.right, state)
        return join(left, right)

    def _eval_if_exp(self, node: cst.IfExp, state: State) -> Value:
        self.eval_condition(node.test, state)
        body = self.eval(node.body, state)
        orelse = self.eval(node.orelse, state)
        body_device = self._device_of_value(node.body, body)
        orelse_device = self._device_of_value(node.orelse, orelse)
        if body_device is not None and orelse_device is not None and (body_device.is_accel or orelse_device.is_accel):
            # "cuda" if torch.cuda.is_available() else "cpu": the accelerator, on any GPU machine
            accel = body_device if body_device.is_accel else orelse_device
            return Value(Kind.DEVICE, accel, Origin(node, "chosen"))
        return join(body, orelse)

    def _eval_sequence(self, node: cst.BaseExpression, state: State) -> Value:
        items = []
        starred = False
        for element in node.elements:  # type: ignore[attr-defined]
            value = self.eval(element.value, state)
            if isinstance(element, cst.StarredElement):
                starred = True
            items.append(value)
        if starred:
            return Value(Kind.CONTAINER)
        return Value(Kind.CONTAINER, info=tuple(items))

    def _eval_dict(self, node: cst.Dict, state: State) -> Value:
        element: Optional[Value] = None
        for item in node.elements:
            if isinstance(item, cst.DictElement):
                self.eval(item.key, state)
            value = self.eval(item.value, state)
            element = value if element is None else join(element, value)
        return Value(Kind.CONTAINER, info=Homogeneous(element) if element is not None and not any(
            isinstance(item, cst.StarredDictElement) for item in node.elements) else None)

    def _eval_comprehension(self, node: cst.BaseExpression, state: State) -> Value:
        scope = dict(state)
        clause: Optional[cst.CompFor] = node.for_in  # type: ignore[attr-defined]
        while clause is not None:
            iterable = self.eval(clause.iter, scope)
            self.assign(clause.target, self.element_of(iterable), scope, None)
            for condition in clause.ifs:
                self.eval_condition(condition.test, scope)
            clause = clause.inner_for_in
        if isinstance(node, cst.DictComp):
            self.eval(node.key, scope)
            element = self.eval(node.value, scope)
        else:
            element = self.eval(node.elt, scope)  # type: ignore[attr-defined]
        return Value(Kind.CONTAINER, info=Homogeneous(element))

    def _eval_simple_string(self, node: cst.SimpleString, state: State) -> Value:
        try:
            literal = node.evaluated_value
        except Exception:  # malformed escapes: the text is still a string
            literal = None
        return Value(Kind.STR, literal=literal if isinstance(literal, str) else None)

    def _eval_other_string(self, node: cst.BaseExpression, state: State) -> Value:
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.eval(part.expression, state)
        elif isinstance(node, cst.ConcatenatedString):
            self.eval(node.left, state)
            self.eval(node.right, state)
        return Value(Kind.STR)

    def _eval_number(self, node: cst.BaseExpression, state: State) -> Value:
        literal = None
        if isinstance(node, cst.Integer):
            try:
                literal = int(node.value.replace("_", ""), 0)
            except ValueError:
                literal = None
        return Value(Kind.NUMBER, literal=literal)

    def _eval_named_expr(self, node: cst.NamedExpr, state: State) -> Value:
        value = self.eval(node.value, state)
        self.assign(node.target, value, state, node.value)
        return value

    def _eval_passthrough(self, node: cst.BaseExpression, state: State) -> Value:
        return self.eval(node.expression if isinstance(node, cst.Await) else node.value, state)  # type: ignore[attr-defined]

    def _eval_yield(self, node: cst.Yield, state: State) -> Value:
        if self._yielded:
            self._yielded[-1] = True
        if isinstance(node.value, cst.BaseExpression):
            self.eval(node.value, state)
        elif node.value is not None:
            self.eval(node.value.item, state)
        return UNKNOWN

    def _eval_opaque(self, node: cst.BaseExpression, state: State) -> Value:
        return UNKNOWN

    # ------------------------------------------------------------------ iteration

    def element_of(self, iterable: Value) -> Value:
        kind = iterable.kind
        if kind == Kind.LOADER:
            return Value(Kind.BATCH, iterable.device, Origin(iterable.origin.node, "batch", from_data=True) if iterable.origin else None, scalar=False)
        if kind == Kind.DATASET:
            return Value(Kind.BATCH, iterable.device, iterable.origin)
        if kind == Kind.BATCH:
            return Value(Kind.TENSOR, iterable.device, iterable.origin, scalar=iterable.scalar)
        if kind == Kind.TENSOR:
            return Value(Kind.TENSOR, iterable.device, iterable.origin)
        if kind == Kind.MODULE:
            return Value(Kind.MODULE, iterable.device, iterable.origin)
        if kind == Kind.CONTAINER:
            if isinstance(iterable.info, Homogeneous):
                return iterable.info.element
            if isinstance(iterable.info, tuple) and iterable.info:
                element = iterable.info[0]
                for item in iterable.info[1:]:
                    element = join(element, item)
                return element
        return UNKNOWN

    # ------------------------------------------------------------------ calls

    def _eval_call(self, node: cst.Call, state: State) -> Value:
        func = node.func
        receiver: Optional[Value] = None
        method: Optional[str] = None
        stored = self._stored_module(func, state)
        if stored is not None:
            callee = stored  # `self.encoder(x)`: a call of the submodule, not a method of self
        elif isinstance(func, cst.Attribute):
            base = self.eval(func.value, state)
            if base.kind == Kind.REF:
                callee = Value(Kind.REF, qualname=f"{base.qualname}.{func.attr.value}")
            else:
                callee = UNKNOWN
                receiver = base
                method = func.attr.value
        else:
            callee = self.eval(func, state)
        args = tuple((arg, self.eval(arg.value, state)) for arg in node.args)
        qualname = callee.qualname if callee.kind == Kind.REF else None
        if method is not None and receiver is not None and receiver.kind == Kind.UNKNOWN and receiver.info is None and method in _MODULE_ONLY_METHODS:
            # `model.eval()`: only an nn.Module has these, so the object of unknown class is one
            key = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
            receiver = Value(Kind.MODULE, receiver.device, receiver.origin)
            if key is not None:
                state[key] = receiver
        if method is not None and receiver is not None:
            result = self._apply_method(node, receiver, method, args, state)
        elif qualname is not None:
            result = self._apply_qualified(node, qualname, args, state)
        elif callee.kind == Kind.CLASS:
            result = self._instantiate(node, callee.info, args)
        elif callee.kind in (Kind.MODULE, Kind.CRITERION):
            result = self._call_module(callee, args)
        elif callee.kind == Kind.UNKNOWN and callee.info is None and callee.device is not None:
            # something moved to a device and then called: a model of unknown class; what it
            # returns is there too, though not known to be a tensor
            result = Value(Kind.UNKNOWN, callee.device, callee.origin)
            self._escape(args, state)
        elif callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            result = self._summarise(callee.info, None, None, False, args, state)
            self._escape_into(callee.info, args, state, skip_first=False)
        else:
            result = UNKNOWN
            self._escape(args, state)
        if self.emitting:
            discarded = node is self._statement_call
            self.sink.on_call(CallEvent(node, qualname, callee, method, receiver, args, result, state, discarded))
        return result

    def _stored_module(self, func: cst.BaseExpression, state: State) -> Optional[Value]:
        """The module or criterion a dotted callee such as ``self.encoder`` holds, if known."""
        if not isinstance(func, cst.Attribute):
            return None
        key = dotted_name(func)
        if key is None:
            return None
        known = self._lookup_dotted(key, state)
        if known is not None and known.kind in (Kind.MODULE, Kind.CRITERION):
            return known
        if known is not None and known.kind == Kind.UNKNOWN and known.info is None and known.device is not None:
            return known  # `self.model = self.model.cuda()`: a moved object, called like a model
        return None

    # ------------------------------------------------------------------ helpers of the file

    def _call_own_method(
        self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> Optional[Value]:
        """``self._embed(x)``, ``helper.pad(x)``, ``Tools.pad(x)``: a method defined in this file.
        None when the method is not found here (the caller then treats the call as before)."""
        info = receiver.info
        assert isinstance(info, ClassInfo)
        found = _find_method(info, method)
        if found is None:
            return None
        function, owner = found
        if receiver.kind != Kind.CLASS and self._overridden_below(info, method):
            result = UNKNOWN  # a subclass here overrides it: which body runs depends on the object
        elif has_decorator(function, "staticmethod"):
            result = self._summarise(function, None, None, False, args, state)
        elif has_decorator(function, "classmethod"):
            result = self._summarise(function, owner, Value(Kind.CLASS, info=info), True, args, state)
        elif receiver.kind == Kind.CLASS:
            result = UNKNOWN  # Class.method(obj, ...): an unbound call
        else:
            result = self._summarise(function, owner, receiver, True, args, state)
            receiver_key = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if receiver_key is not None:
                self._forget_what_it_writes(function, receiver_key, state)
        if receiver.kind not in (Kind.MODULE, Kind.CRITERION):
            self._escape_into(function, args, state, skip_first=not has_decorator(function, "staticmethod"))
        return result

    def _overridden_below(self, info: ClassInfo, method: str) -> bool:
        for other in self._classes:
            if other is not info and method in other.methods and _inherits_from(other, info):
                return True
        return False

    def _forget_what_it_writes(self, function: cst.FunctionDef, receiver_key: str, state: State) -> None:
        written = self._facts_of(function)[2]
        if not written:
            return
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional:
            return
        prefix = positional[0].name.value + "."
        for name in written:
            if name.startswith(prefix):
                key = f"{receiver_key}.{name[len(prefix):]}"
                if key in state:
                    state[key] = UNKNOWN

    def _facts_of(self, function: cst.FunctionDef) -> tuple[bool, bool, frozenset[str]]:
        """(can be summarised, may fall off its end, dotted names it assigns)."""
        facts = self._helper_facts.get(function)
        if facts is None:
            summarisable = function.asynchronous is None and helpers.decorators_are_transparent(
                function, lambda e: self.qualname_of(e, self.module_state)
            )
            statements = helpers.body_statements(function)
            facts = (summarisable, helpers.may_fall_off_end(statements), helpers.assigned_names(statements))
            self._helper_facts[function] = facts
        return facts

    def _summarise(
        self,
        function: cst.FunctionDef,
        class_info: Optional[ClassInfo],
        self_value: Optional[Value],
        bind_self: bool,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
    ) -> Value:
        """What a call of a function of this file returns, given the caller's arguments: its body
        run silently on them (see devicelint.analysis.helpers)."""
        if self.emitting:
            site = helpers.bind_arguments(function, args, bind_self)
            self._call_sites.setdefault(function, []).append(site[1] if site is not None else None)
        if self._inline_depth >= helpers.MAX_DEPTH or function in self._inlining:
            return UNKNOWN
        summarisable, falls_off, _ = self._facts_of(function)
        if not summarisable or falls_off:
            return UNKNOWN
        binding = helpers.bind_arguments(function, args, bind_self)
        if binding is None:
            return UNKNOWN
        self_param, bound = binding
        default = self._default_device(state)
        ready = class_info is None or self._attributes_ready(class_info)
        key = (
            function,
            id(class_info),
            self_value,
            id(self_value.info) if self_value is not None else 0,
            tuple((name, value, id(value.info)) for name, value in sorted(bound.items(), key=lambda item: item[0])),
            default,
        )
        if ready:
            known = self._summaries.get(key)
            if known is not None:
                return known
        if self._summaries_left <= 0:
            return UNKNOWN
        self._summaries_left -= 1

        was_emitting = self.emitting
        self.emitting = False
        self._inline_depth += 1
        self._inlining.add(function)
        self._returns.append([])
        self._yielded.append(False)
        enclosing = state if function in self._nested_functions else None
        try:
            with self._running(function, class_info, enclosing):
                with_attributes = class_info if self_value is not None and self_value.kind != Kind.CLASS else None
                local = self._parameter_state(function, self_param, self_value or UNKNOWN, with_attributes, bound, use_defaults=True)
                if default is not None:
                    local[DEFAULT_DEVICE_KEY] = default
                self.exec_block(helpers.body_statements(function), local)
        finally:
            returns = self._returns.pop()
            yielded = self._yielded.pop()
            self._inlining.discard(function)
            self._inline_depth -= 1
            self.emitting = was_emitting
        result = UNKNOWN
        if returns and not yielded:  # a generator function returns a generator
            result = returns[0]
            for other in returns[1:]:
                result = join(result, other)
            result = helpers.attributed_to(result, function, self.factory_home)
        if ready:
            self._summaries[key] = result
        return result

    def device_less_factory(self, value: Value) -> Optional[tuple[cst.Call, str, Optional[cst.FunctionDef]]]:
        """The torch factory call without ``device=`` that made this host tensor: the call, its
        qualified name and the function it ran in (None at module level). None for any other
        value, also for a factory that got its device from a default-device scope."""
        if value.kind != Kind.TENSOR or value.device is None or not value.device.is_cpu:
            return None
        origin = value.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return None
        made = self.factory_calls.get(id(origin.node))
        if made is None or keyword_arg(origin.node, "device") is not None:
            return None
        return origin.node, made[0], made[1]

    def _default_device(self, state: State) -> Optional[Value]:
        """The default device factories use here (``torch.set_default_device``, ``with torch.device``)."""
        default = self.lookup(DEFAULT_DEVICE_KEY, state)
        return default if default.kind == Kind.DEVICE else None

    def factory_home(self, call: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The function a torch factory call was evaluated in (None at module level or for a
        call that is not a factory)."""
        made = self.factory_calls.get(id(call))
        return made[1] if made is not None else None

    def _escape_into(self, function: cst.FunctionDef, args: tuple[tuple[cst.Arg, Value], ...], state: State, skip_first: bool) -> None:
        """A module handed to a function of this file keeps its device unless the function
        may move it (``model.to(...)``, ``model.cuda()``) or hands it on to other code."""
        if not any(value.kind in (Kind.MODULE, Kind.CRITERION) for _, value in args):
            return  # nothing that could escape: spare the scan of the callee's text
        moving = self._may_move(function)
        names = helpers.argument_parameters(function, args, skip_first)
        self._escape(tuple(pair for pair, name in zip(args, names) if name is None or name in moving), state)

    def _may_move(self, function: cst.FunctionDef) -> frozenset[str]:
        """Parameters the function's body may move or hand on: ``p.to(`` / ``p.cuda(`` and the
        like, ``p`` rebound, or ``p`` passed bare to another call."""
        moving = self._moving_parameters.get(function)
        if moving is None:
            params = function.params
            names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
            text = self._body_text(function)
            moving = frozenset(name for name in names if _moves_or_hands_on(name).search(text))
            self._moving_parameters[function] = moving
        return moving

    def _escape(self, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> None:
        """A module handed to code we cannot see may be moved there: forget its device."""
        for arg, value in args:
            if value.kind in (Kind.MODULE, Kind.CRITERION):
                if isinstance(value.info, CriterionInfo):
                    value.info.escaped = True
                key = dotted_name(arg.value)
                if key is not None and value.device is not None:
                    state[key] = Value(value.kind, None, value.origin, info=value.info)

    def _call_module(self, callee: Value, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if callee.info == INFERRED_MODULE:
            return Value(Kind.UNKNOWN, callee.device, callee.origin)  # not known to be a tensor
        device = callee.device
        origin = callee.origin
        if device is None:
            for _, value in args:
                if value.kind in (Kind.TENSOR, Kind.BATCH) and value.device is not None:
                    device, origin = value.device, value.origin
                    break
        return Value(Kind.TENSOR, device, origin, scalar=True if callee.kind == Kind.CRITERION else None, info=MODEL_OUTPUT)

    def _apply_qualified(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        if qualname in api.FACTORIES:
            return self._factory(node, qualname, args, state)
        if qualname in api.CPU_PRODUCERS:
            return Value(Kind.TENSOR, CPU, Origin(node, f"created from numpy by `{_spelled(node)}`", from_data=True), scalar=None)
        if qualname in api.DEVICE_PROBES:
            self.facts.chooses_device_at_run_time = True
        if qualname == api.TORCH_DEVICE:
            if args and args[0][1].kind not in (Kind.STR, Kind.NUMBER):
                self.facts.chooses_device_at_run_time = True
            return self._torch_device(node, args)
        if qualname in api.STREAM_CONSTRUCTORS:
            return Value(Kind.UNKNOWN, info=NEW_STREAM)
        if qualname in api.STREAM_CONTEXTS and args:
            stream_node, stream = args[0][0].value, args[0][1]
            return Value(Kind.UNKNOWN, info=StreamContext(self._label(stream_node), stream.info == NEW_STREAM))
        if qualname == "torch.set_default_device":
            if args:
                state[DEFAULT_DEVICE_KEY] = Value(Kind.DEVICE, self.device_of(args[0][0].value, args[0][1]))
            return UNKNOWN
        if qualname.startswith("torch.") and qualname.endswith("_like") and args:
            first = args[0][1]
            device_arg = keyword_arg(node, "device")
            if device_arg is not None:
                return Value(Kind.TENSOR, self.device_of(device_arg.value, self.eval(device_arg.value, state)), Origin(node, "created"))
            return Value(Kind.TENSOR, first.device, first.origin, scalar=first.scalar)
        if qualname == "torch.nn.Parameter" or qualname == "torch.nn.parameter.Parameter":
            data = args[0][1] if args else UNKNOWN
            return Value(Kind.TENSOR, data.device, data.origin, scalar=data.scalar, info="parameter")
        if qualname in api.PARALLEL_WRAPPERS or (qualname.startswith("torch.") and qualname.endswith("DataParallel")):
            wrapped = args[0][1] if args else UNKNOWN
            return Value(Kind.MODULE, wrapped.device, wrapped.origin, info="parallel-wrapper")
        if qualname in api.DATALOADER_NAMES:
            return self._data_loader(node, args)
        if qualname in api.TENSOR_DATASET_NAMES:
            device: Optional[Device] = CPU
            for _, value in args:
                device = value.device if value.kind == Kind.TENSOR and device is not None and (device == value.device or device is CPU and value.device is CPU) else None
            return Value(Kind.DATASET, device, Origin(node, "dataset", from_data=True))
        if qualname.startswith("torchvision.datasets."):
            return Value(Kind.DATASET, CPU, Origin(node, "dataset", from_data=True))
        if qualname.startswith(api.OPTIMIZER_PREFIX) and qualname.rsplit(".", 1)[-1][:1].isupper() and "lr_scheduler" not in qualname:
            return Value(Kind.OPTIMIZER, origin=Origin(node, "created"), info=args[0][1] if args else None)
        if qualname == "torch.compile" or qualname == "torch.jit.script" or qualname in api.VARIABLE_WRAPPERS:
            return args[0][1] if args else UNKNOWN
        if qualname in api.PASS_THROUGH_ITERABLES:
            return args[0][1] if args else UNKNOWN
        if qualname in _BUILTIN_REFS:
            return self._builtin(qualname, args)
        if qualname == "io.BytesIO" and not args:
            # an empty buffer: whatever is loaded from it was saved by this very process
            return Value(Kind.UNKNOWN, info=IN_PROCESS_BUFFER)
        if qualname.startswith("torch.nn.") and not qualname.startswith(("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.")):
            leaf = qualname.rsplit(".", 1)[-1]
            if leaf[:1].isupper():
                return self._nn_class(node, qualname, leaf, args, state)
        if is_model_factory(qualname):
            return Value(Kind.MODULE, CPU, Origin(node, f"created by `{_spelled(node)}`"))
        if qualname.endswith(".from_pretrained"):
            if qualname.startswith("diffusers.") and "Pipeline" in qualname:
                return UNKNOWN  # a diffusers pipeline is not an nn.Module: its call returns images
            return Value(Kind.MODULE, None, Origin(node, "loaded"))
        if qualname in api.NON_TENSOR_FUNCTIONS:
            self._escape(args, state)
            return UNKNOWN
        if qualname.startswith(("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")) or (
            qualname.startswith("torch.") and qualname.count(".") == 1
        ):
            return self._tensor_function(node, qualname, args)
        self._escape(args, state)
        return UNKNOWN

    def _builtin(self, name: str, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if name == "enumerate" and args:
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.NUMBER), self.element_of(args[0][1])))))
        if name == "zip":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=tuple(self.element_of(value) for _, value in args))))
        if name == "range":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.NUMBER)))
        if name in ("list", "tuple", "sorted", "reversed", "iter") and len(args) == 1:
            return Value(Kind.CONTAINER, info=Homogeneous(self.element_of(args[0][1])))
        if name == "len":
            return Value(Kind.NUMBER)
        if name == "next" and args:
            return self.element_of(args[0][1])
        return UNKNOWN

    def _factory(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        device_arg = keyword_arg(node, "device")
        origin = Origin(node, f"created by `{_spelled(node)}`")
        self.factory_calls[id(node)] = (qualname, self.current_function.node)
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        if qualname in ("torch.tensor", "torch.as_tensor") and positional and positional[0][1].kind == Kind.TENSOR and device_arg is None:
            source = positional[0][1]
            return Value(Kind.TENSOR, source.device, source.origin, scalar=source.scalar)
        if device_arg is not None:
            device = self.device_of(device_arg.value, self.eval(device_arg.value, state))
            origin = Origin(node, f"created on {device.describe() if device else 'a device'} by `{_spelled(node)}`")
        elif any(arg.star == "**" for arg, _ in args):
            device = None  # `torch.zeros(n, **factory_kwargs)`: the device may be among them (timm's `**dd`)
        else:
            default = self._default_device(state)
            device = CPU if default is None else default.device
        return Value(Kind.TENSOR, device, origin, scalar=_factory_scalar(qualname, positional, node))

    def _torch_device(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if not args:
            return Value(Kind.DEVICE)
        first_node, first = args[0][0].value, args[0][1]
        device = self.device_of(first_node, first)
        if device is not None and device.is_accel and len(args) > 1 and isinstance(args[1][1].literal, int):
            device = Device("accel", device.label, args[1][1].literal)
        return Value(Kind.DEVICE, device, Origin(node, "chosen"))

    def _data_loader(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        dataset = UNKNOWN
        for arg, value in args:
            if arg.keyword is None and not arg.star or arg.keyword is not None and arg.keyword.value == "dataset":
                dataset = value
                break
        device: Optional[Device] = CPU
        if dataset.kind == Kind.DATASET:
            device = dataset.device
        elif dataset.kind == Kind.TENSOR or dataset.kind == Kind.UNKNOWN and dataset.info is not None:
            device = None
        if keyword_arg(node, "collate_fn") is not None or any(arg.star for arg, _ in args):
            device = None
        pin = keyword_arg(node, "pin_memory")
        pinned = pin is not None and not (isinstance(pin.value, cst.Name) and pin.value.value == "False")
        return Value(Kind.LOADER, device, Origin(node, "loader"), info=LoaderInfo(node, pinned))

    def _nn_class(self, node: cst.Call, qualname: str, leaf: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        origin = Origin(node, f"created by `{_spelled(node)}`")
        device_arg = keyword_arg(node, "device")
        explicit = self.device_of(device_arg.value, self.eval(device_arg.value, state)) if device_arg is not None else None
        if leaf.endswith("Loss"):
            weight = UNKNOWN
            for name in ("weight", "pos_weight"):
                weight_arg = keyword_arg(node, name)
                if weight_arg is not None:
                    weight = next((value for arg, value in args if arg is weight_arg), UNKNOWN)
                    break
            info = None
            device = None
            if weight.kind == Kind.TENSOR:
                device = weight.device
                info = CriterionInfo(node, weight)
                self.facts.criteria.append(info)
            return Value(Kind.CRITERION, device, weight.origin if device is not None else origin, info=info)
        if qualname in api.MODULE_CONTAINERS:
            device = None
            for _, value in args:
                candidates = [value] if value.kind == Kind.MODULE else list(value.info) if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) else []
                for candidate in candidates:
                    if candidate.kind == Kind.MODULE and candidate.device is not None:
                        device = candidate.device if device is None or device == candidate.device else None
            return Value(Kind.MODULE, device, origin)
        if qualname in api.PARAMETERISED_LAYERS:
            if device_arg is not None:
                return Value(Kind.MODULE, explicit, origin)
            default = self._default_device(state)
            return Value(Kind.MODULE, CPU if default is None else default.device, origin)
        return Value(Kind.MODULE, explicit, origin)

    def _tensor_function(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        tensors = [value for _, value in args if value.kind in (Kind.TENSOR, Kind.BATCH)]
        for _, value in args:
            if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
                tensors.extend(item for item in value.info if item.kind == Kind.TENSOR)
        if not tensors:
            return Value(Kind.TENSOR) if qualname.startswith("torch.nn.functional.") else UNKNOWN
        result = tensors[0]
        for other in tensors[1:]:
            result = _propagate(result, other)
        leaf = qualname.rsplit(".", 1)[-1]
        positional = positional_args(node)
        scalar: Optional[bool] = None
        if qualname in api.FUNCTIONAL_LOSSES:
            reduction = keyword_arg(node, "reduction")
            scalar = True if reduction is None else None
        elif leaf in api.FULL_REDUCTIONS and len(positional) == 1 and len(node.args) == 1:
            scalar = True
        elif result.scalar is False and qualname in api.MIXING_FUNCTIONS:
            scalar = False
        return Value(Kind.TENSOR, result.device, result.origin, scalar=scalar)

    def _instantiate(self, node: cst.Call, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        origin = Origin(node, f"created by `{_spelled(node)}`")
        if info.is_module:
            device = None
            if not info.framework_placed and self._owns_parameters(info) and not self._places_itself(info):
                device = CPU
            return Value(Kind.MODULE, device, origin, info=info)
        if info.is_dataset:
            device = None if self._places_data(info) else CPU
            return Value(Kind.DATASET, device, Origin(node, "dataset", from_data=True), info=info)
        return Value(Kind.UNKNOWN, info=info)

    def _owns_parameters(self, info: ClassInfo) -> bool:
        if info.owns_parameters is None:
            info.owns_parameters = False
            init = info.methods.get("__init__")
            if init is None:
                info.owns_parameters = any(self._owns_parameters(base) for base in info.bases)
            else:
                finder = _ParameterFinder(self, info)
                init.body.visit(finder)
                info.owns_parameters = finder.found or any(self._owns_parameters(base) for base in info.bases)
        return info.owns_parameters

    def _places_itself(self, info: ClassInfo) -> bool:
        if info.places_itself is None:
            init = info.methods.get("__init__")
            text = self.source_of(init) if init is not None else ""
            info.places_itself = bool(_PLACEMENT_TEXT.search(text)) or any(self._places_itself(base) for base in info.bases)
        return info.places_itself

    def _places_data(self, info: ClassInfo) -> bool:
        text = "".join(self.source_of(method) for name, method in info.methods.items() if name in ("__getitem__", "__iter__", "__init__"))
        return bool(_PLACEMENT_TEXT.search(text)) or any(self._places_data(base) for base in info.bases)

    # ------------------------------------------------------------------ methods

    def _apply_method(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        kind = receiver.kind
        if method in api.MOVE_METHODS:
            return self._move(node, receiver, method, args, state)
        if isinstance(receiver.info, ClassInfo) and method not in _BUILT_IN_MODULE_METHODS:
            own = self._call_own_method(node, receiver, method, args, state)
            if own is not None:
                return own
        if kind == Kind.TENSOR or kind == Kind.BATCH:
            if method in api.HOST_RESULT_METHODS:
                return Value(Kind.NDARRAY) if method == "numpy" else UNKNOWN
            if kind == Kind.BATCH and method in ("items", "values", "keys", "get", "pop"):
                element = Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=receiver.scalar)
                if method == "items":
                    return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.STR), element))))
                if method == "values":
                    return Value(Kind.CONTAINER, info=Homogeneous(element))
                return element if method in ("get", "pop") else UNKNOWN
            if kind == Kind.TENSOR and method == "type_as" and args:
                other = args[0][1]  # converts to the other tensor's dtype and device
                return Value(Kind.TENSOR, other.device, other.origin, scalar=receiver.scalar) if other.kind == Kind.TENSOR else UNKNOWN
            if kind == Kind.TENSOR and method in api.SAME_DEVICE_METHODS:
                scalar: Optional[bool] = None
                if method in api.FULL_REDUCTIONS and not node.args:
                    scalar = True
                elif method.startswith("new_"):
                    scalar = False
                elif receiver.scalar is False and method not in _RANK_REDUCING_METHODS:
                    scalar = False
                return Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=scalar)
            return UNKNOWN
        if kind in (Kind.MODULE, Kind.CRITERION):
            if method in _SAME_MODULE_METHODS:
                return receiver
            if method in _MODULE_PARAMETER_METHODS:
                return Value(Kind.PARAMETERS, info=receiver)
            if method == "forward":
                return self._call_module(receiver, args)
            if method == "register_buffer" and len(args) >= 2 and isinstance(args[0][0].value, cst.SimpleString):
                name = args[0][1].literal
                if isinstance(name, str) and isinstance(node.func, cst.Attribute):
                    owner = dotted_name(node.func.value)
                    if owner is not None:
                        state[f"{owner}.{name}"] = Value(Kind.TENSOR, None, args[1][1].origin, info="buffer")
            return UNKNOWN
        if kind == Kind.CONTAINER and isinstance(receiver.info, Homogeneous):
            if method == "items" or method == "values":
                return receiver if method == "values" else Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.STR), receiver.info.element))))
            if method in ("get", "pop"):
                return receiver.info.element
        if kind in (Kind.UNKNOWN, Kind.DEVICE, Kind.STR, Kind.NUMBER, Kind.NDARRAY):
            self._escape(args, state)
        return UNKNOWN

    def _move(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        target = self._move_target(node, receiver, method, args, state)
        kind = receiver.kind
        if target is _UNCHANGED:
            return receiver if kind in (Kind.TENSOR, Kind.BATCH, Kind.MODULE, Kind.CRITERION) else UNKNOWN
        device: Optional[Device] = target  # type: ignore[assignment]
        if device is not None and device.may_be_accelerator:
            self.facts.accelerator_moves.append(node)
        how = "moved to the CPU" if device is not None and device.is_cpu else f"moved to {device.describe()}" if device is not None else "moved"
        origin = Origin(node, how)
        if kind in (Kind.MODULE, Kind.CRITERION):
            if isinstance(receiver.info, CriterionInfo):
                receiver.info.moved = True
            moved = Value(kind, device, origin, info=receiver.info)
            key = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if key is not None:
                state[key] = moved
            return moved
        if kind == Kind.TENSOR:
            scalar = receiver.scalar
            return Value(Kind.TENSOR, device, origin, scalar=scalar, info=None)
        if kind == Kind.BATCH:
            return Value(Kind.BATCH, device, origin, scalar=receiver.scalar)
        if kind == Kind.CONTAINER or kind == Kind.LOADER or kind == Kind.DATASET:
            return UNKNOWN
        return Value(Kind.UNKNOWN, device, origin)

    def _move_target(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> object:
        if method == "cpu":
            return CPU
        if method == "pin_memory":
            return _UNCHANGED
        if method in ("cuda", "xpu", "mps"):
            if not args:
                return Device("accel", f"{method}")
            arg, value = args[0]
            if isinstance(value.literal, int):
                return Device("accel", f"{method}:{value.literal}", value.literal)
            device = self.device_of(arg.value, value)
            if device is not None:
                return device
            return Device("accel", self._label(arg.value))
        # .to(...)
        device_arg = keyword_arg(node, "device")
        if device_arg is not None:
            value = next(value for arg, value in args if arg is device_arg)
            return self.device_of(device_arg.value, value)
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        if not positional:
            if any(arg.star for arg, _ in args):
                return None
            return _UNCHANGED  # .to(dtype=...), .to(memory_format=...)
        arg, value = positional[0]
        if value.kind == Kind.TENSOR:
            return value.device
        if value.kind == Kind.REF and value.qualname and value.qualname.rsplit(".", 1)[-1] in _DTYPE_NAMES:
            return _UNCHANGED
        if value.kind == Kind.UNKNOWN and looks_like_dtype_name(arg.value):
            return _UNCHANGED
        return self.device_of(arg.value, value)

    def device_of(self, node: cst.BaseExpression, value: Value) -> Optional[Device]:
        """The device an expression denotes, labelled as the source spells it; None if unknown."""
        if value.kind == Kind.DEVICE:
            device = value.device
            if device is not None and device.is_accel and isinstance(node, (cst.Name, cst.Attribute)):
                return Device("accel", self._label(node), device.index)
            return device
        if value.kind == Kind.STR and isinstance(value.literal, str):
            return device_from_string(value.literal, self._label(node))
        if value.kind == Kind.NUMBER and isinstance(value.literal, int) and not isinstance(value.literal, bool):
            return Device("accel", f"cuda:{value.literal}", value.literal)
        if value.kind == Kind.NUMBER and value.literal is None and not _is_none(node):
            return Device("accel", self._label(node))  # an int device is an accelerator ordinal
        if value.kind == Kind.TENSOR:
            return value.device
        if value.kind == Kind.UNKNOWN and value.info is None and not _is_none(node):
            # the code uses it as a device (`x.to(device)`, `device=args.device`): whatever the
            # caller or configuration chose, which can be the accelerator
            return follows(self._label(node))
        return None

    def _device_of_value(self, node: cst.BaseExpression, value: Value) -> Optional[Device]:
        if value.kind in (Kind.STR, Kind.DEVICE):
            return self.device_of(node, value)
        return None

    def _label(self, node: cst.BaseExpression) -> str:
        name = dotted_name(node)
        if name is not None:
            return name
        text = self.source_of(node)
        return text if len(text) <= 40 else text[:37] + "..."


def _moves_or_hands_on(name: str) -> "re.Pattern[str]":
    escaped = re.escape(name)
    return re.compile(
        rf"\b{escaped}\s*\.\s*(to|cuda|cpu|xpu|mps|_apply|apply|to_empty)\s*\("  # moved
        rf"|[(,]\s*{escaped}\s*[,)]"  # handed to another call
        rf"|(?<![.\w]){escaped}\s*=[^=]"  # rebound
    )


_PENDING_LOOKAHEAD = 200
#: methods of nn.Module that optimizers, pipelines, datasets and tensors do not have
_MODULE_ONLY_METHODS = frozenset(
    "eval train parameters named_parameters modules named_modules children named_children buffers".split()
)
#: inside an nn.Module's method, inputs are tensors (numpy arrays there are rare): these
#: members, shared with numpy, say so too
_MODULE_INPUT_MEMBERS = r"(shape\b|dtype\b|reshape\s*\(|view\s*\(|transpose\s*\(|flatten\s*\(|(size|dim|unsqueeze|permute|expand|contiguous|detach|numel|masked_fill_?|new_\w+|softmax|type_as)\s*\()"
#: members of torch tensors that numpy arrays, Python numbers and nn.Modules lack
_TENSOR_ONLY_MEMBERS = (
    r"(size|dim|unsqueeze|permute|expand|expand_as|view_as|new_zeros|new_ones|new_empty|new_full|"
    r"new_tensor|contiguous|masked_fill_?|index_select|scatter_?|scatter_add_?|gather|detach|numel|"
    r"is_cuda|get_device|type_as|narrow|repeat_interleave|masked_select|bmm|softmax|log_softmax|"
    r"long|int|bool)\s*\("
)
_UNCHANGED = object()
_NONE = Value(Kind.NUMBER, literal=None)
#: methods of nn.Module the analysis models itself, even where a class of the file defines them
_BUILT_IN_MODULE_METHODS = _SAME_MODULE_METHODS | _MODULE_PARAMETER_METHODS | {"forward", "register_buffer", "__init__"}
IN_PROCESS_BUFFER = "in-process buffer"
#: ``info`` of what a module call returns: a tensor, or a tuple of outputs not all of which are tensors
MODEL_OUTPUT = "model output"
#: ``info`` of an object of unknown kind taken for a module because a bare ``x.to(d)`` moved it
INFERRED_MODULE = "inferred module"
_PLACEMENT_TEXT = re.compile(r"\.to\(|\.cuda\(|device")


class _ParameterFinder(cst.CSTVisitor):
    """Does an ``__init__`` build layers with parameters, or parameters themselves?"""

    def __init__(self, analyzer: FlowAnalyzer, info: ClassInfo) -> None:
        self.analyzer = analyzer
        self.info = info
        self.found = False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        if self.found:
            return False
        name = dotted_name(node.func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        value = self.analyzer.module_state.get(head)
        if value is None:
            return None
        if value.kind == Kind.REF:
            qualname = f"{value.qualname}.{rest}" if rest else value.qualname
            if qualname in api.PARAMETERISED_LAYERS or is_model_factory(qualname):
                self.found = True
        elif value.kind == Kind.CLASS and not rest and value.info is not self.info and value.info.is_module:
            if self.analyzer._owns_parameters(value.info):
                self.found = True
        if name.endswith("register_buffer"):
            self.found = True
        return None


def is_model_factory(qualname: str) -> bool:
    """``timm.create_model(...)``, ``torchvision.models.resnet18(...)``: a model with weights."""
    if qualname in api.MODEL_FACTORIES:
        return True
    if qualname.startswith(api.TORCHVISION_MODELS):
        leaf = qualname[len(api.TORCHVISION_MODELS):]
        return "." not in leaf and leaf[:1].islower() and not leaf.startswith(("get_", "list_", "_"))
    return False


def _find_method(info: ClassInfo, name: str) -> Optional[tuple[cst.FunctionDef, ClassInfo]]:
    """The method ``name`` of a class of this file, looked up through its bases in this file."""
    method = info.methods.get(name)
    if method is not None:
        return method, info
    for base in info.bases:
        found = _find_method(base, name)
        if found is not None:
            return found
    return None


def _inherits_from(info: ClassInfo, ancestor: ClassInfo) -> bool:
    return any(base is ancestor or _inherits_from(base, ancestor) for base in info.bases)


def has_decorator(node: cst.FunctionDef, name: str) -> bool:
    return any(dotted_name(decorator.decorator) == name for decorator in node.decorators)


def _is_static(node: cst.FunctionDef) -> bool:
    """A static or class method: its first parameter is not the instance."""
    return has_decorator(node, "staticmethod") or has_decorator(node, "classmethod")


def _as_seen_from_method(value: Value, owner_is_module: bool) -> Value:
    """``self.*`` as another method sees it. In an ``nn.Module``, registered submodules,
    parameters and buffers are wherever the model went: they follow the model. Elsewhere a
    module attribute placed by ``__init__`` on an accelerator (or on a symbolic device) stays
    there; one left on the CPU may be moved by any method, so its device is unknown."""
    if value.kind in (Kind.MODULE, Kind.CRITERION):
        if owner_is_module:
            return Value(value.kind, MODEL_DEVICE, value.origin, info=value.info)
        keep = value.device is not None and value.device.may_be_accelerator
        return Value(value.kind, value.device if keep else None, value.origin, info=value.info)
    if value.kind == Kind.TENSOR and value.info in ("parameter", "buffer"):
        return Value(Kind.TENSOR, MODEL_DEVICE if owner_is_module else None, value.origin, scalar=value.scalar, info=value.info)
    return value


def _propagate(left: Value, right: Value) -> Value:
    """The device of a result computed from two tensors (assuming the operation ran)."""
    if left.device is not None and right.device is not None and not left.device.conflicts_with(right.device):
        return Value(Kind.TENSOR, left.device, left.origin, scalar=False if left.scalar is False or right.scalar is False else None)
    if left.scalar is False and left.device is not None:
        return Value(Kind.TENSOR, left.device, left.origin, scalar=False)
    if right.scalar is False and right.device is not None:
        return Value(Kind.TENSOR, right.device, right.origin, scalar=False)
    return Value(Kind.TENSOR, scalar=False if left.scalar is False or right.scalar is False else None)


def _factory_scalar(qualname: str, positional: list[tuple[cst.Arg, Value]], node: cst.Call) -> Optional[bool]:
    if qualname in ("torch.tensor", "torch.as_tensor"):
        if not positional:
            return None
        value = positional[0][1]
        if value.kind == Kind.NUMBER:
            return True
        if value.kind == Kind.CONTAINER:
            return False
        return None
    if qualname in api.DATA_FACTORIES:
        return False if positional else None
    for arg, value in positional:
        if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and not value.info:
            return True
    if positional or keyword_arg(node, "size") is not None:
        return False
    return None


def _has_arguments(function: cst.FunctionDef, is_method: bool) -> bool:
    """Does the function take arguments from its caller (beyond a method's ``self``/``cls``)?"""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if is_method and not has_decorator(function, "staticmethod"):
        positional = positional[1:]
    return bool(positional or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _spelled(node: cst.Call) -> str:
    return dotted_name(node.func) or "call"


def _replace(state: State, new: State) -> None:
    state.clear()
    state.update(new)


def join_states(first: State, second: State) -> State:
    if first is second:
        return dict(first)
    result = dict(first)
    for key, value in second.items():
        existing = result.get(key)
        if existing is None:
            result[key] = value
        elif existing is not value:
            result[key] = join(existing, value)
    return result


def _keep_first_iteration(entry: State, joined: State) -> State:
    """At a loop head, a host tensor made before the loop by a call without ``device=`` (a
    factory, ``.cpu()``) is what the first iteration sees, whatever later iterations rebind it
    to: keep it, so a hidden state made on the CPU and fed to the model is seen on the first step."""
    for key, value in entry.items():
        if (
            value.kind == Kind.TENSOR
            and value.device is not None
            and value.device.is_cpu
            and value.origin is not None
            and isinstance(value.origin.node, cst.Call)
            and keyword_arg(value.origin.node, "device") is None
            and joined.get(key) is not value
        ):
            joined[key] = value
    return joined


def _none_checked_name(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """``x is None`` -> ("x", True): the body runs when x is None; ``x is not None`` -> ("x", False)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.left, cst.Name):
        return None
    target = test.comparisons[0]
    if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
        return None
    if isinstance(target.operator, cst.Is):
        return test.left.value, True
    if isinstance(target.operator, cst.IsNot):
        return test.left.value, False
    return None


def _widen(before: State, after: State) -> State:
    """Give up on names that still change after the last fixpoint pass."""
    return {key: value if before.get(key) == value else UNKNOWN for key, value in after.items()}
