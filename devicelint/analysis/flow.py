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

The statement interpreter lives here; expressions and calls are devicelint.analysis.expressions,
what library calls do is devicelint.analysis.torch_semantics, how the file's own functions and
classes are analysed and summarised is devicelint.analysis.summaries (the three mixed into
FlowAnalyzer), the state and its joins are
devicelint.analysis.state, the events devicelint.analysis.events and the facts kept about the
file devicelint.analysis.facts.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Sequence

import libcst as cst

from devicelint.analysis import constructions, helpers
from devicelint.analysis.function_text import FunctionTexts, module_texts
from devicelint.analysis import torch_api as api
from devicelint.analysis.events import EventSink
from devicelint.analysis.host_test_modules import HostTestModules
from devicelint.analysis.host_reads import HostReads
from devicelint.analysis.expressions import Expressions
from devicelint.analysis.facts import (
    ClassInfo,
    CriterionInfo,
    FileFacts,
    FunctionContext,
    LoopInfo,
    RebuiltModule,
    SiteCall,
    StreamContext,
)
from devicelint.analysis.names import constant_key, dotted_name, parameter_names, string_value
from devicelint.analysis.project_imports import ProjectImports
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
from devicelint.analysis.tensor_evidence import TensorEvidence
from devicelint.analysis.torch_semantics import TENSOR_ANNOTATIONS, TorchSemantics, autocast_device_type
from devicelint.analysis.values import (
    NONE_VALUE,
    CollatedItems,
    Homogeneous,
    Kind,
    PathPlacement,
    Role,
    TensorOrNone,
    UNKNOWN,
    Value,
    collated_item,
    filled_mapping,
    device_from_string,
    is_none_literal,
)

if TYPE_CHECKING:
    from devicelint.project import ProjectView

_MAX_FIXPOINT_PASSES = 3


class FlowAnalyzer(Expressions, Summaries, TorchSemantics, ProjectImports):
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
        #: module-level names that a function of the file moves in place (``model.to(device)``)
        #: or rebinds through ``global``: what the other functions read (see _find_globals_moved)
        self.globals_moved: dict[str, tuple[frozenset[cst.FunctionDef], Value]] = {}
        self._own_module_state = self.module_state
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
        #: per lambda evaluated: the function whose body holds it (None at module level)
        self._lambda_defined_in: dict[cst.Lambda, Optional[cst.FunctionDef]] = {}
        self._lambdas_running: set[cst.Lambda] = set()
        self._inline_depth = 0
        self._inlining: set[cst.FunctionDef] = set()
        #: methods being run as part of their object's ``__init__`` (see Summaries._run_for_init)
        self._init_runs: set[cst.FunctionDef] = set()
        #: identifiers of the file's text, counted once, with the names it defines with ``def``
        #: (see Summaries._init_only_helpers)
        self._word_counts: Optional[tuple[Counter[str], Counter[str]]] = None
        #: the names the file defines as properties (``@property def x``; computed once)
        self._property_names: Optional[frozenset[str]] = None
        #: per class name: how many times the text says `class Name` or `super(Name` (counted once)
        self._class_or_super_counts: Optional[Counter[str]] = None
        #: per helper being summarised: the values its return statements gave
        self._returns: list[list[Value]] = []
        #: per function being run silently: None, or (for a method ``__init__`` calls on its own
        #: object, see Summaries._run_for_init) the states its ``return``s leave
        self._exit_states: list[Optional[list[State]]] = []
        self._summaries: dict[tuple, Value] = {}
        #: per function: whether it is a recursive move helper, and how (see Summaries._recursive_mover)
        self._recursive_movers: dict = {}
        #: per (plain class, attribute, construction): does its host module stay there (see Summaries._host_module_never_moved)
        self._host_modules_never_moved: dict = {}
        #: per function: the default device (``torch.set_default_device``) at each summarised
        #: call of it, None where there was none (see Summaries._callers_default)
        self._call_defaults: dict[cst.FunctionDef, list[Optional[Value]]] = {}
        #: per summarised call (the key of ``_summaries``): where the helper left the modules it
        #: was handed, or their modules kept as attributes, that it moved in place (see
        #: Summaries.modules_left_in_arguments)
        self._modules_left: dict[tuple, dict[str, Value]] = {}
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
        #: per function: the calls of it that bind plainly, each with what it binds, whether
        #: the function that makes it had its own analysis start from calls that disagree, and
        #: the module ``forward`` whose own analysis made it (on what it assumed of its inputs),
        #: if any (in the order the reporting passes met them; see
        #: Summaries._specialise_by_call_site)
        self._site_calls: dict[cst.FunctionDef, list[SiteCall]] = {}
        #: per module ``forward`` of the file: what each call of a module of its class that may
        #: be on an accelerator hands it, as handed (see Summaries.note_module_call)
        self._forward_inputs_handed: dict[cst.FunctionDef, list[dict[str, Value]]] = {}
        #: functions whose own analysis started from the join of calls that hand them different
        #: values, or from a literal a call hands them (which that analysis does not use to
        #: choose branches): what their calls hand on may come from paths no one call takes
        self._joined_differing_calls: set[cst.FunctionDef] = set()
        #: per function that had its own analysis: its class, the state of the function around
        #: it (a nested one), and the arguments its analysis started from
        self._analysed_as: dict[cst.FunctionDef, tuple[Optional[ClassInfo], Optional[State], dict[str, Value]]] = {}
        #: per module ``forward`` of the file: what its own analysis took each parameter to be
        #: (inputs on the model's device, defaults, annotations); a call of the module that
        #: hands it values placed otherwise gets a pass of its own (see Summaries.note_module_call)
        self._forward_parameters_assumed: dict[cst.FunctionDef, dict[str, Value]] = {}
        #: the call whose arguments the reporting pass under way runs its function on (a pass of
        #: one call site, see Summaries._specialise_by_call_site); None for every other pass
        self.call_context: Optional[cst.Call] = None
        self._called: Optional[frozenset[str]] = None
        self._called_count: Optional[Counter[str]] = None
        #: per module class: whether its methods wait for constructions the analysis has not
        #: met yet, as of that many constructions met (see Summaries._waits_for_injection)
        self._awaiting: dict[ClassInfo, tuple[int, bool]] = {}
        #: (how many classes the file had, the classes its built classes derive from): see
        #: Summaries._bases_of_built_classes
        self._built_bases: tuple[int, frozenset[ClassInfo]] = (-1, frozenset())
        #: per function: its body's text, for the two parameter scans below (cut from the
        #: file's text when it can be, see function_text; once per function either way)
        self._body_texts: dict[cst.FunctionDef, str] = {}
        #: per (class node id, attribute): does the class move ``self.<attribute>`` where it reads it
        self._moved_where_read: dict[tuple[int, str], bool] = {}
        #: per function: does its own body yield (see Summaries._is_generator)
        self._generators: dict[cst.FunctionDef, bool] = {}
        # the file's entry in the project index, when its tree is the one kept there: one
        # FunctionTexts for this lint and the files importing it (see ParsedModule.texts)
        kept = project.kept(module, text) if project is not None and text is not None else None
        self._own_texts = module_texts(kept) if kept is not None else FunctionTexts(module, text) if text is not None else None
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
        #: per function: the parameters, and modules kept as attributes of them, that its body
        #: moves in place (``model.cpu()``, ``state.model.to(device)``; see
        #: Summaries._moved_in_place_by)
        self._parameters_moved_in_place: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per nested function: the names of the function around it that its body moves in
        #: place (see Summaries.free_modules_moved_in_place)
        self._free_names_moved_in_place: dict[cst.FunctionDef, frozenset[str]] = {}
        #: per function: the parameters it hands to numpy or matplotlib (see _numpy_read_parameters)
        self._numpy_reads_found: dict[cst.FunctionDef, dict[str, cst.Call]] = {}
        #: per function: the checkpoint loader it is, if any (see Summaries.checkpoint_load_call)
        self._checkpoint_loaders: dict[cst.FunctionDef, Optional[CheckpointLoader]] = {}
        #: per module ``forward``: the parameters it moves itself (see inputs_placed_by_module)
        self._moved_inputs: dict[cst.FunctionDef, frozenset[str]] = {}
        #: which parameters of the methods asked about are read only on the host (see host_reads)
        self._host_reads = HostReads()
        #: per method of a module class: whether it computes with the module's own weights
        #: (see Summaries.own_method_inputs)
        self._own_weight_readers: dict[cst.FunctionDef, bool] = {}
        #: per ``forward`` asked about: whether every ``return`` gives a dict written out (see
        #: Summaries.returns_mapping_literal)
        self._mapping_returners: dict[cst.FunctionDef, bool] = {}
        #: per ``forward`` of a module without weights: the parameter pairs it combines (see
        #: Summaries._inputs_placed_by_weightless_module)
        self._combined_inputs: dict[cst.FunctionDef, frozenset[tuple[str, str]]] = {}
        #: command-line options of the file's argument parsers that hold the process's rank
        #: (``--local_rank``), by the attribute of the parsed arguments (see ranks.rank_option)
        self._rank_options: dict[str, Value] = {}
        #: per function, the names its body assigns (see Summaries.parameter_read_unchanged)
        self._rebound_names: dict[cst.FunctionDef, frozenset[str]] = {}
        #: (function, parameter) -> the calls that re-bind the parameter to a conversion of itself (see parameter_converted_in_place)
        self._conversions_in_place: dict[tuple[cst.FunctionDef, str], Optional[list[cst.Call]]] = {}
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
        # a block written on its header's line (`if use_cuda: x = x.cuda()`, `def f(x): return
        # x.cuda()`) is a SimpleStatementSuite, and its `.body` holds the small statements
        # themselves: they run as the same statements on lines of their own would
        self._stmt_handlers[cst.SimpleStatementSuite] = self._exec_simple_line
        self._stmt_handlers.update(self._small_handlers)
        self._init_expressions()

    # ------------------------------------------------------------------ driver

    def run(self) -> None:
        # the module's state is live while the module body runs: classes instantiated at
        # module level resolve the names their __init__ uses through it
        self.exec_block(self.module.body, self.module_state)
        self.globals_moved = self._find_globals_moved()
        while self._pending:
            function, class_info, enclosing = self._pending.pop(self._next_pending())
            self._analyse_function(function, class_info, enclosing)
        self._specialise_by_call_site()

    def _find_globals_moved(self) -> dict[str, tuple[frozenset[cst.FunctionDef], Value]]:
        """Module-level models (or objects of unknown kind) that a function of the file moves in
        place with a bare ``.to``/``.cuda``/``.cpu`` statement, or rebinds after ``global``:
        when the program runs, the other functions may see them moved, so they do not read the
        placement module level left. Where every such function moves the global once, as a
        statement of its own body (not under an ``if``), to the same device that module level
        can name, the other functions see it there; otherwise its placement is unknown. The
        moving functions keep their own flow (before their move, it is where module level put it)."""
        state = self.module_state
        candidates = {
            name for name, value in state.items()
            if "." not in name and value.device is not None and (value.kind == Kind.MODULE or value.kind == Kind.UNKNOWN and value.is_bare)
        }
        if not candidates:
            return {}
        functions: list[cst.FunctionDef] = []
        for statement in self.module.body:
            if isinstance(statement, cst.FunctionDef):
                functions.append(statement)
            elif isinstance(statement, cst.ClassDef):
                functions.extend(s for s in helpers.block_statements(statement.body) if isinstance(s, cst.FunctionDef))
        movers: dict[str, list[tuple[cst.FunctionDef, Optional[Value]]]] = {}
        for function in functions:
            moved = self.free_modules_moved_in_place(function) & candidates
            rebound: set[str] = set()
            text = self.body_text(function)
            if "global" in text:
                for match in _GLOBAL_STATEMENT.finditer(text):
                    rebound.update(name.strip() for name in match.group(1).split(",") if name.strip() in candidates)
            for name in moved - rebound:
                movers.setdefault(name, []).append((function, self._global_moved_by(function, name, text)))
            for name in rebound:
                movers.setdefault(name, []).append((function, None))
        found: dict[str, tuple[frozenset[cst.FunctionDef], Value]] = {}
        for name, moves in movers.items():
            placed = [value for _, value in moves]
            first = placed[0]
            agreed = first is not None and all(value is not None and value.device == first.device for value in placed)
            seen = first if agreed else replace(state[name], device=None)  # type: ignore[arg-type]
            found[name] = (frozenset(function for function, _ in moves), seen)
        return found

    def _global_moved_by(self, function: cst.FunctionDef, name: str, text: str) -> Optional[Value]:
        """Where ``function`` moves the module global ``name`` when its own body does so once,
        unconditionally, to a device module level names (no argument, a literal, or a name the
        function neither binds nor takes); None otherwise."""
        found: Optional[cst.Call] = None
        for statement in helpers.block_statements(function.body):
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                call = small.value if isinstance(small, cst.Expr) else None
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and isinstance(call.func.value, cst.Name)
                    and call.func.value.value == name
                    and call.func.attr.value in ("to", "cuda", "cpu")
                ):
                    if found is not None:
                        return None
                    found = call
        if found is None:
            return None
        bound = set(parameter_names(function))
        for arg in found.args:
            if arg.star or not isinstance(arg.value, (cst.Name, cst.SimpleString, cst.Integer)):
                return None
            if isinstance(arg.value, cst.Name):
                used = arg.value.value
                if used in bound or re.search(rf"(?<![.\w]){re.escape(used)}\s*(?:=(?!=)|[-+*/]=)|\b(?:for|as|global|import)\s+{re.escape(used)}\b", text):
                    return None
        saved = self.emitting
        self.emitting = False
        try:
            value = self.eval(found, dict(self.module_state))
        finally:
            self.emitting = saved
        if value.kind != Kind.MODULE or value.device is None:
            return None
        return value

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
        built_on_host = value.kind == Kind.MODULE and value.device is not None and value.device.is_cpu and origin.created
        if not built_on_host and not constructions.is_construction(value):
            return
        replaced = state.get(name)  # this scope's own binding only: another scope's is another variable
        if replaced is None or replaced.kind not in (Kind.MODULE, Kind.UNKNOWN) or replaced.kind == Kind.UNKNOWN and not replaced.is_bare:
            return
        if replaced.device is None or not replaced.device.may_be_accelerator or replaced.device.only_on is not None:
            return
        if replaced.origin is None or not replaced.origin.moved:
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
        elif isinstance(node.target, cst.Subscript):
            self._remember_item(node.target, result, state)  # `stats["loss"] += loss`

    def _exec_return(self, node: cst.Return, state: State) -> None:
        value = self.eval(node.value, state) if node.value is not None else NONE_VALUE
        if isinstance(node.value, cst.Name):
            value = _with_modules_set_on(node.value.value, value, state)
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
        elif isinstance(node.target, cst.Subscript):
            self._remember_item(node.target, None, state)

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
        for name, none_branch in _none_checks(node.test):
            # `if weight is not None:` (or `if self.weight is not None:`) where `weight` is a
            # tensor or None: that tensor there
            current = state.get(name, UNKNOWN)
            if current.kind == Kind.UNKNOWN and isinstance(current.info, TensorOrNone):
                (else_state if none_branch else body_state)[name] = current.info.tensor
        if impossible is None:
            on_arguments = self._inline_depth > 0 or self.call_context is not None
            impossible = _none_check_impossible(node.test, state, on_arguments, on_arguments or self.current_function.name == "__init__")
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
        body_leaves = impossible is not True and _leaves_block(node.body.body)
        else_leaves = isinstance(orelse, cst.Else) and _leaves_block(orelse.body.body)
        if impossible is True:
            merged = else_state
        elif impossible is False:
            merged = body_state
            del arms[first_else_arm:]
        elif body_leaves != else_leaves:
            # `if x is None: continue` / `if not ok: return`: the arm that leaves never reaches
            # the next statement, which sees only the other arm (`x` a tensor there); a
            # `continue`/`break` arm meets the rest of the loop body at its end instead
            leaving, staying = (node.body.body, else_state) if body_leaves else (orelse.body.body, body_state)  # type: ignore[union-attr]
            self._jumped_out(leaving, body_state if body_leaves else else_state)
            merged = staying
        else:
            merged = join_states(body_state, else_state)
        defaulted = _defaulted_key(node.test)
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

    def _jumped_out(self, block: Sequence[cst.BaseStatement], state: State) -> None:
        """``block`` ended with ``state`` by a jump: a ``continue``/``break`` state joins the
        enclosing loop's iteration at its end (see _run_iteration); a ``return``/``raise``
        state goes nowhere after the block (``return`` states are kept by _exec_return)."""
        last = block[-1]
        jump = last if isinstance(last, _JUMPS) else last.body[-1] if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None
        if isinstance(jump, (cst.Continue, cst.Break)) and self.loop_stack:
            self.loop_stack[-1].jumped.append(state)

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
                if attempt == passes - 1 and was_emitting:
                    # (inside an outer silent pass the one pass's join is kept: widening there
                    # would lose what the inner loop accumulates - `mse += ...` over the batches
                    # of each image - for the outer loop's whole fixpoint, which bounds it anyway)
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
        loop = self.loop_stack[-1] if self.loop_stack else None
        if loop is not None:
            loop.jumped.clear()
        self.exec_block(body, state)
        if loop is not None and loop.jumped:
            jumped, loop.jumped = loop.jumped, []
            for early in jumped:
                replace_state(state, join_states(state, early))

    def _exec_with(self, node: cst.With, state: State) -> None:
        scoped_default: Optional[Value] = None
        stream: Optional[StreamContext] = None
        cpu_autocast = False
        for item in node.items:
            value = self.eval(item.item, state)
            if isinstance(item.item, cst.Call):
                autocast = autocast_device_type(item.item, self.qualname_of(item.item.func, state))
                cpu_autocast = cpu_autocast or (autocast is not None and autocast[0] == "cpu")
            if value.kind == Kind.DEVICE and isinstance(item.item, (cst.Call, cst.Name, cst.Attribute)):
                # `with torch.device(d):`, or `with device:` on a torch.device object
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
        mapping = any(q in api.MAPPING_BASES for q in qualnames) or any(info.is_mapping for info in base_infos) or any(
            isinstance(base.value, cst.Name) and base.value.value == "dict" and "dict" not in state for base in node.bases
        )
        methods: dict[str, cst.FunctionDef] = {}
        body = helpers.block_statements(node.body)  # also `class Config: device = "cuda"`
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
            is_mapping=mapping,
            is_process=any(q in api.PROCESS_CLASSES for q in qualnames) or any(info.is_process for info in base_infos),
            is_optimizer=any(q in api.OPTIMIZER_BASES for q in qualnames) or any(info.is_optimizer for info in base_infos),
            is_distributed_wrapper=any(q in api.DISTRIBUTED_DATA_PARALLEL for q in qualnames) or any(info.is_distributed_wrapper for info in base_infos),
        )
        if not node.bases and "__init__" not in methods and any(
            self.qualname_of(decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator, state)
            == "dataclasses.dataclass"
            for decorator in node.decorators
        ):
            info.dataclass_fields = _dataclass_fields(body)
        elif qualnames == ["typing.NamedTuple"] and len(node.bases) == 1 and "__new__" not in methods:
            # `class Batch(NamedTuple): x: torch.Tensor`: its constructor binds the annotated
            # fields in order, as a dataclass's does
            info.dataclass_fields = _dataclass_fields(body)
        state[node.name.value] = Value(Kind.CLASS, info=info)
        if self.emitting:
            self._classes.append(info)
            # __init__ first: the other methods see the attributes it leaves; every definition
            # runs, also one a later one of the same name hides from `methods` (a property's
            # getter, whose setter is defined under its name)
            defined = [statement for statement in body if isinstance(statement, cst.FunctionDef)]
            ordered = sorted(defined, key=lambda method: method.name.value != "__init__")
            for method in ordered:
                self._pending.append((method, info, None))
        for statement in body:
            if isinstance(statement, helpers.SIMPLE_LINES):
                class_scope = dict(state)
                self._exec_simple_line(statement, class_scope)
                for small in statement.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [target.target for target in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        for target in targets:
                            bound = class_scope.get(target.value) if isinstance(target, cst.Name) else None
                            if bound is not None and bound.kind == Kind.TENSOR:
                                info.class_attributes[target.value] = bound  # `MEAN = torch.tensor([...])`

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
            if value.fields is not None and value.role is Role.MODULES_SET_ON_OBJECT:
                for attribute, module in value.fields:
                    state[f"{target.value}.{attribute}"] = module  # see _with_modules_set_on
            return
        if isinstance(target, cst.Attribute):
            key = dotted_name(target)
            if key is None:
                self.eval(target.value, state)
                return
            accessors = self.property_accessors(target, state)
            if accessors is not None:
                # `self.inputs = x` where `inputs` is a property: its setter runs, and a read
                # runs the getter; nothing is stored under that name
                getter, setter, owner, receiver = accessors
                state.pop(key, None)
                if setter is not None and value_node is not None:
                    self.run_setter(setter, owner, receiver, ((cst.Arg(value_node), value),), state, dotted_name(target.value))
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
            tensor_index: Optional[Value] = None
            for element in target.slice:
                if isinstance(element.slice, cst.Index):
                    index = self.eval(element.slice.value, state)
                    if tensor_index is None and index.kind in (Kind.TENSOR, Kind.BATCH):
                        tensor_index = index
            if self.emitting and value_node is not None:
                self.sink.on_subscript_assign(target, value_node, value)
                if tensor_index is not None and base.kind == Kind.TENSOR:
                    self.sink.on_index_put(target, base, tensor_index, value_node, value)
                if base.kind == Kind.NDARRAY:
                    self.sink.on_ndarray_store(target, value_node, value)
            key = dotted_name(target.value)
            if key is not None and key in state and state[key].kind == Kind.BATCH and value.kind in (Kind.STR, Kind.NUMBER):
                pass  # batch["text"] = text: a string or number beside its tensors leaves them where they are
            elif (
                key is not None and key in state and state[key].kind == Kind.BATCH and state[key].device is not None
                and len(target.slice) == 1 and constant_key(target) is not None
            ):
                # `batch["text"] = batch["text"].to(d)`: that entry reads back as stored (see
                # _remember_item); the batch's other entries stay where they were
                pass
            elif key is not None and key in state and state[key].kind in (Kind.BATCH, Kind.CONTAINER):
                # batch["x"] = batch["x"].to(d): the collection is no longer all-CPU
                state[key] = (
                    self._placeholder_replaced(state[key], target, value)
                    or filled_mapping(state[key], value, target)
                    or Value(state[key].kind)
                )
            self._remember_item(target, value, state)
            return
        if isinstance(target, cst.StarredElement):
            self.assign(target.value, UNKNOWN, state, None)

    def _remember_item(self, target: cst.Subscript, stored: Optional[Value], state: State) -> None:
        """``cfg["device"] = dev`` (also as a target of a tuple assignment): the entry at that
        constant key reads back as ``stored`` - in this function, and in a function of the file
        the collection is handed to - until code that may change it has the collection (a call
        it is handed to, a method of its own; see forget_items_handed). A store at a key that
        is not a constant, or into an entry's own entries, or ``stored`` None (``del``, a store
        this does not follow), forgets them all."""
        collection = target.value
        while isinstance(collection, cst.Subscript):
            collection = collection.value
        key = dotted_name(collection)
        held = state.get(key) if key is not None else None
        if held is None:
            return  # not bound in this scope: another scope's collection is not rebound from here
        item = constant_key(target) if collection is target.value and stored is not None else None
        if item is not None and _keeps_items(held):
            state[key] = held.with_item(item, stored)  # type: ignore[arg-type]
        elif held.has_items:
            state[key] = held.without_items()


#: ``global a, b`` in a function's body text
_GLOBAL_STATEMENT = re.compile(r"\bglobal\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)")


def _keeps_items(collection: Value) -> bool:
    """Is the value a collection whose constant-key entries the analysis keeps: a dict or
    config (a container, a batch, an object of unknown class) - not a tensor or array (whose
    subscript stores write elements), a module (``ModuleDict``, which places what it stores)
    or an object of a known class or role."""
    if collection.kind in (Kind.CONTAINER, Kind.BATCH):
        return True
    return collection.kind == Kind.UNKNOWN and collection.is_bare


_JUMPS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _none_check_impossible(test: cst.BaseExpression, state: State, on_arguments: bool, defaults_decide: bool) -> Optional[bool]:
    """``if ids is None:`` where ``ids`` holds a tensor the code made (one with an origin: what
    every call of the function hands it, or what the function itself made), not a parameter's
    assumed kind: a tensor is never None, so the branch for None cannot run (True) and the one
    for a tensor always does (False); None where the test is no such check."""
    none_checked = _none_checked_key(test)
    if none_checked is not None:
        known = state.get(none_checked[0])
        if known is not None and known.kind == Kind.NUMBER and (
            known.role is Role.NONE_DEFAULT and defaults_decide or known.role is Role.NONE_LITERAL and on_arguments
        ):
            # `if device is None: self.device = ...` in an `__init__` every construction leaves
            # `device` at its None default (what the other methods see of the object is what
            # the constructions made), or, running a helper or method on one call's values, the
            # same test of a None default, or `if self.net is not None: return` where the caller
            # just stored None there: the None branch always runs. Not in a function's own
            # analysis (it is judged for what any caller may hand it: `if device is not None:
            # grid = grid.to(device)` honours a device no call of the file passes yet), nor for
            # a None some call hands in (a function handed to `mp.spawn` gets other values too).
            return not none_checked[1]
    checked = none_checked_name(test)
    if checked is None:
        return None
    value = state.get(checked[0])
    if value is None or value.kind != Kind.TENSOR or value.origin is None:
        return None
    return checked[1]


def _leaves_block(statements: Sequence[cst.BaseStatement]) -> bool:
    """The block ends by leaving it (``return``, ``raise``, ``continue``, ``break``): its state
    never reaches the statement after it."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, _JUMPS):
        return True  # the small statements of a block on its header's line (`if done: break`)
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and bool(last.body) and isinstance(last.body[-1], _JUMPS)


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
        if not isinstance(statement, helpers.SIMPLE_LINES):
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


def _none_checks(test: cst.BaseExpression) -> list[tuple[str, bool]]:
    """The None checks a test settles in one of its branches (see _none_checked_key): the test
    itself, every check of an ``or`` (all of them are false where the test is: ``if x is None
    or done: continue``, then `x` is not None) and of an ``and`` (all true where it is)."""
    single = _none_checked_key(test)
    if single is not None:
        return [single]
    if not isinstance(test, cst.BooleanOperation):
        return []
    operands: list[cst.BaseExpression] = []
    operator = type(test.operator)
    pending: list[cst.BaseExpression] = [test]
    while pending:
        part = pending.pop()
        if isinstance(part, cst.BooleanOperation) and isinstance(part.operator, operator):
            pending.extend((part.right, part.left))
        else:
            operands.append(part)
    checks = []
    for operand in operands:
        check = _none_checked_key(operand)
        # `or`: the else branch knows every operand false, so only `x is None` narrows there;
        # `and`: the body knows every operand true, so only `x is not None` narrows there
        if check is not None and check[1] == (operator is cst.Or):
            checks.append(check)
    return checks


def _defaulted_key(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """The name or attribute a test makes its default for (see _exec_if): ``x is None`` /
    ``x is not None`` alone, or ``x is None`` as one operand of an ``or`` whose body rebuilds a
    stale cache (``if self.kernel is None or self.kernel.shape[1] != c: self.kernel = ...``): the
    body runs whenever it is None. One such name only."""
    single = _none_checked_key(test)
    if single is not None or not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)):
        return single
    checks = {check for check in _none_checks(test) if check[1]}
    return next(iter(checks)) if len(checks) == 1 else None


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


def _with_modules_set_on(name: str, value: Value, state: State) -> Value:
    """``return instance`` from a loader or factory (``instance = cls(...)``, ``instance.model =
    Net()``, ``return instance``): the object goes back with the modules the function set on it,
    which the caller's name then holds (``loaded.model``) for the object's methods to find. Only
    for an object of a plain class of the file without fields of its own, and modules whose
    device is known."""
    info = value.info
    if value.kind != Kind.UNKNOWN or value.fields is not None or value.role is not None or not isinstance(info, ClassInfo) or info.is_module or info.is_dataset:
        return value
    prefix = name + "."
    modules = tuple(
        (key[len(prefix):], module)
        for key, module in state.items()
        if key.startswith(prefix) and "." not in key[len(prefix):] and module.kind == Kind.MODULE and module.device is not None
    )
    if not modules:
        return value
    return replace(value, fields=modules, role=Role.MODULES_SET_ON_OBJECT)
