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

The interpreter lives here; what library calls do is devicelint.analysis.torch_semantics, how
the file's own functions and classes are analysed and summarised is
devicelint.analysis.summaries (both mixed into FlowAnalyzer), the state and its joins are
devicelint.analysis.state, the events devicelint.analysis.events and the facts kept about the
file devicelint.analysis.facts.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Sequence, Union

import libcst as cst

from devicelint.analysis import constructions, graphs, helpers, ranks
from devicelint.analysis.function_text import FunctionTexts
from devicelint.analysis import torch_api as api
from devicelint.analysis.events import BinaryEvent, CallEvent, EventSink
from devicelint.analysis.host_test_modules import HostTestModules
from devicelint.analysis.facts import (
    CRITERION_BUILDER,
    ClassInfo,
    CriterionInfo,
    FileFacts,
    FunctionContext,
    LoaderInfo,
    LoopInfo,
    RebuiltModule,
    StreamContext,
)
from devicelint.analysis.names import dotted_name, string_value
from devicelint.analysis.project_imports import ProjectImports, ProjectRef
from devicelint.analysis.state import (
    DEFAULT_DEVICE_KEY,
    State,
    join_states,
    keep_first_iteration,
    none_checked_name,
    replace_state,
    widen,
)
from devicelint.analysis.checkpoint_loads import CheckpointLoader
from devicelint.analysis.names import has_decorator
from devicelint.analysis.summaries import Summaries
from devicelint.analysis.tensor_evidence import TensorEvidence, scan as scan_tensor_evidence
from devicelint.analysis.torch_semantics import BUILTIN_REFS, MODULE_ONLY_METHODS, TENSOR_ANNOTATIONS, TorchSemantics, autocast_device_type, is_loss_class, optimizer_built_from_package, propagate
from devicelint.analysis.values import (
    CollatedItems,
    Homogeneous,
    HostBesideAccelerator,
    Kind,
    mapping_of,
    MODEL_DEVICE,
    Origin,
    ParamGroup,
    PathPlacement,
    Role,
    NoneOnOneArm,
    TensorOrNone,
    UNKNOWN,
    Value,
    collated_item,
    device_from_string,
    follows,
    homogeneous_element,
    host_beside_accelerator,
    is_none_literal,
    join,
)

if TYPE_CHECKING:
    from devicelint.project import ProjectView

_MAX_FIXPOINT_PASSES = 3
_NONE = Value(Kind.NUMBER, literal=None, role=Role.NONE_LITERAL)
#: kinds of values that are known objects, never None
_NEVER_NONE = frozenset({Kind.TENSOR, Kind.MODULE, Kind.CRITERION, Kind.OPTIMIZER, Kind.LOADER, Kind.DATASET, Kind.GENERATOR, Kind.DEVICE})


class FlowAnalyzer(Summaries, TorchSemantics, ProjectImports):
    """The interpreter: statements (``exec_block``), assignment (``assign``), expressions
    (``eval``) and name lookup (``lookup``, ``qualname_of``) over one module, emitting events to
    ``sink`` on its reporting passes."""

    def __init__(
        self,
        module: cst.Module,
        sink: EventSink,
        source_of: Callable[[cst.CSTNode], str],
        text: Optional[str] = None,
        project: Optional["ProjectView"] = None,
        path: Optional[str] = None,
    ) -> None:
        self.module = module
        self._init_project_imports(project)
        #: the file's text when the caller has it (generating it from the tree is costly)
        self.text = text
        self.sink = sink
        self.source_of = source_of
        self.emitting = True
        self.loop_stack: list[LoopInfo] = []
        #: how many `with` blocks around the current statement autocast for the CPU
        #: (`torch.cpu.amp.autocast()`, `torch.autocast("cpu")`): code written to compute there
        self.cpu_autocast_depth = 0
        self.function_stack: list[FunctionContext] = [FunctionContext(None, None)]
        self.facts = FileFacts()
        self.module_state: State = {}
        #: each analysed function's state at the end of its body, keyed by its node
        self.function_states: dict[cst.FunctionDef, State] = {}
        #: per method (its own analysis): the values each ``self.x = ...`` in its body stored,
        #: by attribute; the class's other methods see their join (see Summaries)
        self.attribute_writes: dict[cst.FunctionDef, dict[str, list[Value]]] = {}
        self._statement_call: Optional[cst.BaseExpression] = None
        self._pending: list[tuple[cst.FunctionDef, Optional[ClassInfo], Optional[State]]] = []
        self._enclosing: list[State] = []
        self._classes: list[ClassInfo] = []
        #: functions defined inside another function: their free names live in the caller
        self._nested_functions: set[cst.FunctionDef] = set()
        #: per nested function: the function it is defined in (see Summaries._enclosing_state)
        self._defined_in: dict[cst.FunctionDef, cst.FunctionDef] = {}
        self._inline_depth = 0
        self._inlining: set[cst.FunctionDef] = set()
        #: methods being run as part of their object's ``__init__`` (see Summaries._run_for_init)
        self._init_runs: set[cst.FunctionDef] = set()
        #: identifiers of the file's text, counted once, with the names it defines with ``def``
        #: (see Summaries._init_only_helpers)
        self._word_counts: Optional[tuple[Counter[str], Counter[str]]] = None
        #: per helper being summarised: the values its return statements gave
        self._returns: list[list[Value]] = []
        #: per function being run silently: None, or (for a method ``__init__`` calls on its own
        #: object, see Summaries._run_for_init) the states its ``return``s leave
        self._exit_states: list[Optional[list[State]]] = []
        self._summaries: dict[tuple, Value] = {}
        #: per call of a method on an object of the file (everything its run starts from): the
        #: attributes it leaves on the object (see Summaries._take_what_it_leaves)
        self._left_attributes: dict[tuple, dict[str, Value]] = {}
        self._summaries_left = helpers.MAX_SUMMARIES
        self._helper_facts: dict[cst.FunctionDef, tuple[bool, bool, frozenset[str]]] = {}
        #: every torch factory call evaluated: its qualified name and the function it is in
        self.factory_calls: dict[int, tuple[str, Optional[cst.FunctionDef]]] = {}
        #: the factory calls among them last evaluated while a module's ``__init__`` ran (see
        #: TorchSemantics.made_while_building_module)
        self.factories_building_modules: set[int] = set()
        #: per free (or nested) function: the arguments of each call a reporting pass made of it
        #: (None for a call whose arguments do not bind); its own analysis starts from their join
        self._call_sites: dict[cst.FunctionDef, list[Optional[dict[str, Value]]]] = {}
        #: per function: the calls of it that bind plainly, each with what it binds and the
        #: function that makes it where that function's own analysis joined calls that disagree
        #: (in the order the reporting passes met them; see Summaries._specialise_by_call_site)
        self._site_calls: dict[cst.FunctionDef, list[tuple[cst.Call, dict[str, Value], bool]]] = {}
        #: functions whose own analysis started from the join of calls that hand them different
        #: values, or from a literal a call hands them (which that analysis does not use to
        #: choose branches): what their calls hand on may come from paths no one call takes
        self._joined_differing_calls: set[cst.FunctionDef] = set()
        #: per function that had its own analysis: its class, the state of the function around
        #: it (a nested one), and the arguments its analysis started from
        self._analysed_as: dict[cst.FunctionDef, tuple[Optional[ClassInfo], Optional[State], dict[str, Value]]] = {}
        #: the call whose arguments the reporting pass under way runs its function on (a pass of
        #: one call site, see Summaries._specialise_by_call_site); None for every other pass
        self.call_context: Optional[cst.Call] = None
        self._called: Optional[frozenset[str]] = None
        #: per function: its body's text, for the two parameter scans below (cut from the
        #: file's text when it can be, see function_text; once per function either way)
        self._body_texts: dict[cst.FunctionDef, str] = {}
        #: per (class node id, attribute): does the class move ``self.<attribute>`` where it reads it
        self._moved_where_read: dict[tuple[int, str], bool] = {}
        #: per function: does its own body yield (see Summaries._is_generator)
        self._generators: dict[cst.FunctionDef, bool] = {}
        self._own_texts = FunctionTexts(module, text) if text is not None else None
        #: module classes of a test file that never leave the host (asked lazily)
        self.host_test_modules = HostTestModules(module, path, text, self._own_texts)
        #: per function: the unannotated parameters its body uses as tensors
        self._tensor_uses_found: dict[cst.FunctionDef, tuple[frozenset[str], frozenset[str]]] = {}
        self._module_uses_found: dict[cst.FunctionDef, frozenset[str]] = {}
        self._maybe_tensor_names_found: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per function: its body's calls that take a plain name as a whole argument, with those
        #: names (see _handed_to_tensor_users; one walk of the body however often it is asked)
        self._calls_handing_names: dict[cst.FunctionDef, tuple[tuple[cst.Call, frozenset[str]], ...]] = {}
        #: functions whose hand-on of parameters (see _handed_to_tensor_users) is being scanned
        self._tensor_use_scans: set[cst.FunctionDef] = set()
        #: per function: the parameters its body may move or hand on (see _may_move)
        self._moving_parameters: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per function: the parameters it hands to numpy or matplotlib (see _numpy_read_parameters)
        self._numpy_reads_found: dict[cst.FunctionDef, dict[str, cst.Call]] = {}
        #: per function: the checkpoint loader it is, if any (see Summaries.checkpoint_load_call)
        self._checkpoint_loaders: dict[cst.FunctionDef, Optional[CheckpointLoader]] = {}
        #: per module ``forward``: the parameters it moves itself (see inputs_placed_by_module)
        self._moved_inputs: dict[cst.FunctionDef, frozenset[str]] = {}
        #: command-line options of the file's argument parsers that hold the process's rank
        #: (``--local_rank``), by the attribute of the parsed arguments (see ranks.rank_option)
        self._rank_options: dict[str, Value] = {}
        #: per function, the names its body assigns (see Summaries.parameter_read_unchanged)
        self._rebound_names: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per helper being summarised: did it reach a ``yield``
        #: per function being summarised: the values its ``yield``s give (None: a bare
        #: ``yield``); a non-empty list makes it a generator
        self._yielded: list[list[Optional[Value]]] = []
        #: the ``with torch.cuda.stream(...)`` blocks being executed, innermost last
        self.stream_stack: list[StreamContext] = []
        #: per scope (function or module): the names it binds once and uses as tensors
        self._tensor_evidence: dict[cst.CSTNode, TensorEvidence] = {}
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
            cst.Lambda: self._eval_lambda,
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
        self._specialise_by_call_site()

    @property
    def current_function(self) -> FunctionContext:
        return self.function_stack[-1]

    @contextlib.contextmanager
    def _running(self, function: cst.FunctionDef, class_info: Optional[ClassInfo], enclosing: Optional[State]) -> Iterator[None]:
        """Make ``function`` the current function, with loops of its own and, for a nested
        function, the state of the function around it."""
        self.function_stack.append(FunctionContext(function, class_info))
        saved_loops, self.loop_stack = self.loop_stack, []
        saved_autocast, self.cpu_autocast_depth = self.cpu_autocast_depth, 0
        if enclosing is not None:
            self._enclosing.append(enclosing)
        home = self.entering(function)  # another module's function runs in its own module
        try:
            yield
        finally:
            self.leaving(home)
            if enclosing is not None:
                self._enclosing.pop()
            self.loop_stack = saved_loops
            self.cpu_autocast_depth = saved_autocast
            self.function_stack.pop()

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
        if isinstance(call, cst.Call) and state is self.module_state:
            self._configuration_exec(call, state)
        if self.emitting:
            self.sink.on_expression_statement(node, value)

    def _configuration_exec(self, call: cst.Call, state: State) -> None:
        """``exec(open("configurator.py").read())`` in the module body: code read when the
        program runs may rebind any global (nanoGPT's command-line overrides), so a device bound
        before it is a default, chosen for real when the program runs."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "exec" and len(call.args) == 1):
            return
        if "exec" in state or isinstance(call.args[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            return  # a shadowed exec, or a literal: what it binds is in the source
        for name, value in list(state.items()):
            if value.role is not None or "." in name:
                continue
            names_device = value.kind == Kind.DEVICE and value.device is not None
            # `device = 'cuda'`: a device string, whatever the code does with it later
            names_device = names_device or value.kind == Kind.STR and isinstance(value.literal, str) and device_from_string(value.literal) is not None
            if names_device:
                state[name] = replace(value, role=Role.RUN_TIME_CHOICE)

    def _bare_move_statement(self, call: cst.Call, result: Value, state: State) -> None:
        """``m.to(d)`` as a statement on an object of unknown kind: only a module moves in place."""
        receiver_node = call.func.value  # type: ignore[union-attr]
        key = dotted_name(receiver_node)
        if key is None or result.device is None:
            return
        current = self.lookup(key, state)
        if current.kind == Kind.UNKNOWN and current.is_bare:
            # a module, or anything else that moves in place (a diffusers pipeline): what its
            # call returns is not known to be a tensor
            state[key] = Value(Kind.MODULE, result.device, result.origin, role=Role.INFERRED_MODULE)

    def _exec_assign(self, node: cst.Assign, state: State) -> None:
        value = self.eval(node.value, state)
        if value.kind == Kind.UNKNOWN and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            value = self.drawn_from_argument(node.targets[0].target.value, node.value, state) or value
        if self.emitting and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._note_rebuilt_module(node.targets[0].target.value, node.value, value, state)
        for target in node.targets:
            stored = self._stored(target.target, value, state)
            if self.emitting:
                self.sink.on_assign(node, target.target, node.value, stored)
            self.assign(target.target, stored, state, node.value)

    def _note_rebuilt_module(self, name: str, value_node: cst.BaseExpression, value: Value, state: State) -> None:
        """``model = Net(args)`` where ``model`` held a module moved to a device that can be the
        accelerator: a model rebuilt on the host (see RebuiltModule)."""
        origin = value.origin
        if origin is None or origin.node is not value_node:
            return
        built_on_host = value.kind == Kind.MODULE and value.device is not None and value.device.is_cpu and origin.how.startswith("created")
        if not built_on_host and not constructions.is_construction(value):
            return
        replaced = state.get(name)  # this scope's own binding only: another scope's is another variable
        if replaced is None or replaced.kind not in (Kind.MODULE, Kind.UNKNOWN) or replaced.kind == Kind.UNKNOWN and not replaced.is_bare:
            return
        if replaced.device is None or not replaced.device.may_be_accelerator or replaced.device.only_on is not None:
            return
        if replaced.origin is None or not replaced.origin.how.startswith("moved"):
            return
        self.facts.rebuilt_modules[value_node] = RebuiltModule(name, value_node, replaced)

    def rebuilt_module(self, module: Value) -> Optional[RebuiltModule]:
        """Where ``module`` is a model the file rebuilt on the host in place of a moved one, and
        nothing has moved since (it is still on the host, as built): that rebuild."""
        if module.device is None or not module.device.is_cpu or module.origin is None:
            return None
        return self.facts.rebuilt_modules.get(module.origin.node)

    def _stored(self, target: cst.BaseExpression, value: Value, state: State) -> Value:
        """What an assignment stores: a tensor assigned to a buffer's name (``self.freqs =
        make_freqs()`` after ``register_buffer("freqs", ...)``) updates the buffer."""
        if value.kind != Kind.TENSOR or value.role is not None or not isinstance(target, cst.Attribute):
            return value
        owner = self.eval(target.value, state) if isinstance(target.value, cst.Name) else UNKNOWN
        if isinstance(owner.info, ClassInfo) and owner.info.registers_buffer(target.attr.value):
            return replace(value, role=Role.BUFFER)
        return value

    def _exec_ann_assign(self, node: cst.AnnAssign, state: State) -> None:
        if node.value is not None:
            value = self._stored(node.target, self.eval(node.value, state), state)
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
        if self._exit_states and self._exit_states[-1] is not None:
            self._exit_states[-1].append(dict(state))
        if self.emitting and node.value is not None:
            self.sink.on_return(node, value)

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
            if self.project_import(alias, state):
                continue
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                state[alias.asname.name.value] = Value(Kind.REF, qualname=full)
            else:
                top = full.split(".")[0]
                state[top] = Value(Kind.REF, qualname=top)

    def _exec_import_from(self, node: cst.ImportFrom, state: State) -> None:
        if self.project_import_from(node, state):
            return
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

    def _known_truth(self, test: cst.BaseExpression, state: State) -> Optional[bool]:
        """The truth of a condition built from names bound to ``True``/``False``, and from
        comparisons of a name bound to a string with a string (``output_type == "np"``), with
        ``not``, ``and``, ``or`` (None when any part that decides it is not such a literal)."""
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
            target = test.comparisons[0]
            value = state.get(test.left.value)
            if value is None or value.kind != Kind.STR or not isinstance(value.literal, str):
                return None
            other = string_value(target.comparator) if isinstance(target.comparator, cst.SimpleString) else None
            if not isinstance(other, str):
                return None
            if isinstance(target.operator, cst.Equal):
                return value.literal == other
            if isinstance(target.operator, cst.NotEqual):
                return value.literal != other
            return None
        if isinstance(test, cst.Name):
            value = state.get(test.value)
            return value.literal if value is not None and value.kind == Kind.NUMBER and isinstance(value.literal, bool) else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._known_truth(test.expression, state)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left = self._known_truth(test.left, state)
            right = self._known_truth(test.right, state)
            if isinstance(test.operator, cst.And):
                return False if left is False or right is False else (True if left and right else None)
            return True if left is True or right is True else (False if left is False and right is False else None)
        return None

    def _exec_if(self, node: cst.If, state: State, arms: Optional[list[tuple[Optional[cst.CSTNode], State]]] = None) -> None:
        """``arms``: for an ``elif``, where its chain collects each arm's node and final state
        (see _tag_arm_moves)."""
        self.eval_condition(node.test, state)
        body_state = dict(state)
        else_state = dict(state)
        chain_head = arms is None
        if arms is None:
            arms = []
        checked = self._tensor_check(node.test, state)
        impossible = None
        if checked is not None:
            # `if isinstance(mask, torch.Tensor): ... else: torch.tensor(mask)`: each branch
            # knows whether the name holds a tensor, and one that cannot run is skipped
            name, is_tensor_branch = checked
            current = state.get(name, UNKNOWN)
            if current.kind in (Kind.CONTAINER, Kind.NUMBER, Kind.STR):
                impossible = is_tensor_branch  # a known list, number or string is no tensor
            elif current.kind == Kind.TENSOR and not is_tensor_branch:
                impossible = True
            for branch, holds_tensor in ((body_state, is_tensor_branch), (else_state, not is_tensor_branch)):
                if holds_tensor and current.kind == Kind.UNKNOWN:
                    branch[name] = Value(Kind.TENSOR, current.device, current.origin)
                elif not holds_tensor and current.kind == Kind.TENSOR:
                    branch[name] = UNKNOWN
        none_checked = _none_checked_key(node.test)
        if none_checked is not None:
            # `if weight is not None:` (or `if self.weight is not None:`) where `weight` is a
            # tensor or None: that tensor there
            name, none_branch = none_checked
            current = state.get(name, UNKNOWN)
            if current.kind == Kind.UNKNOWN and isinstance(current.info, TensorOrNone):
                (else_state if none_branch else body_state)[name] = current.info.tensor
        if impossible is None and (self._inline_depth > 0 or self.call_context is not None):
            # summarising a helper on its caller's arguments, or running it on one call's (see
            # Summaries._specialise_by_call_site): `if use_real:` with the caller's
            # `use_real=False` takes one branch only (the file's own analysis keeps both: a
            # literal flag there is configuration someone flips)
            truth = self._known_truth(node.test, state)
            if truth is not None:
                impossible = not truth
        if impossible is not True:
            self.exec_block(node.body.body, body_state)
            if not _leaves_block(node.body.body):
                arms.append((node, body_state))
        first_else_arm = len(arms)
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            self._exec_if(orelse, else_state, arms)
        elif isinstance(orelse, cst.Else):
            self.exec_block(orelse.body.body, else_state)
            if not _leaves_block(orelse.body.body):
                arms.append((orelse, else_state))
        else:
            arms.append((None, else_state))
        if impossible is True:
            merged = else_state
        elif impossible is False:
            merged = body_state
            del arms[first_else_arm:]
        else:
            merged = join_states(body_state, else_state)
        defaulted = none_checked_name(node.test)
        if defaulted is not None:
            # `if hidden is None: hidden = torch.zeros(...)`: the caller left the argument out,
            # and the function makes its own - that path is the default one, so keep its tensor
            name, none_branch = defaulted
            made = (body_state if none_branch else else_state).get(name)
            handed = (else_state if none_branch else body_state).get(name, UNKNOWN)
            if made is not None and made.kind == Kind.TENSOR and (
                merged.get(name, UNKNOWN).kind == Kind.UNKNOWN or self._as_handed_in(name, handed)
            ):
                merged[name] = made
        if chain_head and len(arms) > 1:
            _tag_arm_moves(node, state, arms, merged)  # the state is still the one before the chain
        replace_state(state, merged)

    def _as_handed_in(self, name: str, value: Value) -> bool:
        """Is ``value`` the tensor parameter ``name`` as the caller handed it (on the model's
        device in a module's method, where the caller put it in a free function)?  Where the
        function makes its own tensor when the parameter is None, that tensor, not the
        caller's, is what a call that leaves it out works with."""
        if value.kind != Kind.TENSOR or value.origin is not None:
            return False
        as_handed = self.tensor_parameter_value(name)
        return as_handed is not None and as_handed.device == value.device

    def _tensor_check(self, test: cst.BaseExpression, state: State) -> Optional[tuple[str, bool]]:
        """``isinstance(x, torch.Tensor)`` -> ("x", True); ``not isinstance(...)`` -> ("x", False);
        ``torch.is_tensor(x)`` the same."""
        positive = True
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, positive = test.expression, not positive
        if isinstance(test, cst.Call) and len(test.args) == 1 and isinstance(test.args[0].value, cst.Name) and not test.args[0].star:
            if self.qualname_of(test.func, state) == "torch.is_tensor":
                return test.args[0].value.value, positive
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2):
            return None
        subject, kind = test.args[0].value, test.args[1].value
        if not isinstance(subject, cst.Name) or self.qualname_of(kind, state) not in TENSOR_ANNOTATIONS:
            return None
        return subject.value, positive

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
        replace_state(state, merged)

    def _exec_for(self, node: cst.For, state: State) -> None:
        iterable = self.eval(node.iter, state)
        element = self.element_of(self._iterated_by_own_class(iterable, state))

        def bind(loop_state: State) -> None:
            self.assign(node.target, element, loop_state, None)

        self._exec_loop(node, node.body.body, bind, None, state, iterable)
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
        iterable: Optional[Value] = None,
    ) -> None:
        body = list(body)
        loop = LoopInfo(node, iterable=iterable)
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
                widened = keep_first_iteration(entry, join_states(entry, iteration))
                if widened == entry:
                    break
                if attempt == passes - 1:
                    widened = widen(entry, widened)
                entry = widened
            self.emitting = was_emitting
            final = dict(entry)
            self._run_iteration(body, bind, test, final)
        finally:
            self.emitting = was_emitting
            self.loop_stack.pop()
        replace_state(state, join_states(entry, final))

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
        cpu_autocast = False
        for item in node.items:
            value = self.eval(item.item, state)
            if isinstance(item.item, cst.Call):
                autocast = autocast_device_type(item.item, self.qualname_of(item.item.func, state))
                cpu_autocast = cpu_autocast or (autocast is not None and autocast[0] == "cpu")
            if value.kind == Kind.DEVICE and isinstance(item.item, cst.Call):
                scoped_default = value
            if isinstance(value.info, StreamContext):
                stream = value.info
            if item.asname is not None:
                self.assign(item.asname.name, value if value.kind != Kind.DEVICE else UNKNOWN, state, None)
        if stream is not None:
            self.stream_stack.append(stream)
        self.cpu_autocast_depth += cpu_autocast
        try:
            self._exec_with_body(node, scoped_default, state)
        finally:
            self.cpu_autocast_depth -= cpu_autocast
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
        replace_state(state, result)

    def _exec_function_def(self, node: cst.FunctionDef, state: State) -> None:
        for decorator in node.decorators:
            self.eval(decorator.decorator, state)
        state[node.name.value] = Value(Kind.FUNCTION, info=node)
        self.note_definition(node)
        if not self.emitting:
            return  # a silent pass (loop fixpoint, helper summary): the reporting pass schedules it
        context = self.current_function
        if context.node is None and context.class_info is None:
            self._pending.append((node, None, None))
        else:
            self._nested_functions.add(node)
            if context.node is not None:
                self._defined_in[node] = context.node
            self._pending.append((node, None, dict(state)))

    def _exec_class_def(self, node: cst.ClassDef, state: State) -> None:
        base_values = [self.resolve_project_ref(self.eval(base.value, state)) for base in node.bases]
        base_infos = tuple(value.info for value in base_values if value.kind == Kind.CLASS)
        qualnames = [value.qualname for value in base_values if value.kind == Kind.REF and value.qualname]
        is_module = any(api.is_module_base(q) for q in qualnames) or any(info.is_module for info in base_infos)
        framework = any(api.is_framework_module_base(q) for q in qualnames) or any(info.framework_placed for info in base_infos)
        is_dataset = any(q in api.DATASET_BASES for q in qualnames) or any(info.is_dataset for info in base_infos)
        pipeline = any(api.is_diffusers_pipeline(q) for q in qualnames) or any(info.diffusers_pipeline for info in base_infos)
        methods: dict[str, cst.FunctionDef] = {}
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                methods[statement.name.value] = statement
                self.note_definition(statement)
        info = ClassInfo(
            name=node.name.value,
            node=node,
            is_module=is_module or framework,
            framework_placed=framework,
            is_dataset=is_dataset,
            bases=base_infos,
            methods=methods,
            diffusers_pipeline=pipeline,
            is_process=any(q in api.PROCESS_CLASSES for q in qualnames) or any(info.is_process for info in base_infos),
            is_optimizer=any(q in api.OPTIMIZER_BASES for q in qualnames) or any(info.is_optimizer for info in base_infos),
        )
        if not node.bases and "__init__" not in methods and any(
            self.qualname_of(decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator, state)
            == "dataclasses.dataclass"
            for decorator in node.decorators
        ):
            info.dataclass_fields = _dataclass_fields(body)
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

    def _note_attribute_write(self, owner: str, attribute: str, value: Value) -> None:
        """``self.sigmas = sigmas.to("cpu")`` in a method's own analysis: what it stores there,
        for the other methods of the class (see Summaries._attributes_seen_by_methods)."""
        context = self.current_function
        function = context.node
        if function is None or context.class_info is None:
            return
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional or positional[0].name.value != owner or has_decorator(function, "staticmethod") or has_decorator(function, "classmethod"):
            return
        self.attribute_writes.setdefault(function, {}).setdefault(attribute, []).append(value)

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
            if self.emitting and isinstance(target.value, cst.Name):
                self._note_attribute_write(target.value.value, target.attr.value, value)
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
                collated = collated_item(value, position) if not has_star and _collated_length(value) == len(elements) else None
                if items is not None and not has_star and len(items) == len(elements):
                    item = items[position]
                elif collated is not None:
                    item = collated  # `for (left, right), label in loader`: what collation made there
                elif (value.kind == Kind.TENSOR and value.role is Role.MODEL_OUTPUT) or _unknown_on_a_device(value):
                    # `loss, kl, acc = model(x)`: a model's tuple of outputs lives on its device,
                    # but not every element is known to be a tensor (some are Python floats);
                    # so do the parts of any placed object of unknown class (`model =
                    # VAE(args).cuda()`, then `loss, kl, acc = model(batch)`; `out, h =
                    # self.rnn.step(x, h)`)
                    item = Value(Kind.UNKNOWN, value.device, value.origin)
                else:
                    item = self.element_of(value)
                self.assign(element.value, item, state, None)
            return
        if isinstance(target, cst.Subscript):
            base = self.eval(target.value, state)
            for element in target.slice:
                if isinstance(element.slice, cst.Index):
                    self.eval(element.slice.value, state)
            if self.emitting and value_node is not None:
                self.sink.on_subscript_assign(target, value_node, value)
                if base.kind == Kind.NDARRAY:
                    self.sink.on_ndarray_store(target, value_node, value)
            key = dotted_name(target.value)
            if key is not None and key in state and state[key].kind in (Kind.BATCH, Kind.CONTAINER):
                # batch["x"] = batch["x"].to(d): the collection is no longer all-CPU
                state[key] = self._placeholder_replaced(state[key], target, value) or Value(state[key].kind)
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
        if name in BUILTIN_REFS:
            return Value(Kind.REF, qualname=name)
        return UNKNOWN

    def tensor_use(self, name: str) -> Optional[cst.CSTNode]:
        """Where the function being analysed (or the module's top level) uses the local
        ``name`` as a torch tensor - an arithmetic operand, a tensor-only method, a torch
        function's tensor operand - when it binds ``name`` once, so that the use sees the same
        object as any statement of the scope (see devicelint.analysis.tensor_evidence); None
        where it does not. Flow-insensitive on purpose: it answers for statements above the use."""
        return self._scope_tensor_evidence().tensor_use(name)

    def sibling_tensor_use(self, name: str) -> Optional[tuple[str, cst.CSTNode]]:
        """Weaker than ``tensor_use``: the local ``name`` is bound once, by a tuple unpacking
        (``train_x, calib_x, train_y, calib_y = split(X, Y)``), next to a sibling the scope
        uses as a tensor, and the scope never uses ``name`` as an object (calls it, reads an
        attribute other than a move or ``.shape``). Returns the sibling and its tensor use."""
        return self._scope_tensor_evidence().sibling_tensor_use(name)

    def _scope_tensor_evidence(self) -> TensorEvidence:
        return self.tensor_evidence_of(self.current_function.node or self.module)

    def tensor_evidence_of(self, scope: Union[cst.FunctionDef, cst.Module]) -> TensorEvidence:
        """The tensor evidence of a function's own body (or the module's top level), scanned once."""
        evidence = self._tensor_evidence.get(scope)
        if evidence is None:
            evidence = self._tensor_evidence[scope] = scan_tensor_evidence(
                scope, lambda node: self.qualname_of(node, self.module_state)  # type: ignore[arg-type]
            )
        return evidence

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
        return _through_reexported_torch(f"{value.qualname}.{rest}" if rest else value.qualname)

    def _eval_name(self, node: cst.Name, state: State) -> Value:
        name = node.value
        if name in ("True", "False"):
            return Value(Kind.NUMBER, literal=name == "True")
        if name == "None":
            return _NONE
        value = self.lookup(name, state)
        if value.kind == Kind.REF and isinstance(value.info, ProjectRef):
            # used as a value (`.to(torch_device)`, `x * SCALE`): what the other module binds;
            # a name it binds to nothing known is an object of unknown kind, as an import from
            # outside the project would be for a relative import
            value = self.resolve_project_ref(value)
            if value.kind == Kind.REF and not isinstance(value.info, ProjectRef):
                return UNKNOWN if value.qualname is not None and value.qualname.startswith(".") else value
        return value

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
            member = self.project_member(base, attribute)
            if member is not None:
                return member
            return Value(Kind.REF, qualname=_through_reexported_torch(f"{base.qualname}.{attribute}"))
        if base.fields is not None:
            carried = base.field_value(attribute)
            if carried is not None:
                return carried  # `frames.rotations` of `frames = Frame(rotations=torch.eye(3), ...)`
        if graphs.is_graph(base):
            field = graphs.field(base, attribute)
            return field if field is not None else UNKNOWN
        if base.kind == Kind.TENSOR:
            if attribute == "device":
                symbolic = follows(self._label(node), argument=self._names_a_plain_argument(node))
                return Value(Kind.DEVICE, base.device if base.device is not None else symbolic, base.origin)
            if attribute in ("T", "mT", "H", "mH", "data", "real", "imag", "values", "indices"):
                return Value(Kind.TENSOR, base.device, base.origin, scalar=base.scalar if attribute != "values" else None)
        if base.kind == Kind.BATCH and base.role is Role.TOKENIZED_BATCH and attribute in api.TOKENIZED_TENSOR_KEYS:
            return Value(Kind.TENSOR, base.device, base.origin, scalar=False)  # `batch.input_ids`
        if base.kind == Kind.GENERATOR and attribute == "device" and base.device is not None:
            return Value(Kind.DEVICE, base.device, base.origin)  # where the generator draws
        return UNKNOWN

    def _eval_subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        index_value: Optional[Value] = None
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                index_value = self.eval(element.slice.value, state)
                if self.emitting and base.is_tensor_like and index_value.is_tensor_like:
                    self.sink.on_index(node, base, element.slice.value, index_value)
        if base.kind == Kind.TENSOR:
            return Value(Kind.TENSOR, base.device, base.origin, scalar=_dimensions_kept(node.slice, base.scalar))
        if (
            base.kind == Kind.UNKNOWN
            and base.is_bare
            and base.device is not None
            and base.device.may_be_accelerator
            and len(node.slice) >= 2
        ):
            # `targets = targets.to(device)`, then `targets[:, 0]`: only a tensor is both moved by
            # `.to()` and indexed along several dimensions (numpy arrays have no `.to()`, modules,
            # graphs and batch encodings take one key)
            return Value(Kind.TENSOR, base.device, base.origin)
        if graphs.is_graph(base):
            return base  # `data["author"]`: a store of the graph, where the graph is
        if base.kind == Kind.BATCH:
            if index_value is not None and isinstance(index_value.literal, int) and not isinstance(index_value.literal, bool) and len(node.slice) == 1:
                collated = collated_item(base, index_value.literal)
                if collated is not None:
                    return collated
            return Value(Kind.TENSOR, base.device, base.origin, scalar=base.scalar)
        if base.kind == Kind.DATASET:
            return Value(Kind.BATCH, base.device, base.origin, role=base.role)
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
        if base.kind == Kind.REF and index_value is not None:
            return ranks.environ_item(base.qualname, index_value, node)
        return UNKNOWN

    def _eval_binary(self, node: cst.BinaryOperation, state: State) -> Value:
        left = self.eval(node.left, state)
        right = self.eval(node.right, state)
        rank_device = ranks.concatenated_device(node, left, right)
        if rank_device is not None:
            return rank_device
        return self._combine(node, node.left, left, node.right, right)

    def _combine(self, node: cst.CSTNode, left_node: cst.BaseExpression, left: Value, right_node: cst.BaseExpression, right: Value) -> Value:
        if left.kind == Kind.STR and right.kind == Kind.STR:
            return Value(Kind.STR)
        left_tensor = left.kind in (Kind.TENSOR, Kind.BATCH)
        right_tensor = right.kind in (Kind.TENSOR, Kind.BATCH)
        if not (left_tensor or right_tensor):
            if left.kind == Kind.NUMBER and right.kind == Kind.NUMBER:
                return Value(Kind.NUMBER)
            for placed, number in ((left, right), (right, left)):
                if number.kind == Kind.NUMBER and placed.kind == Kind.UNKNOWN and placed.is_bare and placed.device is not None:
                    # `std ** 2` of a model's output of unknown kind: a tensor there stays
                    # there, a Python number stays one
                    return Value(Kind.UNKNOWN, placed.device, placed.origin)
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                # `[torch.zeros(1)] * n`: n references to the same elements
                for sequence, count in ((left, right), (right, left)):
                    if sequence.kind == Kind.CONTAINER and count.kind in (Kind.NUMBER, Kind.UNKNOWN) and sequence.info is not None:
                        element = homogeneous_element(sequence)
                        if element is not None:
                            return Value(Kind.CONTAINER, info=Homogeneous(element))
            return UNKNOWN
        if self.emitting:
            # one tensor side is enough: DL202 needs `model_output * cpu_tensor` where the
            # analysis does not know the model output is a tensor
            self.sink.on_binary(BinaryEvent(node, left_node, left, right_node, right))
        if left_tensor and right_tensor:
            return propagate(left, right)
        tensor = left if left_tensor else right
        other = right if left_tensor else left
        if other.kind == Kind.NUMBER:
            return Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=tensor.scalar)
        if tensor.device is not None and tensor.device.is_cpu and other.is_bare and other.device is not None and other.device.may_be_accelerator:
            # `x + cpu_buffer` where `x` was moved to the accelerator (its kind unknown): the
            # operation fails there or runs there; the result is not on the host
            return Value(Kind.TENSOR, other.device, other.origin)
        if tensor.scalar is False and tensor.device is not None:
            # if the operation runs at all, its result lives where the non-0-dim operand does
            return Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=False)
        if tensor.device is not None and tensor.device.may_be_accelerator:
            # `q @ k.T / math.sqrt(d)`: the other side is a number or a CPU scalar, or the
            # operation fails; either way the result is where the tensor is
            return Value(Kind.TENSOR, tensor.device, tensor.origin)
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
        if isinstance(node.operator, cst.Or) and left.role is Role.NONE_DEFAULT:
            return right  # `device or ("cuda" if ... else "cpu")` with `device` left at None
        return join(left, right)

    def _eval_if_exp(self, node: cst.IfExp, state: State) -> Value:
        self.eval_condition(node.test, state)
        none_checked = none_checked_name(node.test)
        checked = self.lookup(none_checked[0], state) if none_checked is not None else None
        if checked is not None and checked.kind in _NEVER_NONE and not self._as_handed_in(none_checked[0], checked):
            # `generator.device if generator is not None else device` with a known generator:
            # only one arm can run (a parameter that the body uses as a tensor may still be None)
            return self.eval(node.orelse if none_checked[1] else node.body, state)
        if none_checked is not None and self.lookup(none_checked[0], state).role is Role.NONE_DEFAULT:
            # `device if device is not None else ...` where every call leaves `device` at None
            return self.eval(node.body if none_checked[1] else node.orelse, state)
        body = self.eval(node.body, state)
        orelse = self.eval(node.orelse, state)
        if none_checked is not None:
            name, none_is_body = none_checked
            made, kept, kept_node = (body, orelse, node.orelse) if none_is_body else (orelse, body, node.body)
            if made.kind == Kind.TENSOR and isinstance(kept_node, cst.Name) and kept_node.value == name and (
                kept.kind == Kind.UNKNOWN or self._as_handed_in(name, kept)
            ):
                # `w = torch.ones(n) if w is None else w`, like `if w is None: w = torch.ones(n)`:
                # a caller that leaves `w` out gets the function's own tensor
                return made
        body_device = self._device_of_value(node.body, body)
        orelse_device = self._device_of_value(node.orelse, orelse)
        if body_device is not None and orelse_device is not None and (body_device.is_accel or orelse_device.is_accel):
            # "cuda" if torch.cuda.is_available() else "cpu": the accelerator, on any GPU machine
            accel = body_device if body_device.is_accel else orelse_device
            return Value(Kind.DEVICE, accel, Origin(node, "chosen"))
        for tensor, none_node in ((body, node.orelse), (orelse, node.body)):
            if tensor.kind == Kind.TENSOR and isinstance(none_node, cst.Name) and none_node.value == "None":
                # `weights if use_weights else None`: a tensor, or nothing at all
                return Value(Kind.UNKNOWN, info=TensorOrNone(tensor))
        for chosen, none_node in ((body, node.orelse), (orelse, node.body)):
            if chosen.kind in (Kind.STR, Kind.DEVICE) and is_none_literal(none_node):
                # `"cpu" if device == "cpu" else None`: an option (a map_location) or nothing
                return Value(Kind.UNKNOWN, info=NoneOnOneArm(chosen, node))
        return join(body, orelse)

    def _eval_sequence(self, node: cst.BaseExpression, state: State) -> Value:
        items = []
        starred = False
        for element in node.elements:  # type: ignore[attr-defined]
            value = self.eval(element.value, state)
            if isinstance(element, cst.StarredElement):
                rows = self._rows_of_factory(element.value, value)
                if rows is not None:
                    items.extend(rows)  # `(correct, *torch.zeros((3, 0)))`: three entries
                    continue
                starred = True
            items.append(value)
        if starred:
            return Value(Kind.CONTAINER)
        return Value(Kind.CONTAINER, info=tuple(items))

    def _rows_of_factory(self, node: cst.BaseExpression, value: Value) -> Optional[list[Value]]:
        """What unpacking a tensor that a sized factory made yields (``*torch.zeros((3, 0))``):
        one entry per row of its literal leading dimension, where it lives; None where the
        number of rows is not written out."""
        if value.kind != Kind.TENSOR or not isinstance(node, cst.Call) or self.factory_name(node) not in _SIZED_FACTORIES:
            return None
        sizes = _literal_sizes(node)
        if not sizes or sizes[0] > _MAX_UNPACKED_ROWS:
            return None
        return [Value(Kind.TENSOR, value.device, value.origin, scalar=len(sizes) == 1) for _ in range(sizes[0])]

    def _placeholder_replaced(self, container: Value, target: cst.Subscript, value: Value) -> Optional[Value]:
        """``output[i] = x[keep]`` into ``output = [torch.zeros(0, 6)] * n``, where some
        iterations leave their entry alone (a ``continue`` before the store, or a branch around
        it): the list then holds host placeholders beside entries that may be on an
        accelerator. None where the store says nothing of the kind (the caller forgets the
        list's elements)."""
        info = container.info
        if not isinstance(info, Homogeneous) or len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return None
        if info.apart is not None:
            if value.kind != Kind.TENSOR or not (value.device is not None and value.device.may_be_accelerator):
                return None
            return Value(Kind.CONTAINER, container.device, container.origin, info=replace(info, element=join(info.element, value)))
        apart = host_beside_placeholders(info.element, value, target)
        if apart is None or (self.loop_stack and _stored_on_every_iteration(self.loop_stack[-1].node, target)):
            return None
        return Value(Kind.CONTAINER, container.device, container.origin, info=Homogeneous(join(info.element, value), apart=apart))

    def _eval_dict(self, node: cst.Dict, state: State) -> Value:
        entries: list[tuple[Value, cst.CSTNode]] = []
        group_parameters: Optional[Value] = None
        for item in node.elements:
            key = self.eval(item.key, state) if isinstance(item, cst.DictElement) else None
            value = self.eval(item.value, state)
            if key is not None and key.literal == "params" and value.kind == Kind.PARAMETERS:
                group_parameters = value
            entries.append((value, item.value))
        if group_parameters is not None:
            # `{"params": model.parameters(), "lr": ...}`: a parameter group of an optimizer
            return Value(Kind.CONTAINER, info=ParamGroup(group_parameters))
        if any(isinstance(item, cst.StarredDictElement) for item in node.elements):
            return Value(Kind.CONTAINER)
        return mapping_of(entries)

    def _mapping_of_pairs(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """``OrderedDict([("loss", loss.item()), ("acc", acc)])``, ``dict(loss=..., acc=acc)``:
        a dict of those values (see mapping_of); unknown where the pairs are not written out."""
        entries: list[tuple[Value, cst.CSTNode]] = []
        for arg, value in args:
            if arg.star == "**" and value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous):
                # `dict(**metrics, label_acc=acc)`: the values of `metrics` are among its values
                entries.append((value.info.element, arg.value))
                if value.info.some is not None:
                    entries.append((value.info.some, value.info.put_by if value.info.put_by is not None else arg.value))
                continue
            if arg.star:
                return UNKNOWN
            if arg.keyword is not None:
                entries.append((value, arg.value))
                continue
            pairs = arg.value
            if not isinstance(pairs, (cst.List, cst.Tuple)) or not isinstance(value.info, tuple) or len(value.info) != len(pairs.elements):
                return UNKNOWN
            for pair_node, pair in zip(pairs.elements, value.info):
                if not isinstance(pair_node.value, (cst.Tuple, cst.List)) or not isinstance(pair.info, tuple) or len(pair.info) != 2:
                    return UNKNOWN
                entries.append((pair.info[1], pair_node.value.elements[1].value))
        return mapping_of(entries) if entries else UNKNOWN

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
            selected = _selected_parameters(node, iterable)
            if selected is not None:
                return selected
            picked = _picked_from(node.elt, scope)  # type: ignore[attr-defined]
            if picked is not None:
                return Value(Kind.CONTAINER, info=Homogeneous(element, picked.some, picked.put_by))
        return Value(Kind.CONTAINER, info=Homogeneous(element))

    def _eval_simple_string(self, node: cst.SimpleString, state: State) -> Value:
        try:
            literal = string_value(node)
        except Exception:  # malformed escapes: the text is still a string
            literal = None
        return Value(Kind.STR, literal=literal if isinstance(literal, str) else None)

    def _eval_other_string(self, node: cst.BaseExpression, state: State) -> Value:
        if isinstance(node, cst.FormattedString):
            parts = [self.eval(part.expression, state) for part in node.parts if isinstance(part, cst.FormattedStringExpression)]
            return ranks.formatted_device(node, parts)
        if isinstance(node, cst.ConcatenatedString):
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
        given: Optional[Value] = None
        if isinstance(node.value, cst.BaseExpression):
            given = self.eval(node.value, state)
        elif node.value is not None:  # `yield from items`: each of its elements
            given = self.element_of(self.eval(node.value.item, state))
        if self._yielded:
            self._yielded[-1].append(given)
        return UNKNOWN

    def _eval_opaque(self, node: cst.BaseExpression, state: State) -> Value:
        return UNKNOWN

    def _eval_lambda(self, node: cst.Lambda, state: State) -> Value:
        """``lambda **kwargs: nn.CrossEntropyLoss(**kwargs, ignore_index=-100)``: a builder of a
        loss that hands the loss every keyword it is called with (see CriterionBuilder). Only a
        lambda that takes nothing but ``**kwargs`` (and ``*args``) and forwards them, and that
        sets no weight of its own; any other lambda is opaque."""
        params = node.params
        body = node.body
        if params.params or params.posonly_params or params.kwonly_params or not isinstance(params.star_kwarg, cst.Param):
            return UNKNOWN
        if not isinstance(body, cst.Call) or not is_loss_class(self.qualname_of(body.func, state)):
            return UNKNOWN
        star_args = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        forwarded = False
        for arg in body.args:
            spread = arg.value.value if isinstance(arg.value, cst.Name) else None
            if arg.star == "**" and spread == params.star_kwarg.name.value:
                forwarded = True
            elif arg.star == "*" and spread is not None and spread == star_args:
                continue
            elif arg.star or arg.keyword is None or arg.keyword.value in ("weight", "pos_weight"):
                return UNKNOWN  # a loss built from more than what the lambda is called with
        return Value(Kind.FUNCTION, info=CRITERION_BUILDER) if forwarded else UNKNOWN

    # ------------------------------------------------------------------ iteration

    def _iterated_by_own_class(self, iterable: Value, state: State) -> Value:
        """``for batch in loader`` where ``loader`` is an object of a plain class of the file
        whose ``__iter__`` is a generator (a hand-written loader): the loop gets what it yields;
        any other iterable as it is."""
        info = iterable.info
        if iterable.kind != Kind.UNKNOWN or not isinstance(info, ClassInfo) or info.is_module or info.is_dataset:
            return iterable
        found = info.find_method("__iter__")
        if found is None or not self._is_generator(found[0]) or self._overridden_below(info, "__iter__"):
            return iterable
        function, owner = found
        yielded = self._summarise(function, owner, iterable, True, (), state)
        return yielded if yielded.kind == Kind.CONTAINER else iterable

    def element_of(self, iterable: Value) -> Value:
        kind = iterable.kind
        if kind == Kind.LOADER:
            if isinstance(iterable.info, LoaderInfo) and iterable.info.collated is not None:
                return iterable.info.collated  # the file's collate_fn made it
            batch_role = iterable.info.batch_role if isinstance(iterable.info, LoaderInfo) else None
            batch_items = iterable.info.batch_items if isinstance(iterable.info, LoaderInfo) else None
            return Value(
                Kind.BATCH,
                iterable.device,
                Origin(iterable.origin.node, "batch", from_data=True) if iterable.origin else None,
                scalar=False,
                info=batch_items,
                role=batch_role,
            )
        if kind == Kind.DATASET:
            return Value(Kind.BATCH, iterable.device, iterable.origin, role=iterable.role)
        if kind == Kind.BATCH:
            return Value(Kind.TENSOR, iterable.device, iterable.origin, scalar=iterable.scalar)
        if kind == Kind.TENSOR:
            return Value(Kind.TENSOR, iterable.device, iterable.origin)
        if kind == Kind.MODULE:
            return Value(Kind.MODULE, iterable.device, iterable.origin)
        if kind == Kind.PARAMETERS and isinstance(iterable.info, Value) and iterable.info.kind in (Kind.MODULE, Kind.CRITERION):
            # `next(model.parameters())`: a tensor where the module's parameters are (so its
            # `.device` is the module's, or the symbol it spells where that is not known)
            return Value(Kind.TENSOR, iterable.info.device, iterable.info.origin)
        if kind == Kind.CONTAINER:
            if isinstance(iterable.info, Homogeneous):
                if iterable.info.key is not None:
                    return iterable.info.key
                # `order` kept among the `.item()` floats of a dict of metrics: an iteration
                # comes to that GPU tensor, which the join of all elements no longer shows
                return iterable.info.some if iterable.info.some is not None else iterable.info.element
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
                member = self.project_member(base, func.attr.value)
                callee = member if member is not None else Value(Kind.REF, qualname=_through_reexported_torch(f"{base.qualname}.{func.attr.value}"))
            else:
                callee = UNKNOWN
                receiver = base
                method = func.attr.value
        else:
            callee = self.eval(func, state)
        callee = self.resolve_project_ref(callee)
        if callee.kind == Kind.REF and isinstance(callee.info, ProjectRef):
            callee = Value(Kind.REF)  # a module of the project called: nothing torch knows
        args = tuple((arg, self.eval(arg.value, state)) for arg in node.args)
        called = self._called_submodule(func, args, state) if method is not None else None
        if called is not None:
            callee, receiver, method = called, None, None  # `self.decoder(tokens)`: a call of the submodule
        qualname = callee.qualname if callee.kind == Kind.REF else None
        if qualname in api.MIXING_FUNCTIONS:
            args = self._tensor_operands(args, state)
        if method is not None and receiver is not None and receiver.kind == Kind.UNKNOWN and receiver.is_bare and method in MODULE_ONLY_METHODS:
            # `model.eval()`: only an nn.Module has these, so the object of unknown class is one
            key = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
            receiver = self._module_evidence(receiver, key)
            if key is not None:
                state[key] = receiver
        elif method is not None and receiver is not None and constructions.is_construction(receiver) and constructions.moves_construction(method, args):
            # `model.to(device)`, `model.setup(device)`: it may be placed from here on
            key = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
            if key is not None:
                state[key] = UNKNOWN
        if method is not None and receiver is not None:
            result = self._apply_method(node, receiver, method, args, state)
            if result is UNKNOWN:
                result = self._kept_object_result(node, receiver, method, args) or result
        elif qualname is not None:
            result = self._apply_qualified(node, qualname, args, state)
        elif callee.kind == Kind.CLASS:
            result = self._instantiate(node, callee.info, args)
        elif callee.kind in (Kind.MODULE, Kind.CRITERION):
            result = self._own_forward_outputs(node, callee, args, state) or self._call_module(callee, args)
        elif callee.kind == Kind.UNKNOWN and isinstance(callee.info, ClassInfo) and callee.info.find_method("__call__") is not None:
            # an object of a class of the file (or project) called: its `__call__` runs
            called = self._call_own_method(node, callee, "__call__", args, state)
            result = called if called is not None else UNKNOWN
        elif callee.kind == Kind.UNKNOWN and callee.role is Role.TOKENIZER:
            result = self.tokenized(node, "__call__", args)
        elif callee.kind == Kind.FUNCTION and callee.role is Role.BATCH_ITERATOR:
            result = self.iterated_batches(node, args)
        elif callee.kind == Kind.UNKNOWN and callee.is_bare and callee.device is not None:
            # something moved to a device and then called: a model of unknown class; what it
            # returns is there too, though not known to be a tensor
            result = Value(Kind.UNKNOWN, callee.device, callee.origin)
            self._escape(args, state)
        elif callee.kind == Kind.FUNCTION and callee.info is CRITERION_BUILDER:
            result = self.criterion(node, args)  # the loss holds the `weight=` it is called with
        elif callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            result = self._summarise(callee.info, None, None, False, args, state, call=node)
            self._escape_into(callee.info, args, state, skip_first=False)
        else:
            result = UNKNOWN
            self._escape(args, state)
        if result is UNKNOWN:
            result = optimizer_built_from_package(node, args) or result
        if result is UNKNOWN and method is None:
            context = self.current_function
            in_module_init = context.class_info is not None and context.class_info.is_module and context.name == "__init__"
            built = constructions.construction_origin(node, callee, args, self._default_device(state), in_module_init)
            if built is not None:
                result = Value(Kind.UNKNOWN, origin=built)
        rank = ranks.rank_of_call(node, qualname, callee, method, receiver, args)
        if rank is not None:
            result = rank
        elif method == "add_argument" and qualname is None:
            option = ranks.rank_option(node, args)
            if option is not None:
                self._rank_options.setdefault(*option)
        elif method == "parse_args" and qualname is None and self._rank_options and result.kind == Kind.UNKNOWN and result.is_bare:
            # the parsed arguments: the options that hold the process's rank are known
            result = Value(Kind.UNKNOWN, fields=tuple(self._rank_options.items()))
        if self.emitting:
            discarded = node is self._statement_call
            self.sink.on_call(CallEvent(node, qualname, callee, method, receiver, args, result, state, discarded))
            if qualname in api.MODULE_RUNNERS:
                self._emit_module_run(node, api.MODULE_RUNNERS[qualname], args, state)
            if method in api.MODEL_RUN_METHODS and receiver is not None and receiver.kind == Kind.MODULE and isinstance(node.func, cst.Attribute):
                # `model.forward(x)` runs the model on `x` as `model(x)` does (without its hooks)
                own = method != "forward" and isinstance(receiver.info, ClassInfo) and receiver.info.find_method(method) is not None
                if not own:
                    # `model.generate(input_ids)`: transformers runs the model on them as they are
                    output = self._call_module(receiver, args)
                    self.sink.on_call(CallEvent(node, None, receiver, None, None, args, output, state, runs_module=node.func.value))
        return result

    def _emit_module_run(
        self, node: cst.Call, where: tuple[tuple[int, str], tuple[int, str]], args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> None:
        """``profile(model, inputs=(x,))``: the library calls ``model(*inputs)``; the rules see
        that call of the module (see CallEvent.runs_module)."""
        found = [_argument_at(args, position, keyword) for position, keyword in where]
        module, inputs = found
        if module is None or inputs is None or module[1].kind != Kind.MODULE:
            return
        (inputs_arg, inputs_value) = inputs
        if inputs_value.kind == Kind.TENSOR:
            run_args: tuple[tuple[cst.Arg, Value], ...] = ((cst.Arg(inputs_arg.value), inputs_value),)  # `torch.jit.trace(model, x)`
        elif inputs_value.kind != Kind.CONTAINER or not isinstance(inputs_value.info, tuple):
            return
        elif isinstance(inputs_arg.value, (cst.Tuple, cst.List)) and len(inputs_arg.value.elements) == len(inputs_value.info):
            if any(isinstance(element, cst.StarredElement) for element in inputs_arg.value.elements):
                return
            run_args = tuple((cst.Arg(element.value), item) for element, item in zip(inputs_arg.value.elements, inputs_value.info))
        else:
            run_args = tuple((cst.Arg(inputs_arg.value), item) for item in inputs_value.info)
        output = self._call_module(module[1], run_args)
        self.sink.on_call(CallEvent(node, None, module[1], None, None, run_args, output, state, runs_module=module[0].value))

    def _own_forward_outputs(self, node: cst.Call, callee: Value, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Optional[Value]:
        """``indices, scores = self(x)`` in a method of a module of the file: its own
        ``forward``, summarised, where that returns a tuple of tensors whose devices are known
        (a module call otherwise gives a tuple whose items are not all known to be tensors)."""
        context = self.current_function
        function = context.node
        info = context.class_info
        if function is None or info is None or callee.info is not info or not isinstance(node.func, cst.Name):
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional or positional[0].name.value != node.func.value or function.name.value in ("forward", "__init__"):
            return None
        outputs = self._call_own_method(node, callee, "forward", args, state)
        if outputs is None or outputs.kind != Kind.CONTAINER or not isinstance(outputs.info, tuple) or not outputs.info:
            return None
        if not all(item.kind == Kind.TENSOR and item.device is not None for item in outputs.info):
            return None
        return outputs

    def _kept_object_result(
        self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...]
    ) -> Optional[Value]:
        """``self.rnn.forward_step(input_var, hidden, outputs)`` in a method of an ``nn.Module``,
        where ``self.rnn`` is an object the module keeps whose class the analysis cannot read
        (handed to its constructor, or built by an imported class), handed a tensor on the
        model's device: whether it is a submodule (on the model's device) or a helper that
        computes with what it is given, what it returns is on the model's device too. Not known
        to be a tensor (a step may return numbers or strings beside); a tensor method or a torch
        function on a part of it says it is one. The arguments' own devices are not checked
        against it: a helper may well take host tensors (a scheduler's host timesteps)."""
        if receiver.kind != Kind.UNKNOWN or not receiver.is_bare or receiver.device is not None:
            return None
        if not any(value.kind == Kind.TENSOR and value.device == MODEL_DEVICE for _, value in args):
            return None
        func = node.func
        key = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if key is None or not self._kept_by_module(key):
            return None
        return Value(Kind.UNKNOWN, MODEL_DEVICE, Origin(node, f"returned by `{key}.{method}()`, which was handed the model's tensors"))

    def _module_evidence(self, value: Value, key: Optional[str] = None) -> Value:
        """An object of unknown kind that the code uses as a module (``model.eval()``): a
        module, on the host where a constructor built it (see constructions), unless it is a
        submodule - in a module class's methods whatever is built moves with the model, and
        what its ``__init__`` built and kept (``self.decoder``, ``key``) follows the model."""
        context = self.current_function
        if constructions.is_construction(value):
            if context.class_info is None or not context.class_info.is_module:
                return constructions.built_module(value)
            if key is not None and self._kept_by_module(key):
                return constructions.submodule(value)
        return Value(Kind.MODULE, value.device, value.origin)

    def _kept_by_module(self, key: str) -> bool:
        """Is ``key`` an attribute of ``self`` (``self.decoder``) seen from a method - not
        ``__init__`` - of an ``nn.Module`` class, where what ``__init__`` kept is a part of the
        model?"""
        context = self.current_function
        function = context.node
        if function is None or context.class_info is None or not context.class_info.is_module or function.name.value == "__init__":
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional or has_decorator(function, "staticmethod") or has_decorator(function, "classmethod"):
            return False
        head, _, attribute = key.partition(".")
        return head == positional[0].name.value and bool(attribute) and "." not in attribute

    def _called_submodule(self, func: cst.BaseExpression, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Optional[Value]:
        """``self.decoder(tokens, ...)`` in a method of an ``nn.Module``, where ``__init__``
        kept an object an imported class built (see constructions) and the call hands it a
        tensor: only a module is called with tensors there, and a submodule follows the model."""
        if not isinstance(func, cst.Attribute) or not any(value.is_tensor_like for _, value in args):
            return None
        key = dotted_name(func)
        if key is None or not self._kept_by_module(key):
            return None
        known = self._lookup_dotted(key, state)
        if known is None or not constructions.is_construction(known):
            return None
        return constructions.submodule(known)

    def _stored_module(self, func: cst.BaseExpression, state: State) -> Optional[Value]:
        """The module or criterion a dotted callee such as ``self.encoder`` holds, if known (or an
        object of a class of the file with a ``__call__``, or a function of the file)."""
        if not isinstance(func, cst.Attribute):
            return None
        key = dotted_name(func)
        if key is None:
            return None
        known = self._lookup_dotted(key, state)
        if known is not None and known.kind in (Kind.MODULE, Kind.CRITERION):
            return known
        if known is not None and known.kind == Kind.UNKNOWN and known.is_bare and known.device is not None:
            return known  # `self.model = self.model.cuda()`: a moved object, called like a model
        if known is not None and known.kind == Kind.UNKNOWN and isinstance(known.info, ClassInfo) and known.info.find_method("__call__") is not None:
            return known  # `self.predictor(images)`: an object of a class of the file, called
        if known is not None and known.kind == Kind.FUNCTION and isinstance(known.info, cst.FunctionDef):
            # `self.metric(y_pred, y_test)`: a function of the file kept on the object (a callback
            # its constructor was given); an attribute set on the object hides a method's name
            return known
        return None

    def _builtin(self, name: str, args: tuple[tuple[cst.Arg, Value], ...], node: Optional[cst.Call] = None) -> Value:
        if name == "enumerate" and args:
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.NUMBER), self.element_of(args[0][1])))))
        if name == "zip" and len(args) == 1 and args[0][0].star == "*":
            return Value(Kind.CONTAINER, info=Homogeneous(_column_of(args[0][1])))
        if name == "zip":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=tuple(self.element_of(value) for _, value in args))))
        if name == "range":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.NUMBER)))
        if name in ("list", "tuple", "sorted", "reversed", "iter") and len(args) == 1:
            return Value(Kind.CONTAINER, info=Homogeneous(self.element_of(args[0][1])))
        if name == "len":
            return Value(Kind.NUMBER)
        if name == "dict" and node is not None:
            return self._mapping_of_pairs(node, args)
        if name == "next" and args:
            return self.element_of(args[0][1])
        if name == "filter" and len(args) == 2 and args[1][1].kind == Kind.PARAMETERS:
            return args[1][1]  # `filter(lambda p: p.requires_grad, model.parameters())`
        return UNKNOWN

    def _label(self, node: cst.BaseExpression) -> str:
        name = dotted_name(node)
        if name is not None:
            return name
        text = self.source_of(node)
        return text if len(text) <= 40 else text[:37] + "..."


_JUMPS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _argument_at(args: tuple[tuple[cst.Arg, Value], ...], position: int, keyword: str) -> Optional[tuple[cst.Arg, Value]]:
    """The argument a call binds to the parameter at ``position`` named ``keyword``; None where
    it is not given or ``*``/``**`` unpacking hides it."""
    if any(arg.star for arg, _ in args):
        return None
    for arg, value in args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg, value
    positional = [(arg, value) for arg, value in args if arg.keyword is None]
    return positional[position] if position < len(positional) else None


def _leaves_block(statements: Sequence[cst.BaseStatement]) -> bool:
    """The block ends by leaving it (``return``, ``raise``, ``continue``, ``break``): its state
    never reaches the statement after it."""
    if not statements:
        return False
    last = statements[-1]
    return isinstance(last, cst.SimpleStatementLine) and bool(last.body) and isinstance(last.body[-1], _JUMPS)


def _tag_arm_moves(chain: cst.If, entry: State, arms: list[tuple[Optional[cst.CSTNode], State]], merged: State) -> None:
    """Where the arms of an if/elif chain moved different values from the host to the
    accelerator, give each such value's device after the chain (``merged``) a PathPlacement
    naming the arms that put it there. Chains that move the same values on the same arms
    (``if cuda: x = x.cuda(); y = y.cuda()``) get none."""
    placed_by_key: dict[str, tuple[frozenset[int], Value]] = {}
    for key, value in merged.items():
        before = entry.get(key)
        if (
            before is value  # no arm rebound it (the cheap, common case)
            or before is None
            or not before.is_tensor_like
            or before.device is None
            or not before.device.is_cpu
            or not value.is_tensor_like
            or (value.device is not None and not value.device.may_be_accelerator)
        ):
            continue
        placed: set[int] = set()
        first_placed: Optional[Value] = None
        for index, (_, arm_state) in enumerate(arms):
            arm_value = arm_state.get(key, before)
            device = arm_value.device
            if device is None or (not device.is_cpu and not device.may_be_accelerator) or device.only_on is not None:
                break  # unknown, or on the accelerator on some paths of an inner chain only
            if device.may_be_accelerator:
                placed.add(index)
                first_placed = first_placed or arm_value
        else:
            if first_placed is not None and len(placed) < len(arms):
                placed_by_key[key] = (frozenset(placed), first_placed)
    if len({placed for placed, _ in placed_by_key.values()}) < 2:
        return
    moving = frozenset().union(*(placed for placed, _ in placed_by_key.values()))
    nodes = tuple(node for node, _ in arms)
    for key, (placed, first_placed) in placed_by_key.items():
        value = merged[key]
        placement = PathPlacement(chain, placed, moving, nodes)
        if value.device is None:
            # arms that put it on different accelerators (`.cuda()`, `.to("mps")`): on one of
            # them, whose index is not known
            assert first_placed.device is not None
            device, origin = replace(first_placed.device, index=None), first_placed.origin
        else:
            device, origin = value.device, value.origin
        merged[key] = replace(value, device=replace(device, only_on=placement), origin=origin)


def _dataclass_fields(body: Iterable[cst.BaseStatement]) -> tuple[str, ...]:
    """The fields a dataclass's body declares (``rotations: torch.Tensor``), in order; class
    variables and init-only pseudo-fields are not fields of the object."""
    names = []
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                annotation = small.annotation.annotation
                head = annotation.value if isinstance(annotation, cst.Subscript) else annotation
                if (dotted_name(head) or "").rsplit(".", 1)[-1] in ("ClassVar", "InitVar", "KW_ONLY"):
                    continue
                names.append(small.target.value)
    return tuple(names)


def _unknown_on_a_device(value: Value) -> bool:
    """A placed value of unknown kind: what an object of unknown class returns once it was
    moved and called, or a part of a placed object. What unpacking it gives lives there too."""
    return value.kind == Kind.UNKNOWN and value.is_bare and value.device is not None


def _collated_length(value: Value) -> Optional[int]:
    """How many positions the dataset items behind a default-collated batch have, where known."""
    return len(value.info.positions) if value.kind == Kind.BATCH and isinstance(value.info, CollatedItems) else None


def _selected_parameters(node: cst.BaseExpression, iterable: Value) -> Optional[Value]:
    """``[p for p in model.parameters() if p.requires_grad]``, ``[p for n, p in
    model.named_parameters() if "bias" not in n]``: some of the parameters of the module that
    ``iterable`` (a single ``for`` clause's) takes them from, as that PARAMETERS value."""
    clause = node.for_in  # type: ignore[attr-defined]
    if iterable.kind != Kind.PARAMETERS or clause.inner_for_in is not None or not isinstance(node.elt, cst.Name):  # type: ignore[attr-defined]
        return None
    target = clause.target
    if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
        target = target.elements[1].value  # named_parameters() gives (name, parameter) pairs
    if isinstance(target, cst.Name) and target.value == node.elt.value:  # type: ignore[attr-defined]
        return iterable
    return None


#: factories whose positional arguments are the sizes of the tensor they make
_SIZED_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})

#: beyond this many rows, unpacking a tensor is not a tuple of placeholders
_MAX_UNPACKED_ROWS = 16


def _picked_from(element: cst.BaseExpression, scope: State) -> Optional[Homogeneous]:
    """``[errors[k] for k in names]``: the entries of a dict (or list) picked one by one; the new
    list may hold what that container may hold (a GPU tensor put in among numbers, and where).
    None for any other element expression, or where the container holds nothing remembered."""
    if not isinstance(element, cst.Subscript) or len(element.slice) != 1 or not isinstance(element.slice[0].slice, cst.Index):
        return None
    key = dotted_name(element.value)
    container = scope.get(key) if key is not None else None
    if container is None or container.kind != Kind.CONTAINER or not isinstance(container.info, Homogeneous):
        return None
    if container.info.some is None and container.info.put_by is None:
        return None
    return container.info


def _literal_sizes(call: cst.Call) -> Optional[list[int]]:
    """The sizes a factory call spells as integer literals (``zeros(3, 0)``, ``zeros((3, 0))``)."""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if len(positional) == 1 and isinstance(positional[0], (cst.Tuple, cst.List)):
        positional = [element.value for element in positional[0].elements]
    if not positional or not all(isinstance(size, cst.Integer) for size in positional):
        return None
    return [int(size.evaluated_value) for size in positional]  # type: ignore[union-attr]


def host_beside_placeholders(element: Value, value: Value, store: cst.CSTNode) -> Optional[HostBesideAccelerator]:
    """A host tensor with a dimension is what every entry of the list was, and the store puts a
    tensor that may be on an accelerator into one of them."""
    apart = host_beside_accelerator(element, value, store)
    return apart if apart is not None and apart.position is None and apart.host is element and apart.host.scalar is False else None


def _column_of(rows: Value) -> Value:
    """One item of ``zip(*rows)``: a column of the rows, a list. Where the rows are tuples that
    hold a host tensor and, at the same position of another row, a tensor that may be on an
    accelerator, that column's entries live apart."""
    info = rows.info
    if rows.kind != Kind.CONTAINER or not isinstance(info, Homogeneous) or not isinstance(info.element.info, tuple) or not info.element.info:
        return Value(Kind.CONTAINER)
    entries = info.element.info
    element = entries[0]
    for entry in entries[1:]:
        element = join(element, entry)
    apart = info.apart
    if apart is not None and apart.position is not None:
        apart = replace(apart, position=None)
    else:
        apart = None
    return Value(Kind.CONTAINER, info=Homogeneous(element, apart=apart))


def _stored_on_every_iteration(loop: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Does every iteration of ``loop`` reach the statement that stores into ``target``: it is
    a plain statement of the loop's body, with no ``continue``/``break``/``return`` before it."""
    body = getattr(loop, "body", None)
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if _contains(statement, target):
            return isinstance(statement, cst.SimpleStatementLine)
        if _contains_jump(statement):
            return False
    return True


class _Finder(cst.CSTVisitor):
    """Whether a statement holds a node that ``wanted`` picks, outside nested functions and
    classes (and, with ``skip_loops``, outside nested loops)."""

    def __init__(self, wanted: Callable[[cst.CSTNode], bool], skip_loops: bool = False) -> None:
        self.wanted = wanted
        self.skipped: tuple[type, ...] = (cst.FunctionDef, cst.ClassDef, cst.Lambda) + ((cst.For, cst.While) if skip_loops else ())
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or isinstance(node, self.skipped):
            return False
        if self.wanted(node):
            self.found = True
            return False
        return True


def _contains(statement: cst.CSTNode, target: cst.CSTNode) -> bool:
    finder = _Finder(lambda node: node is target)
    statement.visit(finder)
    return finder.found


def _contains_jump(statement: cst.CSTNode) -> bool:
    """A ``continue``, ``break``, ``return`` or ``raise`` that can end an iteration early; the
    ``continue`` or ``break`` of a nested loop ends that loop's iteration, not this one's."""
    loop_jumps = _Finder(lambda node: isinstance(node, (cst.Continue, cst.Break)), skip_loops=True)
    statement.visit(loop_jumps)
    if loop_jumps.found:
        return True
    exits = _Finder(lambda node: isinstance(node, (cst.Return, cst.Raise)))
    statement.visit(exits)
    return exits.found


def _through_reexported_torch(qualname: str) -> str:
    """``torch.sparse.torch.eye`` is ``torch.eye``: torch's submodules ``import torch``, so the
    package is reachable through them (an old one-hot idiom spells it so)."""
    if qualname.startswith("torch.") and ".torch." in qualname:
        return "torch." + qualname.rsplit(".torch.", 1)[1]
    return qualname


def _none_checked_key(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """``w is None`` -> ("w", True), ``self.w is not None`` -> ("self.w", False): the state key a
    test compares with ``None``, and whether the body runs when it is None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not is_none_literal(test.comparisons[0].comparator):
        return None
    key = dotted_name(test.left)
    operator = test.comparisons[0].operator
    if key is None or not isinstance(operator, (cst.Is, cst.IsNot)):
        return None
    return key, isinstance(operator, cst.Is)


def _dimensions_kept(elements: Sequence[cst.SubscriptElement], scalar: Optional[bool]) -> Optional[bool]:
    """Is a tensor indexed by ``elements`` known to have a dimension (``scalar`` False)? Slices
    (``:``, ``1:3``) keep every dimension they select from, ``...`` keeps the rest, and ``None``
    adds one: ``mean[:, None, None]`` of a vector is a tensor with dimensions, not a 0-dim one
    that PyTorch would let a GPU operation take. An integer or a tensor index may drop one:
    unknown there."""
    adds_dimension = False
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        if isinstance(index.value, cst.Ellipsis):
            continue
        if is_none_literal(index.value):
            adds_dimension = True
            continue
        return None
    if adds_dimension:
        return False
    return False if scalar is False else None
