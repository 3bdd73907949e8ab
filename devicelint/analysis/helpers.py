"""Summaries of the file's own functions and methods, for their callers.

A call of a function or method defined in the analysed file (``make_mask(n)``, ``self._embed(x)``,
``Helper.pad(x)``) is evaluated by running the callee's body silently with the callers'
argument values bound to its parameters, and joining what its ``return`` statements give back.
The result is memoised per callee and abstract arguments, so each helper is summarised once for
each distinct way it is called. Anything the analysis cannot follow - a generator, ``async``,
an unknown decorator, ``*args`` at the call site, arguments that do not fit the signature, a
body that may fall off its end, a method a subclass in the file overrides, recursion - gives
the caller an unknown value, as before.

This module holds the pure, syntax-only parts; FlowAnalyzer does the evaluation.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.names import OwnScopeVisitor, dotted_name
from devicelint.deferred_bodies import unparsed_body
from devicelint.analysis.values import UNKNOWN, Kind, Origin, Value, mapping_of

#: how many helper calls deep the analysis follows
MAX_DEPTH = 3
#: summaries computed per file at most (memo hits are free): bounds the cost on huge files
MAX_SUMMARIES = 400

#: decorators that leave what a function returns alone
TRANSPARENT_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "torch.jit.unused",
        "torch.jit.ignore",
        # a TorchScript function places its tensors as the Python one does
        "torch.jit.script",
        "torch.jit.script_method",
        "torch.compile",
        "torch.autocast",
        "torch.cuda.amp.autocast",
        "torch.amp.autocast",
        "functools.lru_cache",
        "functools.cache",
        "functools.wraps",
    }
)


def assigned_names(
    statements: list[cst.BaseStatement] | tuple[cst.BaseStatement, ...],
    kind_keeping_methods: frozenset[str] = frozenset(),
    rescaling_kept: bool = False,
) -> frozenset[str]:
    """Names and dotted names (``x``, ``self.cache``) that statements assign, walking the
    statement structure only - no generic tree walk, which costs as much as the parse -
    and not entering nested functions and classes. With ``kind_keeping_methods``, a name
    re-bound only to what those methods of its own object return (``x = x.unsqueeze(1)``,
    ``x = x.view(n, -1).float()``) is left out: it holds the same kind of object throughout;
    with ``rescaling_kept``, so is one re-bound to arithmetic of itself and numbers
    (``img = img / 2 + 0.5``: the same kind of value, on the same device)."""
    names: set[str] = set()
    for statement in _statement_structure(statements):
        if isinstance(statement, SIMPLE_LINES):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    if kind_keeping_methods and _rebinds_to_own_method(small, kind_keeping_methods):
                        continue
                    if rescaling_kept and _rescales_itself(small):
                        continue
                    for target in small.targets:
                        _add_target(target.target, names)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    _add_target(small.target, names)
        else:
            _add_compound_targets(statement, names)
    return frozenset(names)


#: what holds small statements (``x = f(); return x``) in its ``body``: a line of its own, or a
#: block written on its header's line (``if use_gpu: x = x.cuda()``, ``def f(x): return x``),
#: which libcst keeps as a SimpleStatementSuite in place of an indented block
SIMPLE_LINES = (cst.SimpleStatementLine, cst.SimpleStatementSuite)


def _statement_structure(statements: list[cst.BaseStatement] | tuple[cst.BaseStatement, ...]) -> list[cst.BaseStatement]:
    """The statements and those nested in their compound statements' bodies (last first), but
    not the bodies of nested functions and classes: the statement structure only, no generic
    tree walk (which costs as much as the parse). A list, not a generator: this runs for every
    analysed body, where a frame per statement shows. A block on its header's line is met as
    one SimpleStatementSuite, whose small statements are read as a line's."""
    found: list[cst.BaseStatement] = []
    pending = list(statements)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        found.append(statement)
        if not isinstance(statement, SIMPLE_LINES):
            pending.extend(_inner_statements(statement))
    return found


def _add_compound_targets(statement: cst.BaseStatement, names: set[str]) -> None:
    """What a ``for`` or ``with`` statement binds (its loop target, its ``as`` names)."""
    if isinstance(statement, cst.For):
        _add_target(statement.target, names)
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None:
                _add_target(item.asname.name, names)


def conversions_of(statements: list[cst.BaseStatement] | tuple[cst.BaseStatement, ...], name: str) -> Optional[list[cst.Call]]:
    """Where statements re-bind ``name`` only to a call made from it (``mean =
    torch.tensor(mean)[None]``, ``std = torch.tensor([std])``, maybe followed by subscripts
    and method calls): those calls, in the order met; an empty list where nothing re-binds it,
    None where anything else does (another value, an augmented or unpacking assignment, a loop
    or ``with`` target). Walks the statement structure only, as ``assigned_names`` does."""
    calls: list[cst.Call] = []
    for statement in _statement_structure(statements):
        if isinstance(statement, SIMPLE_LINES):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    bound: set[str] = set()
                    for target in small.targets:
                        _add_target(target.target, bound)
                    if name not in bound:
                        continue
                    call = _call_made_from(small, name)
                    if call is None:
                        return None
                    calls.append(call)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    bound = set()
                    _add_target(small.target, bound)
                    if name in bound:
                        return None
            continue
        loop_or_with: set[str] = set()
        _add_compound_targets(statement, loop_or_with)
        if name in loop_or_with:
            return None
    calls.reverse()
    return calls


def _call_made_from(assign: cst.Assign, name: str) -> Optional[cst.Call]:
    """``name = f(name, ...)`` or ``name = f([name], ...)`` (then subscripts and method calls
    on it): the call ``f(...)``; None for any other assignment of ``name``."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    value = assign.value
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, (cst.Call, cst.Subscript)):
            value = value.func.value
        else:
            break
    if not isinstance(value, cst.Call):
        return None
    positional = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
    if not positional:
        return None
    data = positional[0]
    if isinstance(data, (cst.List, cst.Tuple)) and len(data.elements) == 1:
        data = data.elements[0].value
    return value if isinstance(data, cst.Name) and data.value == name else None


def _rebinds_to_own_method(assign: cst.Assign, methods: frozenset[str]) -> bool:
    """``x = x.m1(...).m2(...)``: one name re-bound to a chain of ``methods`` called on itself."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    value = assign.value
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in methods:
        value = value.func.value
        if isinstance(value, cst.Name):
            return value.value == name
    return False


def _rescales_itself(assign: cst.Assign) -> bool:
    """``x = x / 2 + 0.5`` / ``x = -(x - 1) * 3``: one name re-bound to arithmetic of itself
    (read at least once) and number literals only."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    reads = 0
    stack: list[cst.BaseExpression] = [assign.value]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation):
            stack.extend((current.left, current.right))
        elif isinstance(current, cst.UnaryOperation) and isinstance(current.operator, (cst.Minus, cst.Plus)):
            stack.append(current.expression)
        elif isinstance(current, cst.Name) and current.value == name:
            reads += 1
        elif not isinstance(current, (cst.Integer, cst.Float)):
            return False
    return reads > 0


def assigned_in(function: cst.FunctionDef) -> frozenset[str]:
    """``assigned_names`` of the function's body. The body of an imported module's function
    that nothing has read yet (devicelint.deferred_bodies) is not parsed for it: the same names
    are read from Python's ``ast`` of it (a class's attributes that its methods write are asked
    for all of its methods, most of which never run)."""
    body = unparsed_body(function)
    if body is not None:
        return _assigned_in_syntax(body.syntax.body)
    return assigned_names(body_statements(function))


def ending_and_assigned(function: cst.FunctionDef) -> tuple[bool, frozenset[str]]:
    """(``may_fall_off_end``, ``assigned_names``) of the function's body; for a body not parsed
    yet, read from Python's ``ast`` of it (see ``assigned_in``): a call of a function that may
    fall off its end is not summarised, and its body need not be parsed."""
    body = unparsed_body(function)
    if body is not None:
        statements = body.syntax.body
        return _may_fall_off_end_syntax(statements), _assigned_in_syntax(statements)
    parsed = body_statements(function)
    return may_fall_off_end(parsed), assigned_names(parsed)


def _may_fall_off_end_syntax(statements: list[ast.stmt]) -> bool:
    """``may_fall_off_end`` on Python's tree of an indented block, with libcst's grouping: the
    simple statements of one line (``x = f(); return x``) are one SimpleStatementLine, and a
    block on its header's line (``else: return x``) one SimpleStatementSuite, read as a line."""
    if not statements:
        return True
    last = statements[-1]
    if isinstance(last, ast.If):
        if not last.orelse or _may_fall_off_end_syntax(last.body):
            return True
        return _may_fall_off_end_syntax(last.orelse)  # an elif, or the else block
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _may_fall_off_end_syntax(last.body)
    if isinstance(last, _COMPOUND_SYNTAX):
        return True
    # the simple statements sharing the last one's line (`;`)
    line = [last]
    for statement in reversed(statements[:-1]):
        if isinstance(statement, _COMPOUND_SYNTAX) or statement.end_lineno != line[-1].lineno:
            break
        line.append(statement)
    return not any(isinstance(statement, (ast.Return, ast.Raise)) for statement in line)


#: ``match`` is in Python's ``ast`` from 3.10 on
_AST_MATCH = getattr(ast, "Match", ())
_COMPOUND_SYNTAX = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    getattr(ast, "TryStar", ast.Try),
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    _AST_MATCH,
)


def _assigned_in_syntax(statements: list[ast.stmt]) -> frozenset[str]:
    """``assigned_names`` on Python's own tree of an indented block: the same statements are
    entered (also a block written on its header's line, ``if x: y = 1``, which libcst makes a
    SimpleStatementSuite that ``assigned_names`` reads as a line)."""
    names: set[str] = set()
    pending = list(statements)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                _add_syntax_target(target, names)
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            _add_syntax_target(statement.target, names)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            _add_syntax_target(statement.target, names)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                if item.optional_vars is not None:
                    _add_syntax_target(item.optional_vars, names)
        if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            blocks = [statement.body, statement.orelse]
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            blocks = [statement.body]
        elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            blocks = [statement.body, *(handler.body for handler in statement.handlers), statement.orelse, statement.finalbody]
        elif isinstance(statement, _AST_MATCH):
            blocks = [case.body for case in statement.cases]
        else:
            blocks = []
        for block in blocks:
            pending.extend(block)
    return frozenset(names)


def _add_syntax_target(target: ast.expr, names: set[str]) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _add_syntax_target(element, names)
        return
    if isinstance(target, (ast.Starred, ast.Subscript)):
        _add_syntax_target(target.value, names)
        return
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
        names.add(".".join(reversed(parts)))


def _inner_statements(statement: cst.BaseStatement) -> list[cst.BaseStatement]:
    blocks: list[cst.BaseSuite] = []
    if isinstance(statement, cst.If):
        blocks.append(statement.body)
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            return [*block_statements(statement.body), orelse]
        if orelse is not None:
            blocks.append(orelse.body)
    elif isinstance(statement, (cst.For, cst.While)):
        blocks.append(statement.body)
        if statement.orelse is not None:
            blocks.append(statement.orelse.body)
    elif isinstance(statement, cst.With):
        blocks.append(statement.body)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        blocks.append(statement.body)
        blocks.extend(handler.body for handler in statement.handlers)
        if statement.orelse is not None:
            blocks.append(statement.orelse.body)
        if statement.finalbody is not None:
            blocks.append(statement.finalbody.body)
    elif isinstance(statement, cst.Match):
        blocks.extend(case.body for case in statement.cases)
    inner: list[cst.BaseStatement] = []
    for block in blocks:
        inner.extend(block_statements(block))
    return inner


def block_statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block: an indented block's, or the block written on its header's
    line itself (a SimpleStatementSuite, whose small statements are read as a line's)."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    return [suite]  # type: ignore[list-item]


def _add_target(target: cst.BaseExpression, names: set[str]) -> None:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _add_target(element.value, names)
        return
    if isinstance(target, cst.StarredElement):
        _add_target(target.value, names)
        return
    if isinstance(target, cst.Subscript):
        _add_target(target.value, names)
        return
    name = dotted_name(target)
    if name is not None:
        names.add(name)


def may_fall_off_end(statements: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]) -> bool:
    """Can control reach the end of this block (and so return None)? Errs towards yes."""
    if not statements:
        return True
    last = statements[-1]
    if isinstance(last, SIMPLE_LINES):
        # a line of its own, or a block on its header's line (`def f(x): return x.cuda()`,
        # `else: return x`)
        return not any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return True
        if may_fall_off_end(block_statements(last.body)):
            return True
        orelse = last.orelse
        if isinstance(orelse, cst.If):
            return may_fall_off_end([orelse])
        return may_fall_off_end(block_statements(orelse.body))
    if isinstance(last, cst.With):
        # `with torch.no_grad(): ... return out`: the block ends where its body does
        return may_fall_off_end(block_statements(last.body))
    return True


def body_statements(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    body = function.body
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return [body]  # type: ignore[list-item]


def statements_in_order(statements: list[cst.BaseStatement]) -> list[tuple[cst.BaseStatement, bool]]:
    """What every run of a body reaches, in order, as (statement, compound?): its own simple
    statements and those of ``with`` blocks among them, up to and including the first that may
    return, raise or leave a ``with`` block early (what comes after it may not run), and between
    them the compound statements (``if``, loops, ``try``) they pass - not entered, but their
    bindings may have happened by the next simple statement; one that may leave ends the run."""
    reached: list[tuple[cst.BaseStatement, bool]] = []
    for statement in statements:
        if isinstance(statement, cst.With):
            reached.extend(statements_in_order(block_statements(statement.body)))
            if _may_leave(statement):
                return reached
            continue
        reached.append((statement, not isinstance(statement, SIMPLE_LINES)))
        if _may_leave(statement):
            return reached
    return reached


def _may_leave(statement: cst.BaseStatement) -> bool:
    finder = _LeaveFinder()
    walk.visit(statement, finder)
    return finder.found


class _LeaveFinder(OwnScopeVisitor):
    """Does a statement hold a ``return``, ``raise``, ``break`` or ``continue`` of its own scope?"""

    def __init__(self) -> None:
        self.found = False

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True

    def visit_Raise(self, node: cst.Raise) -> None:
        self.found = True

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = True


def bind_arguments(
    function: cst.FunctionDef,
    args: tuple[tuple[cst.Arg, Value], ...],
    skip_first: bool,
    forwarding: bool = False,
    spreads: bool = False,
) -> Optional[tuple[Optional[cst.Param], dict[str, Value]]]:
    """Map call arguments to parameter names; None when the call does not fit the signature
    or spreads ``*args``/``**kwargs`` (the mapping is then unknown).

    Returns the ``self`` parameter (when ``skip_first``) and the bound values; parameters left
    out are absent, for the caller to fill with their defaults.

    ``spreads``: also bind the function's ``*args`` to a tuple of the extra positional
    arguments and its ``**kwargs`` to a dict of the extra keyword arguments (entries at their
    names), where the call spreads nothing itself. A spread ``*xs`` of a tuple or list of known
    entries is the arguments it holds (see expand_spreads).

    ``forwarding``: a call that passes on what it was given (``super().__init__(config,
    **kwargs)``) binds the arguments it names, and its spreads may give any parameter left:
    those are bound to unknown, not to their defaults (a ``*args`` spread before a named
    positional argument leaves the positions unknown: None).
    """
    if forwarding and any(arg.star for arg, _ in args):
        named = tuple((arg, value) for arg, value in args if not arg.star)
        first_spread = next(i for i, (arg, _) in enumerate(args) if arg.star)
        if any(arg.keyword is None and not arg.star for arg, _ in args[first_spread:]):
            return None  # positional arguments after a spread: their positions are unknown
        found = _bind(function, named, skip_first, required=False)
        if found is None:
            return None
        self_param, bound = found
        for param in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]:
            if param is not self_param and param.name.value not in bound:
                bound[param.name.value] = UNKNOWN
        return self_param, bound
    if spreads:
        args = expand_spreads(args)
    return _bind(function, args, skip_first, required=True, spreads=spreads)


def _carries_placement(value: Value) -> bool:
    return value.kind in (Kind.TENSOR, Kind.BATCH, Kind.MODULE)


def expand_spreads(args: tuple[tuple[cst.Arg, Value], ...]) -> tuple[tuple[cst.Arg, Value], ...]:
    """``f(*xs)`` with ``xs`` a tuple or list of known entries (``args`` bound to the extra
    arguments of a call): one positional argument per entry, each spelled as the spread's
    expression. Other arguments as they are."""
    if not any(arg.star == "*" and value.kind == Kind.CONTAINER and isinstance(value.info, tuple) for arg, value in args):
        return args
    expanded: list[tuple[cst.Arg, Value]] = []
    for arg, value in args:
        if arg.star == "*" and value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
            expanded.extend((cst.Arg(value=arg.value), entry) for entry in value.info)
        else:
            expanded.append((arg, value))
    return tuple(expanded)


def _bind(
    function: cst.FunctionDef,
    args: tuple[tuple[cst.Arg, Value], ...],
    skip_first: bool,
    required: bool,
    spreads: bool = False,
) -> Optional[tuple[Optional[cst.Param], dict[str, Value]]]:
    extra_positional: list[Value] = []
    extra_keywords: list[tuple[str, Value, cst.CSTNode]] = []
    params = function.params
    positional = [*params.posonly_params, *params.params]
    self_param: Optional[cst.Param] = None
    if skip_first:
        if not positional:
            return None
        self_param, positional = positional[0], positional[1:]
    by_name = {param.name.value: param for param in [*params.params, *params.kwonly_params]}
    bound: dict[str, Value] = {}
    position = 0
    for arg, value in args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(positional):
                if not isinstance(params.star_arg, cst.Param):
                    return None
                extra_positional.append(value)
                continue
            bound[positional[position].name.value] = value
            position += 1
            continue
        name = arg.keyword.value
        if name in by_name and name not in bound:
            bound[name] = value
        elif params.star_kwarg is None:
            return None
        else:
            extra_keywords.append((name, value, arg.value))
    if not required:
        return self_param, bound
    for param in positional[position:]:
        if param.name.value not in bound and param.default is None:
            return None  # a required argument is missing: not the function we think
    for param in params.kwonly_params:
        if param.name.value not in bound and param.default is None:
            return None
    # only where an extra argument is a tensor or a module: other extras (options, sizes) say
    # nothing of devices, and binding them would split the function's summaries for nothing
    if spreads and isinstance(params.star_arg, cst.Param) and any(_carries_placement(value) for value in extra_positional):
        bound[params.star_arg.name.value] = Value(Kind.CONTAINER, info=tuple(extra_positional))
    if spreads and isinstance(params.star_kwarg, cst.Param) and any(_carries_placement(value) for _, value, _ in extra_keywords):
        mapping = mapping_of((value, node) for _, value, node in extra_keywords)
        for name, value, _ in extra_keywords:
            mapping = mapping.with_item(name, value)
        bound[params.star_kwarg.name.value] = mapping
    return self_param, bound


def argument_parameters(
    function: cst.FunctionDef, args: tuple[tuple[cst.Arg, Value], ...], skip_first: bool
) -> list[Optional[str]]:
    """The parameter each call argument binds (None where it cannot be told), in order."""
    params = function.params
    positional = [*params.posonly_params, *params.params][1 if skip_first else 0:]
    names: list[Optional[str]] = []
    position: Optional[int] = 0  # None once a spread `*xs` hides how many positions it fills
    for arg, _ in args:
        if arg.star:
            names.append(None)
            if arg.star == "*":
                position = None
        elif arg.keyword is None:
            names.append(positional[position].name.value if position is not None and position < len(positional) else None)
            position = position + 1 if position is not None else None
        else:
            names.append(arg.keyword.value)
    return names


def numpy_reads(qualname: str, keyword: Optional[str]) -> bool:
    """Does a call of ``qualname`` convert an argument given to it (positionally when
    ``keyword`` is None) with numpy? numpy functions convert their positional arguments
    (``np.array(x)``, ``np.mean(x)``); matplotlib turns every data argument into an array
    (``plt.imshow(img)``, ``c=labels`` too); scikit-learn's metrics check their label and score
    arrays with ``np.asarray`` (``accuracy_score(y_true, y_pred)``), as scipy.stats does its
    samples (``pearsonr(x, y)``)."""
    if qualname.startswith("matplotlib."):
        return True
    if qualname in HOST_MEMORY_WRITERS:
        return keyword is None or keyword == HOST_MEMORY_WRITERS[qualname]
    if qualname in _NUMPY_CONVERTING_CALLS:
        return keyword is None or keyword == _NUMPY_CONVERTING_CALLS[qualname]
    if qualname.startswith("sklearn.metrics."):
        return keyword is None or keyword in _SKLEARN_METRIC_ARRAYS
    if qualname in _SCIPY_ARRAY_FUNCTIONS:
        return keyword is None
    return qualname.startswith(("numpy.", "scipy.stats.", "scipy.special.")) and keyword is None


#: audio writers that read the samples they are given from host memory (torchaudio's backends
#: refuse a tensor that is not on the CPU; soundfile converts with numpy), with the keyword
#: that names the samples
HOST_MEMORY_WRITERS = {"torchaudio.save": "src", "soundfile.write": "data"}

#: calls of other libraries that turn the data they are given into a numpy array
#: (``np.asarray``), with the keyword that names it: pandas' constructors, imageio's writers
_NUMPY_CONVERTING_CALLS = {
    "pandas.DataFrame": "data", "pandas.Series": "data",
    "imageio.imwrite": "im", "imageio.imsave": "im", "imageio.v2.imwrite": "im", "imageio.v3.imwrite": "image",
    "imageio.mimwrite": "ims", "imageio.mimsave": "ims", "imageio.v2.mimwrite": "ims", "imageio.v2.mimsave": "ims",
}

#: scipy functions outside scipy.stats/scipy.special that turn their array arguments into numpy
#: arrays (``linear_sum_assignment(cost_matrix)``: ``np.asarray``; scipy.special's functions
#: go through ``_asarray_validated`` or numpy ufuncs, so a GPU tensor fails there too)
_SCIPY_ARRAY_FUNCTIONS = frozenset({"scipy.optimize.linear_sum_assignment", "scipy.optimize._lsap.linear_sum_assignment"})

#: the keyword arguments of scikit-learn's metrics that take arrays of labels or scores
_SKLEARN_METRIC_ARRAYS = frozenset({"y_true", "y_pred", "y_score", "y_prob", "probas_pred", "labels_true", "labels_pred", "X"})


def decorators_are_transparent(function: cst.FunctionDef, qualname_of, resolve=None) -> bool:  # type: ignore[no-untyped-def]
    """Do the decorators leave what the function returns, given its arguments, alone? Those of
    TRANSPARENT_DECORATORS, a property's, and (with ``resolve``, which gives the function of the
    file a decorator's name is bound to) a decorator of the file that returns a wrapper handing
    every argument on to the function (see forwards_to_wrapped)."""
    for decorator in function.decorators:
        expression = decorator.decorator
        called = isinstance(expression, cst.Call)
        if isinstance(expression, cst.Call):
            expression = expression.func
        name = dotted_name(expression)
        if name is None:
            return False
        if name == "property" or name.endswith(".setter"):
            continue  # a property's accessors: the analysis runs them for reads and assignments
        if (qualname_of(expression) or name) in TRANSPARENT_DECORATORS:
            continue
        own = resolve(expression) if resolve is not None and not called else None
        if own is None or not forwards_to_wrapped(own, qualname_of):
            return False
    return True


def forwards_to_wrapped(decorator: cst.FunctionDef, qualname_of) -> bool:  # type: ignore[no-untyped-def]
    """``def logged(fn): @functools.wraps(fn) def wrapper(*args, **kwargs): ...; return
    fn(*args, **kwargs)`` and ``return wrapper``: the decorated function, called, runs with the
    very arguments and gives what it returns. Only where the wrapper never rebinds ``args`` /
    ``kwargs`` and every ``return`` of it (in its body or a ``with`` block) is that call."""
    params = decorator.params
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
        return False
    wrapped = params.params[0].name.value
    body = decorator.body.body
    last = body[-1] if body else None
    if not (isinstance(last, SIMPLE_LINES) and len(last.body) == 1 and isinstance(last.body[0], cst.Return) and isinstance(last.body[0].value, cst.Name)):
        return False
    returned = last.body[0].value.value
    wrapper = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == returned), None)
    if wrapper is None or wrapper.asynchronous is not None or len(wrapper.decorators) != 1:
        return False
    marker = wrapper.decorators[0].decorator
    if not (isinstance(marker, cst.Call) and qualname_of(marker.func) == "functools.wraps" and len(marker.args) == 1 and isinstance(marker.args[0].value, cst.Name) and marker.args[0].value.value == wrapped):
        return False
    wparams = wrapper.params
    if wparams.params or wparams.posonly_params or wparams.kwonly_params or not isinstance(wparams.star_arg, cst.Param) or not isinstance(wparams.star_kwarg, cst.Param):
        return False
    args, kwargs = wparams.star_arg.name.value, wparams.star_kwarg.name.value
    statements = list(wrapper.body.body)
    if args in assigned_names(statements) or kwargs in assigned_names(statements):
        return False
    returns = 0
    while statements:
        statement = statements.pop()
        if isinstance(statement, cst.With):
            for item in statement.items:
                entered = item.item.func if isinstance(item.item, cst.Call) else item.item
                if qualname_of(entered) in ("torch.device", "torch.cuda.device", "torch.set_default_device"):
                    return False  # a default device for the factories the function calls
            statements.extend(statement.body.body)
        elif isinstance(statement, SIMPLE_LINES):
            for small in statement.body:
                if isinstance(small, cst.Return):
                    call = small.value
                    if not (
                        isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == wrapped and len(call.args) == 2
                        and call.args[0].star == "*" and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == args
                        and call.args[1].star == "**" and isinstance(call.args[1].value, cst.Name) and call.args[1].value.value == kwargs
                    ):
                        return False
                    returns += 1
        else:
            return False  # a condition, loop, try or nested definition: not followed
    return returns == 1


def attributed_to(
    value: Value, helper: cst.FunctionDef, factory_home: Callable[[cst.CSTNode], Optional[cst.FunctionDef]]
) -> Value:
    """Say in the origin of a value the helper's own factory created that it came from that
    helper: "created by `torch.zeros(n)` in `make_mask()`"."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return replace(value, info=tuple(attributed_to(item, helper, factory_home) for item in value.info))
    if value.fields is not None and value.kind == Kind.UNKNOWN:
        # an object of a plain class built there, holding what its construction handed it
        return replace(value, fields=tuple((name, attributed_to(held, helper, factory_home)) for name, held in value.fields))
    origin = value.origin
    if origin is None or not origin.created or factory_home(origin.node) is not helper:
        return value
    if origin.helper is not None:
        return value  # said already (the helper's result came back into it: ``f(f(x))``)
    name = helper.name.value
    # the other places of a joined host tensor (a factory on each branch) go back with it:
    # each needs the same fix
    alternatives = tuple(
        replace(other, how=f"{other.how} in `{name}()`", helper=name)
        if other.created and other.helper is None and factory_home(other.node) is helper
        else other
        for other in origin.alternatives
    )
    return replace(
        value,
        origin=Origin(origin.node, f"{origin.how} in `{name}()`", origin.from_data, alternatives=alternatives, provenance=origin.provenance, helper=name),
    )



def parameter_read_through(function: cst.FunctionDef, expression: cst.BaseExpression) -> Optional[str]:
    """The parameter of ``function`` that ``expression`` reads: the name itself, or a chain of
    tensor methods that keep the device and subscripts on it (``labels.view(-1)``,
    ``series[:, 1:]``); None for anything else. Whether the body rebinds it is not asked."""
    node = expression
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in api.SAME_DEVICE_METHODS:
            node = node.func.value
        else:
            break
    if not isinstance(node, cst.Name):
        return None
    params = function.params
    return node.value if any(p.name.value == node.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)) else None


def is_abstract_stub(function: cst.FunctionDef) -> bool:
    """A method whose body only says that subclasses define it: a docstring, ``pass``, ``...``,
    ``raise NotImplementedError``. Python never runs it on an object of a subclass that defines
    the method, so a call of it there runs the subclass's definition."""
    statements = body_statements(function)
    if not statements:
        return False
    for statement in statements:
        if not isinstance(statement, SIMPLE_LINES):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None:
                raised = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
                if isinstance(raised, cst.Name) and raised.value == "NotImplementedError":
                    continue
            return False
    return True
