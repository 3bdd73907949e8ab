"""Where a function's own code shows that a local name holds a torch tensor.

The interpreter is flow-sensitive: ``t, w = sampler.sample(n)`` leaves ``t`` and ``w`` of
unknown kind, and a use further down (``loss * w``, ``torch.unique(t)``) comes too late for a
statement above it. Some questions - is the receiver of a bare ``w.to(device)`` a tensor or a
module that moves in place? - are answered by what the whole function does with the name, as
long as the name is bound once there, so that every use sees the same object.

Evidence is what the code does, never how the name is spelled:

* an operand of arithmetic (``loss * w``, ``x - w``, ``w @ m``): an ``nn.Module`` supports
  none of it, and the objects whose ``.to()`` moves them in place (modules, transformers'
  ``BatchEncoding``, PyG's ``Data``) neither;
* a method only torch tensors have (``w.unsqueeze(0)``, ``w.masked_fill(...)``, ``w.long()``) -
  not ``size``/``contiguous``/``detach``, which PyG's ``Data`` has too;
* the first operand of a torch function that computes from a tensor (``torch.unique(t)``,
  ``F.softmax(t, -1)``, ``torch.zeros_like(t)``), or any operand of one that mixes tensors
  (``torch.cat([t, u])``).

A name that is indexed like an array somewhere in the scope - a tuple index with a slice,
``...`` or ``None`` (``targets[:, 0]``): lists and tuples refuse tuple indices, and dicts are
not keyed by slices - is a numpy array or a tensor; it is a tensor when what indexing it gives
is used as one in a way numpy refuses (``targets[mask].long()``, or ``row = targets[mask]``
with ``row`` bound once and ``row.long()`` / ``torch.cat([row])`` below). An index alone is no
evidence: a list of tensors indexed by an int (``outputs[0].long()``) gives a tensor too.
Iterating such an array gives its rows, of the same library, and so does indexing a row: in
``for i, x in enumerate(pred)``, a use of the row that numpy refuses (``x[:, 5:].max(1,
keepdim=True)``) shows ``pred`` to be a tensor, also after ``x = x[mask]``, but not after any
other binding of ``x`` (``x = torch.cat(...)`` is a tensor whatever ``pred`` was).

A weaker answer, for a name with no such use of its own: it is unpacked by one assignment
together with a name that has one (``train_x, calib_x, train_y, calib_y = split(X, Y)`` with
``torch.unique(train_y)`` below), and the function never uses it as a module or any other
object would be used - it is never called and no attribute of it is read but a move
(``.to``/``.cuda``/``.cpu``) or ``.shape``/``.ndim``. What one call hands back together is
data of one sort; a model unpacked next to a tensor is called, or its methods are used.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.names import OwnScopeVisitor

#: methods that torch tensors have and modules, numpy arrays, numbers and the batch objects
#: whose ``.to()`` works in place (``BatchEncoding``, PyG's ``Data``) lack
TENSOR_ONLY_METHOD_NAMES = frozenset(
    "unsqueeze squeeze permute view view_as expand expand_as masked_fill masked_fill_ index_select "
    "gather scatter scatter_ scatter_add scatter_add_ numel long int bool softmax log_softmax argmax "
    "argmin type_as repeat_interleave narrow masked_select new_zeros new_ones new_empty new_full "
    "new_tensor add_ sub_ mul_ div_ clamp_ fill_ zero_ index_add_ index_copy_ index_fill_ sigmoid sigmoid_".split()
)
#: tensor methods numpy arrays lack (``squeeze``/``view``/``argmax``/``argmin`` are numpy's
#: too); on what indexing an array gives, ``size``/``dim``/``detach``/``contiguous`` are
#: evidence as well (a PyG ``Data`` is not what an array's index gives)
_NOT_NUMPY_METHOD_NAMES = (TENSOR_ONLY_METHOD_NAMES - {"squeeze", "view", "argmax", "argmin"}) | frozenset(
    "size dim detach contiguous get_device bmm copy_ float double half".split()
)
#: keywords of tensor methods that numpy's methods refuse (numpy's reductions take ``keepdims``;
#: not ``dim``, which xarray's take)
_NOT_NUMPY_KEYWORDS = frozenset({"keepdim"})
#: operators no module (nor an in-place-moving batch object) supports
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply)
#: attributes of a sibling-unpacked name that say nothing against it being a tensor (a module is
#: called, or its methods are: ``model(x)``, ``model.eval()``, ``model.parameters()``)
_NEUTRAL_ATTRIBUTES = frozenset({"to", "cuda", "cpu", "pin_memory", "shape", "ndim"})
#: torch.* names that do not take a tensor first (beyond the tables of torch_api)
_NOT_TENSOR_FIRST = frozenset({"torch.from_file", "torch.set_default_tensor_type", "torch.get_device"})

Scope = Union[cst.FunctionDef, cst.Module]


def takes_tensor_first(qualname: str) -> bool:
    """Does the torch function take a tensor as its first argument (``torch.unique(x)``,
    ``torch.nn.functional.relu(x)``, ``torch.zeros_like(x)``)? Factories, numpy converters,
    ``torch.save``/``compile``/``vmap`` and other functions of objects do not."""
    for namespace in ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special."):
        if qualname.startswith(namespace):
            return "." not in qualname[len(namespace):]
    if not qualname.startswith("torch.") or qualname.count(".") != 1:
        return False
    leaf = qualname[len("torch."):]
    if not leaf[:1].islower() or leaf.startswith("_"):
        return False  # classes (`torch.Generator`, `torch.Size`) and internals
    return not (
        qualname in api.FACTORIES
        or qualname in api.CPU_PRODUCERS
        or qualname in api.NON_TENSOR_FUNCTIONS
        or qualname in api.GENERATOR_CONSTRUCTORS
        or qualname in api.DEVICE_PROBES
        or qualname == api.TORCH_DEVICE
        or qualname in _NOT_TENSOR_FIRST
        or qualname.startswith(("torch.set_", "torch.get_", "torch.is_"))
    )


class TensorEvidence:
    """Per scope (a function, or the module's top level): names bound once and the first node
    that uses each as a tensor."""

    def __init__(
        self,
        bindings: dict[str, int],
        uses: dict[str, cst.CSTNode],
        unpacked_with: dict[str, tuple[str, ...]],
        object_uses: frozenset[str],
        indexed_uses: Optional[dict[str, cst.CSTNode]] = None,
        rows_of: Optional[dict[str, str]] = None,
    ) -> None:
        self._rows_of = rows_of or {}
        self._bindings = bindings
        self._uses = uses
        self._indexed_uses = indexed_uses or {}
        self._unpacked_with = unpacked_with
        self._object_uses = object_uses

    def tensor_use(self, name: str) -> Optional[cst.CSTNode]:
        """The node that shows ``name`` is a tensor, where the scope binds it once."""
        if self._bindings.get(name, 0) > 1:
            return None
        return self._uses.get(name)

    def indexed_tensor_use(self, name: str) -> Optional[cst.CSTNode]:
        """For an array (a name bound once that the scope indexes with a slice in a tuple,
        ``x[:, 0]``): the node that uses what indexing it gives as a tensor, as numpy refuses
        (``x[mask].long()``, or ``row.long()`` after ``row = x[mask]``)."""
        if self._bindings.get(name, 0) > 1:
            return None
        return self._indexed_uses.get(name)

    def bound_once(self, name: str) -> bool:
        return self._bindings.get(name, 0) == 1

    def iterated(self, row: str) -> Optional[str]:
        """For a name bound only by one loop, ``for row in x`` / ``for i, row in
        enumerate(x)``: the name ``x`` it iterates."""
        if self._bindings.get(row, 0) != 1:
            return None
        return self._rows_of.get(row)

    def sibling_tensor_use(self, name: str) -> Optional[tuple[str, cst.CSTNode]]:
        """For a name bound once by a tuple unpacking and never used as an object (called, an
        attribute read other than a move or ``.shape``): a sibling of that unpacking, bound
        once too, and the node that uses the sibling as a tensor."""
        if self._bindings.get(name, 0) != 1 or name in self._object_uses:
            return None
        for sibling in self._unpacked_with.get(name, ()):
            if sibling == name or self._bindings.get(sibling, 0) != 1:
                continue
            use = self._uses.get(sibling)
            if use is not None:
                return sibling, use
        return None


def scan(scope: Scope, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> TensorEvidence:
    """One walk of ``scope``'s own body (not the functions, classes and lambdas nested in it)."""
    finder = _Finder(qualname_of)
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg]:
            if isinstance(param, cst.Param):
                finder.bind(param.name)
        walk.visit(scope.body, finder)
    else:
        for statement in scope.body:
            walk.visit(statement, finder)
    indexed = finder.indexed_tensor_uses()
    for name, use in indexed.items():
        finder.uses.setdefault(name, use)
    rows_of = {row: container for container, row, _ in finder.row_loops}
    return TensorEvidence(finder.bindings, finder.uses, finder.unpacked_with, frozenset(finder.object_uses), indexed, rows_of)


def _is_array_index(node: cst.Subscript) -> bool:
    """``x[:, 0]``, ``x[..., 1]``, ``x[:, None]``, ``x[...]``: an index that lists, tuples and
    dicts refuse (or no code keys a dict by), so ``x`` is an array (numpy's or torch's)."""
    elements = node.slice
    if len(elements) == 1:
        only = elements[0].slice
        return isinstance(only, cst.Index) and isinstance(only.value, cst.Ellipsis)
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Slice):
            return True
        if isinstance(index.value, cst.Ellipsis) or isinstance(index.value, cst.Name) and index.value.value == "None":
            return True
    return False


class _Finder(OwnScopeVisitor):
    def __init__(self, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> None:
        self.qualname_of = qualname_of
        self.bindings: dict[str, int] = {}
        self.uses: dict[str, cst.CSTNode] = {}
        #: per name bound by a tuple unpacking (``a, b = f()``): all the names it binds
        self.unpacked_with: dict[str, tuple[str, ...]] = {}
        #: names called, or with an attribute read that a tensor move or shape is not
        self.object_uses: set[str] = set()
        #: names indexed like an array somewhere (``x[:, 0]``)
        self.arrays: set[str] = set()
        #: names used as tensors in a way numpy arrays refuse (``row.long()``, ``torch.cat([row])``)
        self.not_numpy_uses: dict[str, cst.CSTNode] = {}
        #: ``x[...]`` used so (``x[mask].long()``): x -> the use
        self.index_used_as_tensor: dict[str, cst.CSTNode] = {}
        #: ``row = x[...]``: row -> x
        self.bound_to_index: dict[str, list[str]] = {}
        #: ``for row in x`` / ``for i, row in enumerate(x)``: (x, row, the loop)
        self.row_loops: list[tuple[str, str, cst.For]] = []
        #: ``x = x[...]``: per name, how many of its bindings index what it held (see _RowVersions)
        self.self_index_bindings: dict[str, int] = {}

    def indexed_tensor_uses(self) -> dict[str, cst.CSTNode]:
        """Arrays (see _is_array_index) that what indexing them gives shows to be tensors,
        directly (``x[mask].long()``) or through names bound once to an index of them."""
        found = {name: use for name, use in self.index_used_as_tensor.items() if name in self.arrays}
        shown = dict(self.not_numpy_uses)
        shown.update(found)
        changed = True
        while changed:
            changed = False
            for row, containers in self.bound_to_index.items():
                use = shown.get(row)
                if use is None or self.bindings.get(row, 0) != 1:
                    continue
                for container in containers:
                    if container in self.arrays and container not in found:
                        found[container] = shown[container] = use
                        changed = True
        for container, row, loop in self.row_loops:
            if container in self.arrays and container not in found:
                use = _RowVersions(row, self.qualname_of).tensor_use(loop)
                if use is not None:
                    found[container] = use
        return found

    # ------------------------------------------------------------------ bindings

    def bind(self, target: cst.BaseExpression, times: int = 1) -> None:
        if isinstance(target, cst.Name):
            self.bindings[target.value] = self.bindings.get(target.value, 0) + times
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, times)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, times)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
            target = node.targets[0].target.value
            self.bound_to_index.setdefault(target, []).append(value.value.value)
            if value.value.value == target:
                self.self_index_bindings[target] = self.self_index_bindings.get(target, 0) + 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and _is_array_index(node):
            self.arrays.add(node.value.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.bind(node.target)
        target = node.target
        if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in target.elements):
            names = tuple(element.value.value for element in target.elements)  # type: ignore[attr-defined]
            for name in names:
                self.unpacked_with[name] = names

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.bind(node.target)
        rows = _rows_iterated(node)
        if rows is not None:
            self.row_loops.append((*rows, node))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.bind(node.target)  # a scope of its own, but the same spelling: count it, to be safe

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind(node.name.name)

    def visit_Del(self, node: cst.Del) -> None:
        self.bind(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.bind(item.name, times=2)  # bound elsewhere too: no single binding

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self.bind(item.name, times=2)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name):
                self.bind(bound)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name):
                self.bind(bound)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bind(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bind(node.name)
        return False

    # ------------------------------------------------------------------ uses

    def _use(self, node: cst.BaseExpression, where: cst.CSTNode, not_numpy: bool = False) -> None:
        if isinstance(node, cst.Name):
            self.uses.setdefault(node.value, where)
        self._not_numpy_use(node, where, not_numpy)

    def _not_numpy_use(self, node: cst.BaseExpression, where: cst.CSTNode, not_numpy: bool) -> None:
        if not not_numpy:
            return
        if isinstance(node, cst.Name):
            self.not_numpy_uses.setdefault(node.value, where)
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            self.index_used_as_tensor.setdefault(node.value.value, where)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, _ARITHMETIC):
            self._use(node.left, node)
            self._use(node.right, node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value not in _NEUTRAL_ATTRIBUTES:
            self.object_uses.add(node.value.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self.object_uses.add(func.value)
        qualname = self.qualname_of(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname is None:
            # `w.unsqueeze(0)` on a local (`F.softmax(h)` names a torch function instead)
            if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_ONLY_METHOD_NAMES:
                self._use(func.value, node, not_numpy=func.attr.value in _NOT_NUMPY_METHOD_NAMES)
            elif isinstance(func, cst.Attribute) and (
                func.attr.value in _NOT_NUMPY_METHOD_NAMES or any(arg.keyword is not None and arg.keyword.value in _NOT_NUMPY_KEYWORDS for arg in node.args)
            ):
                # `x[:, 5:].max(1, keepdim=True)`: numpy's reductions take `keepdims`
                self._not_numpy_use(func.value, node, True)
            return
        positional = [arg for arg in node.args if arg.keyword is None]
        if qualname in api.MIXING_FUNCTIONS:
            for arg in positional:
                if arg.star:
                    break
                if isinstance(arg.value, (cst.List, cst.Tuple)):
                    for element in arg.value.elements:
                        if not isinstance(element, cst.StarredElement):
                            self._use(element.value, node, not_numpy=True)
                else:
                    self._use(arg.value, node, not_numpy=True)
        elif takes_tensor_first(qualname) and positional and not positional[0].star:
            self._use(positional[0].value, node, not_numpy=True)


def _rows_iterated(loop: cst.For) -> Optional[tuple[str, str]]:
    """``for row in x`` or ``for i, row in enumerate(x)``: (x, row)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, cst.Name) and isinstance(target, cst.Name):
        return iterable.value, target.value
    if (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "enumerate"
        and len(iterable.args) == 1
        and iterable.args[0].keyword is None
        and not iterable.args[0].star
        and isinstance(iterable.args[0].value, cst.Name)
        and isinstance(target, cst.Tuple)
        and len(target.elements) == 2
        and isinstance(target.elements[1], cst.Element)
        and isinstance(target.elements[1].value, cst.Name)
    ):
        return iterable.args[0].value.value, target.elements[1].value.value
    return None


class _RowVersions:
    """The values a loop's row name holds in the loop's body, in source order, while each is
    the row the loop drew or an index of the one before (``x = x[mask]``): of the same library
    as the iterated array. Any other binding (``x = torch.cat(...)``, ``x += y``, a nested
    loop or block that may bind it) ends the walk there, and where one arm of an ``if``
    binds it, what follows the ``if`` is not looked at. A use that numpy refuses, on one of
    those values, is evidence that the iterated array is a tensor."""

    def __init__(self, row: str, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> None:
        self.row = row
        self.qualname_of = qualname_of
        self.use: Optional[cst.CSTNode] = None

    def tensor_use(self, loop: cst.For) -> Optional[cst.CSTNode]:
        self._walk(loop.body.body)
        return self.use

    def _look(self, node: cst.CSTNode) -> "_Finder":
        finder = _Finder(self.qualname_of)
        walk.visit(node, finder)
        return finder

    def _rebinds(self, finder: "_Finder") -> bool:
        return finder.bindings.get(self.row, 0) > finder.self_index_bindings.get(self.row, 0)

    def _found(self, finder: "_Finder") -> bool:
        self.use = finder.not_numpy_uses.get(self.row) or finder.index_used_as_tensor.get(self.row)
        return self.use is not None

    def _walk(self, statements: Sequence[cst.CSTNode]) -> bool:
        """Walk ``statements`` while the row's value is a row or an index of one; whether it
        still is after them (False also once a use is found)."""
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    finder = self._look(small)
                    if not self._rebinds(finder):
                        if self._found(finder):
                            return False
                        continue
                    # an assignment's value is computed before its target is bound
                    if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and small.value is not None:
                        self._found(self._look(small.value))
                    return False
            elif isinstance(statement, cst.If):
                test = self._look(statement.test)
                if self._rebinds(test) or self._found(test):
                    return False
                still_in_body = self._walk(statement.body.body)
                if self.use is not None:
                    return False
                orelse = statement.orelse
                still_in_else = True
                if isinstance(orelse, cst.If):
                    still_in_else = self._walk([orelse])
                elif orelse is not None:
                    still_in_else = self._walk(orelse.body.body)
                if self.use is not None or not (still_in_body and still_in_else):
                    return False
            else:
                # a loop, `with`, `try`: its uses see a row only where nothing in it binds another
                finder = self._look(statement)
                if self._rebinds(finder) or self._found(finder):
                    return False
        return True
