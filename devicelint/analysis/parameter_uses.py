"""Parameters seen from the body of the function that takes them: which it uses as tensors
(``x.size(1)``, an array-like index whose result it uses as a tensor, a hand-on to a function
of the file that does), which as modules (``model.parameters()``), which it hands to numpy or
matplotlib, and the tensors an argument carries (``batch[0]`` used as a tensor). Text scans
first, so that a body is walked only when its text says a walk may find something; results are
kept per function (per batch for another module's functions, see ProjectImports.function_memo).
"""

from __future__ import annotations

import re
from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import helpers
from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.names import OwnScopeVisitor, is_static_or_class_method, own_scope_calls
from devicelint.analysis.state import State
from devicelint.analysis.tensor_evidence import TENSOR_ONLY_METHOD_NAMES, takes_tensor_first
from devicelint.analysis.torch_semantics import MODULE_INPUT_MEMBERS, TENSOR_ONLY_MEMBERS
from devicelint.analysis.values import MODEL_DEVICE, UNKNOWN, Device, Kind, Origin, Value, follows

#: ``name.size(`` / ``name.attr.unsqueeze(`` with a chain that starts a name (not ``y.name``);
#: one pattern for every function, the parameter names are checked on the matches
#: ``x.type(torch.FloatTensor)``: only tensors (and modules) take a torch type there
_TORCH_TYPE_CAST = r"type\s*\(\s*torch\."
_TENSOR_ONLY_USE = re.compile(rf"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)*?)\s*\.\s*(?:{TENSOR_ONLY_MEMBERS}|{_TORCH_TYPE_CAST})")
#: ``torch.flip(scores.argsort(-1), [-1])``: a method numpy arrays share, whose result is of
#: the receiver's library, handed first to a torch function (which refuses numpy arrays, and
#: numbers); likewise ``torch.cumsum(hits * 1, -1)``, ``torch.log(p + 1e-8)``: arithmetic with a
#: number literal on a numpy array, a list or a number gives no tensor either
_TORCH_FIRST_OF_ARRAY_METHOD = re.compile(
    r"(?<![\w.])torch\s*\.\s*([a-z]\w*)\s*\(\s*([A-Za-z_]\w*)\s*(?:\.\s*(?:argsort|flatten|reshape|transpose|ravel|cumsum|cumprod|clip|round|swapaxes)\s*\(|(?:[-+*/]|\*\*)\s*\d[\d.eE+-]*\s*[,)])"
)
#: torch functions that also take a Python number first (``torch.pow(2, x)``): a number
#: computed there says nothing of a tensor
_SCALAR_FIRST_FUNCTIONS = frozenset(
    "pow float_power remainder fmod xlogy normal polar complex bitwise_and bitwise_or bitwise_xor "
    "bitwise_left_shift bitwise_right_shift add sub mul div true_divide floor_divide maximum minimum "
    "eq ne lt le gt ge where full_like".split()
)
#: ``[:, 0]``, ``[..., 1]``, ``[0, :]``: text that may index an array (see tensor_evidence)
_ARRAY_INDEX_TEXT = re.compile(r"\[\s*(:|\.\.\.)|,\s*(:|\.\.\.|None\b)")
#: a name indexed: ``x[``
_INDEXED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[")
#: ``local = param.attribute`` as a statement of its own (see _aliased_tensor_attributes)
_ATTRIBUTE_ALIAS = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_]\w*\.[A-Za-z_]\w*)[ \t]*(?:#.*)?$", re.MULTILINE)
_MODULE_INPUT_USE = re.compile(rf"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)*?)\s*\.\s*(?:{MODULE_INPUT_MEMBERS}|{_TORCH_TYPE_CAST})")
#: ``name.parameters(`` / ``name.named_modules(``: methods only an nn.Module has (not
#: ``train``/``eval``, which trainers and environments have too)
_MODULE_ONLY_USE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\.\s*(?:(?:named_)?(?:parameters|buffers|modules|children))\s*\(")
#: a call's callee as text: ``name(`` or ``name.attribute(`` (the head not itself an attribute)
_CALLEE_TEXT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\s*\.\s*([A-Za-z_]\w*))?\s*\(")
#: ``.cpu()``, ``.to("cpu")``, ``device='cpu'``, ``.numpy()``: a body written for torch tensors,
#: which knows they must be brought to the host
_HANDLES_TENSORS_ON_HOST = re.compile(r"\.\s*(?:cpu|numpy)\s*\(|[\"']cpu[\"']")
#: a name as a whole argument of a call: ``f(name, ...)``, ``f(a, name)``, ``f(k=name)`` (one
#: static pattern: a pattern per parameter would be compiled thousands of times on a big tree)
_HANDED_ON = re.compile(r"[(,]\s*(?:\w+\s*=\s*)?([A-Za-z_]\w*)\s*(?=[,)])")
#: methods that give back an object of their receiver's kind (a tensor's ``unsqueeze``, a
#: move or cast of a tensor or a module, numpy's ``reshape``): ``x = x.unsqueeze(1)`` at the top
#: of a helper re-binds ``x`` to the same kind of object it came in as, so a tensor use of
#: ``x`` below still says what its callers hand it
_KIND_KEEPING_METHODS = TENSOR_ONLY_METHOD_NAMES | frozenset(
    "to cuda cpu float double half contiguous detach clone reshape view squeeze transpose flatten permute".split()
)


class ParameterUses:
    """What a function's body does with its parameters, read from its text (and, only where
    the text says it may matter, one walk of its body): mixed into FlowAnalyzer, whose
    ``function_memo``/``_body_text``/``_own_callee``/``tensor_evidence_of`` it uses."""

    def _module_uses(self, function: cst.FunctionDef) -> frozenset[str]:
        """Parameters the body uses as modules (``model.parameters()``, ``model.named_modules()``)
        and never rebinds; one scan of the body's text."""
        memo = self.function_memo(function, self._module_uses_found, "module uses")
        found = memo.get(function)
        if found is None:
            params = function.params
            names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params] if p.annotation is None}
            found = frozenset()
            text = self._body_text(function)
            used = {match.group(1) for match in _MODULE_ONLY_USE.finditer(text)} & names if names else set()
            if used:
                found = frozenset(used - helpers.assigned_names(helpers.body_statements(function)))
            memo[function] = found
        return found

    def _tensor_uses(self, function: cst.FunctionDef, in_module: bool = False) -> tuple[frozenset[str], frozenset[str]]:
        """Unannotated parameters the body uses as torch tensors (``x.size(1)``,
        ``x.unsqueeze(0)``, ``x.detach()``: methods numpy arrays and modules do not have), and
        attributes of them used so (``state.masses.unsqueeze(-1)`` -> ``state.masses``); one
        scan of the body's text."""
        memo = self.function_memo(function, self._tensor_uses_found, "tensor uses")
        found = memo.get(function)
        if found is None:
            params = function.params
            names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params] if p.annotation is None]
            names = [name for name in names if name not in ("self", "cls")]
            used: set[str] = set()
            if names:
                pattern = _MODULE_INPUT_USE if in_module else _TENSOR_ONLY_USE
                wanted = set(names)
                text = self._body_text(function)
                used = {match.group(1) for match in pattern.finditer(text) if match.group(1).split(".", 1)[0] in wanted}
                if not in_module:
                    used |= {
                        match.group(2)
                        for match in _TORCH_FIRST_OF_ARRAY_METHOD.finditer(text)
                        if match.group(2) in wanted
                        and takes_tensor_first(f"torch.{match.group(1)}")
                        and match.group(1) not in _SCALAR_FIRST_FUNCTIONS
                        # `torch.cat(parts + [h])`, `torch.einsum(spec + "->i", x)`: lists and strings add too
                        and f"torch.{match.group(1)}" not in api.MIXING_FUNCTIONS
                        and f"torch.{match.group(1)}" not in api.CONCATENATING
                        and match.group(1) not in ("einsum", "meshgrid", "broadcast_tensors", "block_diag", "cartesian_prod", "chain_matmul")
                    }
                rest = wanted - used
                if rest:
                    used |= self._indexed_as_tensors(function, rest)
                    rest -= used
                if rest:
                    used |= self._handed_to_tensor_users(function, rest)
                used |= self._aliased_tensor_attributes(function, wanted, pattern)
            found = (frozenset(name for name in used if "." not in name), frozenset(name for name in used if "." in name))
            memo[function] = found
        return found

    def drawn_from_argument(self, name: str, value_node: cst.BaseExpression, state: State) -> Optional[Value]:
        """``fg_pred = pi[b, a, gj, gi]`` in ``for i, pi in enumerate(p)``, or ``row =
        batch[0]``: an index of a parameter of unknown kind, or of what iterating one gives,
        bound once to a local the function uses as a tensor (``fg_pred[:, :2].sigmoid()``) is a
        tensor the argument carries, placed where its caller put it - like an attribute of an
        argument used as a tensor (``state.masses``). What indexes it is no evidence: ``pi``
        itself may be a dict keyed by tuples, and its kind stays unknown."""
        function = self.current_function.node
        if function is None or not isinstance(value_node, cst.Subscript):
            return None
        root: cst.BaseExpression = value_node
        while isinstance(root, cst.Subscript):
            root = root.value
        if not isinstance(root, cst.Name) or state.get(root.value, UNKNOWN).kind != Kind.UNKNOWN:
            return None
        params = function.params
        names = {param.name.value for param in [*params.posonly_params, *params.params, *params.kwonly_params]}
        if self.current_function.class_info is not None and params.params and not is_static_or_class_method(function):
            names.discard(params.params[0].name.value)  # `self[0]`: a container module's child
        if name not in self._maybe_used_as_tensors(function):
            return None
        argument = root.value
        if argument not in names and not _may_iterate(self._body_text(function), argument):
            return None  # neither an argument nor a loop row: spare the evidence scan
        evidence = self.tensor_evidence_of(function)
        if argument not in names:
            argument = evidence.iterated(root.value)  # type: ignore[assignment]
            if argument is None or argument not in names or state.get(argument, UNKNOWN).kind != Kind.UNKNOWN:
                return None
        if not evidence.bound_once(argument) or evidence.tensor_use(name) is None:
            return None
        info = self.current_function.class_info
        in_module = info is not None and info.is_module and function.name.value != "__init__"
        return Value(Kind.TENSOR, input_device(argument, in_module, placed_by_caller=True), Origin(value_node, f"drawn from the argument `{argument}`"))

    def _maybe_used_as_tensors(self, function: cst.FunctionDef) -> frozenset[str]:
        """Names the body's text may use as tensors (``x.unsqueeze(``, or ``x[`` in a body with
        an array index), so that only their bindings ask the tensor evidence; one scan."""
        memo = self.function_memo(function, self._maybe_tensor_names_found, "maybe tensors")
        found = memo.get(function)
        if found is None:
            text = self._body_text(function)
            names = {match.group(1) for match in _TENSOR_ONLY_USE.finditer(text) if "." not in match.group(1)}
            if _ARRAY_INDEX_TEXT.search(text):
                names.update(match.group(1) for match in _INDEXED_NAME.finditer(text))
            found = memo[function] = frozenset(names)
        return found

    def _aliased_tensor_attributes(self, function: cst.FunctionDef, names: set[str], pattern: "re.Pattern[str]") -> set[str]:
        """Attributes of parameters that the body reads into a local once and uses, through
        that local, as tensors (``system_idx = state.system_idx``, then
        ``system_idx.unsqueeze(-1)``): the same object, so ``state.system_idx`` is a tensor
        the argument carries, as ``state.system_idx.unsqueeze(-1)`` would say."""
        text = self._body_text(function)
        aliases = {
            match.group(1): match.group(2)
            for match in _ATTRIBUTE_ALIAS.finditer(text)
            if match.group(2).split(".", 1)[0] in names
        }
        if not aliases:
            return set()
        used_locals = {match.group(1) for match in pattern.finditer(text)} & set(aliases)
        if not used_locals:
            return set()
        evidence = self.tensor_evidence_of(function)
        # bound once: every use of the local sees the attribute's object
        return {aliases[local] for local in used_locals if evidence.tensor_use(local) is not None}

    def _indexed_as_tensors(self, function: cst.FunctionDef, names: set[str]) -> set[str]:
        """Parameters the body indexes like an array (``targets[:, 0]``) and whose indexing
        gives what it uses as a tensor, as numpy refuses (``targets[mask].long()``; see
        devicelint.analysis.tensor_evidence). The text is checked first, so that only a body
        with such an index and an indexed parameter is walked."""
        text = self._body_text(function)
        if not _ARRAY_INDEX_TEXT.search(text):
            return set()
        indexed = {name for name in names if re.search(rf"(?<![\w.]){re.escape(name)}\s*\[", text)}
        if not indexed:
            return set()
        evidence = self.tensor_evidence_of(function)
        return {name for name in indexed if evidence.indexed_tensor_use(name) is not None}

    def _handed_to_tensor_users(self, function: cst.FunctionDef, names: set[str]) -> set[str]:
        """Parameters ``function`` hands, unchanged, to a function or method of this file that
        uses the matching parameter as a tensor (``_inflate(encoder_hidden, k)`` where
        ``_inflate`` calls ``tensor.dim()``): the same object, so a tensor here too."""
        text = self._body_text(function)
        handed = names & {match.group(1) for match in _HANDED_ON.finditer(text)}
        if not handed or function in self._tensor_use_scans:
            return set()
        handed -= helpers.assigned_names(helpers.body_statements(function), _KIND_KEEPING_METHODS)
        if not handed or not self._may_call_own_function(function, text):
            return set()
        self._tensor_use_scans.add(function)
        try:
            found: set[str] = set()
            for call, names_handed in self._calls_handing_names_of(function):
                if not names_handed & handed:
                    continue
                resolved = self._own_callee(function, call.func)
                if resolved is None:
                    continue
                callee, skip_first, in_module = resolved
                # a parameter the callee rebinds (``values = torch.as_tensor(values)``) may have
                # been anything when it came in
                uses = self._tensor_uses(callee, in_module)[0] - helpers.assigned_names(helpers.body_statements(callee), _KIND_KEEPING_METHODS)
                for arg, param in zip(call.args, helpers.argument_parameters(callee, tuple((arg, UNKNOWN) for arg in call.args), skip_first)):
                    if arg.star:
                        break
                    if param in uses and isinstance(arg.value, cst.Name) and arg.value.value in handed:
                        found.add(arg.value.value)
            return found
        finally:
            self._tensor_use_scans.discard(function)

    def _may_call_own_function(self, function: cst.FunctionDef, text: str) -> bool:
        """Can a call in the body's text run a function of this file (the shapes
        ``_own_callee`` resolves: ``helper(...)``, ``Class.method(...)``, ``self.method(...)``)?
        A test of the text, so that the body is walked only when one may."""
        positional = [*function.params.posonly_params, *function.params.params]
        receiver = positional[0].name.value if positional else None
        owner: Optional[ClassInfo] = None
        for match in _CALLEE_TEXT.finditer(text):
            head, attribute = match.group(1), match.group(2)
            if attribute is not None and head == receiver:
                # ``self.conv(x)`` calls a submodule, ``self.helper(x)`` a method of the class
                if owner is None:
                    owner = next((info for info in self._classes if function in info.methods.values()), None)
                    if owner is None:
                        return True
                if owner.find_method(attribute) is not None or self._defined_only_below(owner, attribute) is not None:
                    return True
                continue
            known = self.module_state.get(head)
            if known is None:
                continue
            if attribute is None and known.kind == Kind.FUNCTION and isinstance(known.info, cst.FunctionDef):
                return True
            if attribute is not None and known.kind == Kind.CLASS and isinstance(known.info, ClassInfo):
                found = known.info.find_method(attribute)
                if found is not None and is_static_or_class_method(found[0]):
                    return True
        return False

    def _calls_handing_names_of(self, function: cst.FunctionDef) -> tuple[tuple[cst.Call, frozenset[str]], ...]:
        """The calls of ``function``'s own body that take plain names as whole arguments, with
        those names: found by one walk per function (per batch for another module's)."""
        memo = self.function_memo(function, self._calls_handing_names, "calls handing names")
        calls = memo.get(function)
        if calls is None:
            calls = memo[function] = tuple(
                (call, names)
                for call in own_scope_calls(function.body)
                if (names := frozenset(arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)))
            )
        return calls

    def arguments_read_by_numpy(
        self, node: cst.Call, callee: Value, args: tuple[tuple[cst.Arg, Value], ...]
    ) -> list[tuple[cst.Arg, Value, str, cst.Call]]:
        """For a call of a function of this file (``plot_img(x)``, ``self.plot(x)``): the
        arguments the callee hands whole to numpy or matplotlib on every path through it (see
        _numpy_read_parameters), as (argument, its value, the parameter, the numpy call) -
        what its caller must have put on the host, where the callee is written for numpy data
        (``y_true = np.asarray(y_true)``, ``plt.imshow(img)``, as scikit-learn's functions).
        None for a callee written for torch tensors, which brings them to the host itself
        (``X = X.cpu()``, ``predictions.numpy()``): it takes tensors by design, and one it
        does not move is its own bug, at its numpy call."""
        if callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            function, skip_first = callee.info, False
        else:
            caller = self.current_function.node
            resolved = self._own_callee(caller, node.func) if caller is not None else None
            if resolved is None:
                return []
            function, skip_first = resolved[0], resolved[1]
        if self.foreign_home(function) is not None:
            return []  # the numpy call is in another file: a message cannot point at its line here
        reads = self._numpy_read_parameters(function)
        if not reads or _HANDLES_TENSORS_ON_HOST.search(self._body_text(function)):
            return []
        names = helpers.argument_parameters(function, args, skip_first)
        return [(arg, value, name, reads[name]) for (arg, value), name in zip(args, names) if name is not None and name in reads]

    def _numpy_read_parameters(self, function: cst.FunctionDef) -> dict[str, cst.Call]:
        """Parameters the function hands, unchanged, to numpy or matplotlib (``plt.imshow(img)``,
        ``np.asarray(x)``; not ``x.numpy()``, which only a body written for tensors calls, see
        arguments_read_by_numpy) in a statement every call reaches: one of its body's
        own statements (or of a ``with`` block there), before any statement that may return or
        raise, and not under a conditional expression, ``and``/``or`` or a comprehension. Only
        reads before the body first rebinds the parameter count: ``y_true = np.asarray(y_true)``
        reads what came in, but after ``if torch.is_tensor(x): x = x.cpu()`` (or ``x = x.cpu()``)
        it may be anything."""
        memo = self.function_memo(function, self._numpy_reads_found, "numpy reads")
        found = memo.get(function)
        if found is None:
            found = {}
            params = function.params
            names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
            text = self._body_text(function)
            if names and ("np" in text or "numpy" in text or "plt" in text or "matplotlib" in text):
                home = self.home_state(function)
                finder = _NumpyReads(names, lambda expression: self.qualname_of(expression, home))
                for statement, compound in helpers.statements_in_order(helpers.body_statements(function)):
                    if not compound:
                        walk.visit(statement, finder)  # the right-hand side runs before the binding
                    # `img = img / 2 + 0.5` (unnormalising before a plot) keeps what came in
                    finder.names -= helpers.assigned_names([statement], rescaling_kept=True)
                    if not finder.names:
                        break
                found = finder.found
            memo[function] = found
        return found


def input_device(name: str, in_module: bool, placed_by_caller: bool) -> Optional[Device]:
    """Where a tensor handed to a function lives: in a module's method (not ``__init__``) on the
    model's device; in a free function (``placed_by_caller``) where its caller put it; else
    unknown."""
    if in_module:
        return MODEL_DEVICE
    if placed_by_caller:
        return follows(name, argument=True)
    return None


def _may_iterate(text: str, name: str) -> bool:
    """Can the body's text bind ``name`` as a ``for`` target (``for x in``, ``for i, x in``)?"""
    return re.search(rf"\bfor\b[^:\n]*\b{re.escape(name)}\b[^:\n]*\bin\b", text) is not None


class _NumpyReads(OwnScopeVisitor):
    """The calls of a statement that hand one of ``names`` whole to numpy or matplotlib, where
    the statement runs them whenever it runs (not under ``x if c else y``, ``and``/``or`` or a
    comprehension)."""

    def __init__(self, names: set[str], qualname_of: "Callable[[cst.BaseExpression], Optional[str]]") -> None:
        self.names = names
        self.qualname_of = qualname_of
        self.found: dict[str, cst.Call] = {}

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        return False

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        handed = [arg for arg in node.args if not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in self.names]
        if not handed:
            return
        qualname = self.qualname_of(func)
        if qualname is None:
            return
        for arg in handed:
            if helpers.numpy_reads(qualname, arg.keyword.value if arg.keyword is not None else None):
                self.found.setdefault(arg.value.value, node)  # type: ignore[attr-defined]
