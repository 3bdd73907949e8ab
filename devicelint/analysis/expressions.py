"""The expression evaluator of the device-flow analysis.

``Expressions`` is a mixin of devicelint.analysis.flow.FlowAnalyzer: it gives every expression
an abstract Value (``eval``), resolves names (``lookup``) and dotted names to qualified names
(``qualname_of``), and evaluates calls - of the file's own functions and classes through
devicelint.analysis.summaries, of library code through devicelint.analysis.torch_semantics -,
emitting the call and binary-operation events rules subscribe to. Statements, assignment and
the joins of states where branches merge stay in devicelint.analysis.flow; this module uses the
interpreter's ``assign``, ``sink``, ``emitting``, ``facts``, ``module_state`` and function stack.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional, Sequence, Union

import libcst as cst

from devicelint.analysis import constructions, graphs, ranks
from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.facts import (
    CRITERION_BUILDER,
    ClassInfo,
    LoaderInfo,
)
from devicelint.analysis.names import constant_key, dotted_name, parameter_names, string_value
from devicelint.analysis.project_imports import ProjectRef
from devicelint.analysis.state import (
    State,
    none_checked_name,
)
from devicelint.analysis.names import has_decorator
from devicelint.analysis.tensor_evidence import TensorEvidence, scan as scan_tensor_evidence
from devicelint.analysis.torch_semantics import BUILTIN_REFS, MODULE_ONLY_METHODS, image_tensor, is_loss_class, optimizer_built_from_package, propagate
from devicelint.analysis.values import (
    NONE_VALUE,
    BoundCall,
    NEVER_NONE_KINDS,
    Device,
    Homogeneous,
    HostBesideAccelerator,
    Kind,
    appended,
    mapping_of,
    MODEL_DEVICE,
    Origin,
    Provenance,
    ParamGroup,
    OneParameter,
    drawn_parameters,
    Role,
    NoneOnOneArm,
    TensorOrNone,
    UNKNOWN,
    Value,
    collated_item,
    follows,
    homogeneous_element,
    host_beside_accelerator,
    is_none_literal,
    item_field,
    join,
)



#: the parameters every torch layer that has them registers under these names (``nn.Linear``,
#: ``nn.Conv2d``, ``nn.Embedding``, the norms): tensors where the layer is
_LAYER_PARAMETERS = frozenset({"weight", "bias"})


_UNKNOWN_BOUND = object()


class Expressions:
    """Expressions: see the module docstring."""

    #: names a comprehension being evaluated binds to the elements of a parameter of the
    #: function that is the program's data (see _handed_data)
    data_elements: tuple[str, ...] = ()

    def _init_expressions(self) -> None:
        #: the evaluator of each expression type (a dict lookup is cheaper than a libcst walk)
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
            moved = self.globals_moved.get(name) if self.globals_moved else None
            if moved is not None and self.module_state is self._own_module_state and self.current_function.node not in moved[0]:
                return moved[1]  # a global that another function moves in place (see FlowAnalyzer._find_globals_moved)
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
            return NONE_VALUE
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

    def _attribute_read(self, base_node: cst.BaseExpression, base: Value, attribute: str, state: State) -> Optional[Value]:
        """What ``getattr(base, "attribute")`` reads, where the attribute's value is known: an
        attribute the state holds, a field the object's construction gave, an attribute of an
        object of a class of the file, a submodule of a model of the file (see _eval_attribute;
        a property's getter is not run here)."""
        owner = dotted_name(base_node)
        if owner is not None:
            known = self._lookup_dotted(f"{owner}.{attribute}", state)
            if known is not None:
                return known
        if base.fields is not None:
            carried = base.field_value(attribute)
            if carried is not None:
                return carried
        if base.kind == Kind.UNKNOWN and isinstance(base.info, ClassInfo) and not base.info.is_module and not base.info.is_dataset:
            return self.object_attribute(base.info, attribute)
        if base.kind == Kind.MODULE and isinstance(base.info, ClassInfo) and base.info.is_module:
            return self.module_member(base, attribute)
        return None

    def _eval_attribute(self, node: cst.Attribute, state: State) -> Value:
        # (the name test inline: this runs for every attribute read)
        properties = self._property_names if self._property_names is not None else self.property_names()
        accessors = self.property_accessors(node, state) if node.attr.value in properties else None
        if accessors is not None:
            # a property: its getter runs (a stored value of that name is none)
            getter, _, owner, receiver = accessors
            if getter is None:
                return UNKNOWN
            # it starts from what the caller left on the object (`self._inputs` its setter stored)
            carried = self._attributes_set_by_caller(owner, dotted_name(node.value), state)
            return self._summarise(getter, owner, receiver, True, (), state, carried)
        key = dotted_name(node)
        if key is not None:
            known = self._lookup_dotted(key, state)
            if known is not None:
                return known
        base = self.eval(node.value, state)
        attribute = node.attr.value
        if base.kind == Kind.CLASS and isinstance(base.info, ClassInfo):
            kept = _class_attribute(base.info, attribute)
            if kept is not None:
                return kept  # `Consts.MEAN`: a tensor the class body made
        if base.kind == Kind.REF:
            member = self.project_member(base, attribute)
            if member is not None:
                return member
            return Value(Kind.REF, qualname=_through_reexported_torch(f"{base.qualname}.{attribute}"))
        if base.fields is not None:
            carried = base.field_value(attribute)
            if carried is not None:
                return carried  # `frames.rotations` of `frames = Frame(rotations=torch.eye(3), ...)`
        if base.kind == Kind.UNKNOWN and isinstance(base.info, ClassInfo) and not base.info.is_module and not base.info.is_dataset:
            kept = self.object_attribute(base.info, attribute)
            if kept is not None:
                return kept  # `graph.rows` of `graph = DistGraph(num_parts, rows, cols)`
        if base.kind == Kind.MODULE and isinstance(base.info, ClassInfo) and base.info.is_module:
            member = self.module_member(base, attribute)
            if member is not None:
                return member  # `model.encoder` of `model = Net().to(device)`: its submodule, there too
        if (
            base.kind == Kind.MODULE and base.info is None and base.device is not None
            and attribute in _LAYER_PARAMETERS and dotted_name(node.value) is not None
        ):
            # `self.embedding.weight` of `nn.Embedding(...)`, `head.bias`: a torch layer's own
            # parameters, registered on it, so where the layer is (Module.to moves them in place)
            return Value(Kind.TENSOR, base.device, base.origin, role=Role.PARAMETER)
        if graphs.is_graph(base):
            field = graphs.field(base, attribute)
            return field if field is not None else UNKNOWN
        if base.kind == Kind.TENSOR:
            if attribute == "device":
                symbolic = follows(self._label(node), argument=self._names_a_plain_argument(node))
                return Value(Kind.DEVICE, base.device if base.device is not None else symbolic, base.origin)
            if attribute in ("T", "mT", "H", "mH", "data", "real", "imag", "values", "indices", "grad"):
                # `p.grad`: the gradient autograd accumulates is where the tensor is
                return Value(Kind.TENSOR, base.device, base.origin, scalar=base.scalar if attribute != "values" else None)
        if base.role is Role.DISTRIBUTION and base.device is not None and attribute in api.DISTRIBUTION_TENSOR_ATTRIBUTES:
            return Value(Kind.TENSOR, base.device, base.origin)  # `dist.probs`, `dist.mean`
        if base.kind == Kind.BATCH and base.role is Role.TOKENIZED_BATCH and attribute in api.TOKENIZED_TENSOR_KEYS:
            return Value(Kind.TENSOR, base.device, base.origin, scalar=False)  # `batch.input_ids`
        if base.kind == Kind.BATCH and base.role is Role.FIELD_BATCH and attribute not in api.TORCHTEXT_BATCH_ATTRIBUTES:
            # `batch.src` of a torchtext iterator: a field's tensor, or its (tensor, lengths) pair
            return Value(Kind.BATCH, base.device, base.origin, scalar=False)
        if base.role is Role.MODEL_OUTPUT and base.device is not None:
            # `model(**batch).logits`, `outputs.hidden_states[-1]`: fields of the output object, where the model is
            if attribute in api.MODEL_OUTPUT_TENSOR_FIELDS:
                return Value(Kind.TENSOR, base.device, base.origin, role=Role.MODEL_OUTPUT)
            if attribute in api.MODEL_OUTPUT_TUPLE_FIELDS:
                return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.TENSOR, base.device, base.origin, role=Role.MODEL_OUTPUT)))
        if (
            attribute in ("values", "indices") and base.kind == Kind.CONTAINER and isinstance(base.info, tuple) and len(base.info) == 2
            and all(part.kind == Kind.TENSOR for part in base.info)
        ):
            return base.info[attribute == "indices"]  # `scores.topk(k).indices`: the named pair's fields
        if base.kind == Kind.GENERATOR and attribute == "device" and base.device is not None:
            return Value(Kind.DEVICE, base.device, base.origin)  # where the generator draws
        return UNKNOWN

    def _eval_subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        index_value: Optional[Value] = None
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                index_value = self.eval(element.slice.value, state)
                if (
                    base.kind == Kind.UNKNOWN and base.is_bare and base.device is not None
                    and index_value.kind == Kind.TENSOR and index_value.scalar is False
                ):
                    # `bank.to(device)[idx]` with `idx` a tensor of one or more dimensions: only a
                    # tensor (or an array) takes such an index, and only a torch object is moved
                    base = Value(Kind.TENSOR, base.device, base.origin)
                if base.is_tensor_like and _moved_object_of_unknown_kind(index_value):
                    # `table[labels]` with `labels = labels.to(device)` of a loader batch of unknown
                    # kind: only a tensor is both moved by `.to()` and a tensor's index
                    index_value = Value(Kind.TENSOR, index_value.device, index_value.origin)
                if self.emitting and (base.is_tensor_like or base.kind == Kind.NDARRAY) and index_value.is_tensor_like:
                    self.sink.on_index(node, base, element.slice.value, index_value)
        if base.fields is not None:
            key = constant_key(node)
            stored = base.field_value(item_field(key)) if key is not None else None
            if stored is not None:
                return stored  # `cfg["device"]` after `cfg["device"] = dev`
        if base.role is Role.MODEL_OUTPUT and base.device is not None and constant_key(node) is not None:
            # `outputs["hidden_states"]`, `out["logits"]`: a transformers ModelOutput is an
            # OrderedDict whose string keys give its fields, as the attributes do
            key = constant_key(node)
            if key in api.MODEL_OUTPUT_TENSOR_FIELDS:
                return Value(Kind.TENSOR, base.device, base.origin, role=Role.MODEL_OUTPUT)
            if key in api.MODEL_OUTPUT_TUPLE_FIELDS:
                return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.TENSOR, base.device, base.origin, role=Role.MODEL_OUTPUT)))
        if base.kind == Kind.TENSOR and constant_key(node) is not None:
            # `parts["patches"]`: no tensor takes a string index, so what was taken for one (an
            # unpacked loader batch: `for inputs, target in loader`) is a mapping of unknown entries
            return UNKNOWN
        if base.kind == Kind.TENSOR:
            scalar = _dimensions_kept(node.slice, base.scalar)
            if scalar is None and index_value is not None and index_value.is_tensor_like and index_value.scalar is False:
                # `alphas_cumprod[timesteps]`: an index tensor with a dimension gives the result
                # its dimensions (a mask, the selected rows)
                scalar = False
            if (
                base.device is not None
                and base.device.is_cpu
                and index_value is not None
                and index_value.is_tensor_like
                and index_value.scalar is not True
                and index_value.device is not None
                and index_value.device.may_be_accelerator
                and not index_value.device.argument
            ):
                # a host table indexed on the accelerator: PyTorch raises there (DL207's), so what
                # the subscript gives is no value the code goes on with
                return Value(Kind.TENSOR, None, base.origin, scalar=scalar)
            return Value(Kind.TENSOR, base.device, base.origin, scalar=scalar)
        if _moved_object_of_unknown_kind(base) and len(node.slice) >= 2:
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
            if index_value is not None and len(node.slice) == 1:
                return Value(Kind.MODULE, base.device, base.origin, info=_member_class(base))  # `self.blocks[i]`
            return Value(Kind.MODULE, base.device, base.origin, info=base.info if isinstance(base.info, Homogeneous) else None)
        if base.kind == Kind.CONTAINER:
            if isinstance(base.info, tuple) and index_value is not None and isinstance(index_value.literal, int):
                position = index_value.literal
                if -len(base.info) <= position < len(base.info) and len(node.slice) == 1:
                    return base.info[position]
                return UNKNOWN
            if isinstance(base.info, tuple) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                # `parts[1:]`: a slice of a list or tuple of known entries holds some of those
                # entries, in order
                return self._sliced_entries(base, node.slice[0].slice, state)
            if isinstance(base.info, Homogeneous) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                # `parts[:-1]`: a slice of a list or tuple is a list or tuple of the same elements
                return Value(Kind.CONTAINER, base.device, base.origin, info=base.info, role=base.role)
            if isinstance(base.info, Homogeneous) and len(node.slice) == 1:
                return base.info.element
        if base.kind == Kind.REF and index_value is not None:
            return ranks.environ_item(base.qualname, index_value, node)
        return UNKNOWN

    def _forget_items_handed(
        self,
        func: cst.BaseExpression,
        method: Optional[str],
        receiver: Optional[Value],
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
    ) -> None:
        """A collection whose constant-key entries are known (``cfg["device"] = dev``) and
        that a call is handed, or whose own method other than a read is called
        (``cfg.update(...)``): the callee may change them, so after the call none is known.
        The call itself still sees them in its arguments."""
        handed = [(arg.value, value) for arg, value in args if value.fields is not None]
        if receiver is not None and receiver.fields is not None and method not in _ITEM_READING_METHODS:
            handed.append((func.value, receiver))  # type: ignore[attr-defined]
        for expression, value in handed:
            key = dotted_name(expression) if value.has_items else None
            if key is not None and state.get(key) is value:
                state[key] = value.without_items()

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
            operator = node.operator if isinstance(node, (cst.BinaryOperation, cst.AugAssign)) else None
            if isinstance(operator, (cst.Add, cst.AddAssign)) and _sequence(left) and _sequence(right):
                # `groups + [extra]`, `params += [{"params": [p], "lr": lr}]`: the elements of
                # both, as `extend` has them
                # (not for modules: whether each one is also registered on its owner, which
                # `[self.enc] + [self.dec]` keeps, does not survive the join of the elements)
                added = self.element_of(right) if right.info else None
                before = homogeneous_element(left)
                if all(part is None or part.kind not in (Kind.MODULE, Kind.CRITERION) for part in (added, before)):
                    return appended(left, added, node) if added is not None else left
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
            literal = operand.literal
            if isinstance(literal, (int, float)) and not isinstance(literal, bool):
                # `xs[-1]`: a negative literal keeps its value, so a position counted from the end
                # is as known as one counted from the start
                if isinstance(node.operator, cst.Minus):
                    return Value(Kind.NUMBER, literal=-literal)
                if isinstance(node.operator, cst.Plus):
                    return Value(Kind.NUMBER, literal=literal)
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
        if checked is not None and checked.kind in NEVER_NONE_KINDS and not self._as_handed_in(none_checked[0], checked):
            # `generator.device if generator is not None else device` with a known generator:
            # only one arm can run (a parameter that the body uses as a tensor may still be None)
            return self.eval(node.orelse if none_checked[1] else node.body, state)
        tensor_checked = self._tensor_check(node.test, state)
        if tensor_checked is not None:
            # `v if isinstance(v, torch.Tensor) else torch.tensor(v)`, as `if isinstance(...)`
            # does: a known list, number or string takes the other arm, a known tensor this one
            name, is_tensor_arm = tensor_checked
            kind = self.lookup(name, state).kind
            if kind in (Kind.CONTAINER, Kind.NUMBER, Kind.STR):
                return self.eval(node.orelse if is_tensor_arm else node.body, state)
            if kind == Kind.TENSOR:
                return self.eval(node.body if is_tensor_arm else node.orelse, state)
        if none_checked is not None and self.lookup(none_checked[0], state).role is Role.NONE_DEFAULT:
            # `device if device is not None else ...` where every call leaves `device` at None
            return self.eval(node.body if none_checked[1] else node.orelse, state)
        if none_checked is not None:
            name, none_is_body = none_checked
            current = self.lookup(name, state)
            if current.role is Role.NONE_LITERAL and name in state:
                # `v if acc is None else acc + v` where `acc` is still the None it was set to
                # (the first pass of a loop that accumulates): only the None arm runs
                return self.eval(node.body if none_is_body else node.orelse, state)
            if current.kind == Kind.UNKNOWN and isinstance(current.info, TensorOrNone) and name in state:
                # where `acc` is a tensor or None, the other arm sees the tensor, as the body of
                # `if acc is not None:` does
                checked_arm = node.orelse if none_is_body else node.body
                state[name] = current.info.tensor
                try:
                    narrowed = self.eval(checked_arm, state)
                finally:
                    state[name] = current
                none_arm = self.eval(node.body if none_is_body else node.orelse, state)
                body, orelse = (none_arm, narrowed) if none_is_body else (narrowed, none_arm)
                return self._joined_arms(node, body, orelse, state)
        body = self.eval(node.body, state)
        orelse = self.eval(node.orelse, state)
        return self._joined_arms(node, body, orelse, state)

    def _joined_arms(self, node: cst.IfExp, body: Value, orelse: Value, state: State) -> Value:
        """What a conditional expression gives once both arms are evaluated."""
        none_checked = none_checked_name(node.test)
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
            return Value(Kind.DEVICE, accel, Origin(node, "chosen", provenance=Provenance.CHOSEN))
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

    def _sliced_entries(self, base: Value, part: cst.Slice, state: State) -> Value:
        """The entries of ``base`` (a list or tuple of known entries) that ``part`` keeps: exactly
        where its bounds are literal, else a list of what any entry may be."""
        bounds = []
        for bound in (part.lower, part.upper, part.step):
            if bound is None:
                bounds.append(None)
                continue
            literal = self.eval(bound, state).literal
            bounds.append(literal if isinstance(literal, int) and not isinstance(literal, bool) else _UNKNOWN_BOUND)
        entries: tuple[Value, ...] = base.info  # type: ignore[assignment]
        if _UNKNOWN_BOUND not in bounds and bounds[2] != 0:
            return Value(Kind.CONTAINER, base.device, base.origin, info=entries[slice(*bounds)], role=base.role)
        if not entries:
            return Value(Kind.CONTAINER, base.device, base.origin, role=base.role)
        element = entries[0]
        for entry in entries[1:]:
            element = join(element, entry)
        return Value(Kind.CONTAINER, base.device, base.origin, info=Homogeneous(element), role=base.role)

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
            elif key is not None and key.literal == "params" and drawn_parameters(value) is not None:
                # `{"params": [p], "lr": ...}` for `p` drawn from `model.named_parameters()`:
                # a group of some of that module's parameters
                group_parameters = drawn_parameters(value)
            entries.append((value, item.value))
        if group_parameters is not None:
            # `{"params": model.parameters(), "lr": ...}`: a parameter group of an optimizer
            return Value(Kind.CONTAINER, info=ParamGroup(group_parameters))
        if any(isinstance(item, cst.StarredDictElement) for item in node.elements):
            return Value(Kind.CONTAINER)
        mapping = mapping_of(entries)
        for item, (value, _) in zip(node.elements, entries):
            key = _literal_key(item.key) if isinstance(item, cst.DictElement) else None
            if key is not None:
                # `{"transformer": net, "offload": True}["transformer"]` reads back `net`, as a
                # store at that key would (`cfg["device"] = dev`), not the join of all values
                mapping = mapping.with_item(key, value)
        return mapping

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
            if value.kind == Kind.PARAMETERS and isinstance(value.info, Value) and len(args) == 1:
                # `dict(model.named_parameters())`: names -> the module's parameters themselves
                element = self.element_of(value)
                if element.kind == Kind.CONTAINER and isinstance(element.info, tuple):
                    return Value(Kind.CONTAINER, origin=value.origin, info=Homogeneous(element.info[1], key=element.info[0]))
                return UNKNOWN
            if not isinstance(pairs, (cst.List, cst.Tuple)) and value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous) and value.info.key is None:
                # `dict(zip(names, tensors))`, `dict(enumerate(xs))`: pairs alike, each value
                # what the pairs' second entries all are
                pair = self.element_of(value)
                if pair.kind != Kind.CONTAINER or not isinstance(pair.info, tuple) or len(pair.info) != 2:
                    return UNKNOWN
                entries.append((pair.info[1], pairs))
                continue
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
        handed: list[str] = []
        while clause is not None:
            iterable = self.eval(clause.iter, scope)
            self.assign(clause.target, self.element_of(iterable), scope, None)
            if type(clause.target) is cst.Name and self._handed_data(clause.iter, iterable):
                handed.append(clause.target.value)
            for condition in clause.ifs:
                self.eval_condition(condition.test, scope)
            clause = clause.inner_for_in
        if handed:
            self.data_elements = (*self.data_elements, *handed)
            try:
                return self._comprehension_result(node, scope, iterable)
            finally:
                self.data_elements = self.data_elements[:-len(handed)]
        return self._comprehension_result(node, scope, iterable)

    def _handed_data(self, node: cst.BaseExpression, iterable: Value) -> bool:
        """``for token in data`` in a comprehension, where ``data`` is a parameter of the
        function, as it came in, that is no tensor, module or device (a list of records or
        token lists): each element is the program's data as the parameter is (see
        torch_semantics._reads_data: ``torch.tensor(token)`` converts it)."""
        function = self.current_function.node
        if type(node) is not cst.Name or function is None or iterable.device is not None or iterable.is_tensor_like:
            return False
        if iterable.kind not in (Kind.UNKNOWN, Kind.CONTAINER):
            return False
        return node.value in parameter_names(function)

    def _comprehension_result(self, node: cst.BaseExpression, scope: State, iterable: Value) -> Value:
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
        try:
            if isinstance(node, cst.Integer):
                literal = int(node.value.replace("_", ""), 0)
            elif isinstance(node, cst.Float):
                # `total = 0.0` starts a running total as `total = 0` does (see values.join)
                literal = float(node.value.replace("_", ""))
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
        builder = self._criterion_builder_lambda(node, state)
        if builder is not None:
            return builder
        # any other lambda: a function, which a call where it is defined runs (see _call_lambda)
        self._lambda_defined_in[node] = self.current_function.node
        return Value(Kind.FUNCTION, info=node)

    def _criterion_builder_lambda(self, node: cst.Lambda, state: State) -> Optional[Value]:
        params = node.params
        body = node.body
        if params.params or params.posonly_params or params.kwonly_params or not isinstance(params.star_kwarg, cst.Param):
            return None
        if not isinstance(body, cst.Call) or not is_loss_class(self.qualname_of(body.func, state)):
            return None
        star_args = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        forwarded = False
        for arg in body.args:
            spread = arg.value.value if isinstance(arg.value, cst.Name) else None
            if arg.star == "**" and spread == params.star_kwarg.name.value:
                forwarded = True
            elif arg.star == "*" and spread is not None and spread == star_args:
                continue
            elif arg.star or arg.keyword is None or arg.keyword.value in ("weight", "pos_weight"):
                return None  # a loss built from more than what the lambda is called with
        return Value(Kind.FUNCTION, info=CRITERION_BUILDER) if forwarded else None

    def _partial(self, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """``functools.partial(evaluate, model)``: a function that calls ``evaluate`` with
        ``model`` first, where ``evaluate`` is a function of the file or a lambda and nothing is
        spread into the partial; anything else is unknown."""
        if not args or args[0][0].keyword is not None or any(arg.star for arg, _ in args):
            return UNKNOWN
        function = args[0][1]
        if function.kind != Kind.FUNCTION or not isinstance(function.info, (cst.FunctionDef, cst.Lambda)):
            return UNKNOWN
        return Value(Kind.FUNCTION, info=BoundCall(function, tuple(args[1:])))

    def _call_bound(self, node: cst.Call, bound: BoundCall, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """A call of a ``functools.partial`` object: the function, handed the bound positions
        and then the call's, and the bound keywords the call does not give again."""
        given = {arg.keyword.value for arg, _ in args if arg.keyword is not None}
        positional = tuple(pair for pair in bound.args if pair[0].keyword is None)
        keywords = tuple(pair for pair in bound.args if pair[0].keyword is not None and pair[0].keyword.value not in given)
        handed = tuple(pair for pair in args if pair[0].keyword is None) + keywords + tuple(pair for pair in args if pair[0].keyword is not None)
        combined = positional + handed
        function = bound.function.info
        if isinstance(function, cst.Lambda):
            result = self._call_lambda(function, combined, state)
            self._escape(combined, state)
            return result
        left: dict[str, Value] = {}
        result = self._summarise(function, None, None, False, combined, state, call=node, left=left)
        self._escape_into(function, combined, state, skip_first=False, left=left)
        return result

    def _call_lambda(self, node: cst.Lambda, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """``predict = lambda x: model(x)`` called as ``predict(batch)`` in the function that
        binds it: its body is that expression, with the parameters bound to what the call hands
        and every free name read where the call is (Python reads a lambda's free names when it
        runs). A lambda called elsewhere, or with parameters or arguments beyond plain
        positions and keywords, gives nothing."""
        params = node.params
        if (
            node in self._lambdas_running
            or self._lambda_defined_in.get(node) is not self.current_function.node
            or params.posonly_params
            or params.kwonly_params
            or params.star_arg is not cst.MaybeSentinel.DEFAULT
            or params.star_kwarg is not None
            or any(arg.star for arg, _ in args)
        ):
            return UNKNOWN
        names = [param.name.value for param in params.params]
        scope = dict(state)
        for name in names:
            scope[name] = UNKNOWN
        position = 0
        for arg, value in args:
            if arg.keyword is None:
                if position >= len(names):
                    return UNKNOWN
                scope[names[position]] = value
                position += 1
            elif arg.keyword.value in names:
                scope[arg.keyword.value] = value
            else:
                return UNKNOWN
        self._lambdas_running.add(node)
        try:
            return self.eval(node.body, scope)
        finally:
            self._lambdas_running.discard(node)

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
                Origin(iterable.origin.node, "batch", from_data=True, provenance=Provenance.BATCH) if iterable.origin else None,
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
            return Value(Kind.MODULE, iterable.device, iterable.origin, info=_member_class(iterable))
        if kind == Kind.PARAMETERS and isinstance(iterable.info, Value) and iterable.info.kind in (Kind.MODULE, Kind.CRITERION):
            # `next(model.parameters())`: a tensor where the module's parameters are (so its
            # `.device` is the module's, or the symbol it spells where that is not known); one
            # of those parameters (see OneParameter); `named_parameters()` and `named_buffers()`
            # give (name, tensor) pairs
            parameter = Value(Kind.TENSOR, iterable.info.device, iterable.info.origin, info=OneParameter(iterable))
            taken = iterable.origin.node if iterable.origin is not None else None
            if isinstance(taken, cst.Call) and isinstance(taken.func, cst.Attribute) and taken.func.attr.value.startswith("named_"):
                return Value(Kind.CONTAINER, info=(Value(Kind.STR), parameter))
            return parameter
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
                # what this object's construction gave the field, before what the class's
                # objects keep under that name
                kept = self._module_field(base, method)
                if kept is None:
                    kept = self._module_kept_by_object(base, method)
                if kept is None and self._calls_a_property(func, base, state):
                    # `holder.net(**enc)` of `@property def net(self): return self._net`: the
                    # getter runs, and what it returns is called - not a method named `net`
                    kept = self.eval(func, state)
                if kept is not None:
                    # `agents.policy.net(x)`: not a method of the object's class but the module
                    # its methods keep under that name, called
                    callee, receiver, method = kept, None, None
        else:
            callee = self.eval(func, state)
        callee = self.resolve_project_ref(callee)
        if callee.kind == Kind.REF and isinstance(callee.info, ProjectRef):
            callee = Value(Kind.REF)  # a module of the project called: nothing torch knows
        args = tuple((arg, self.eval(arg.value, state)) for arg in node.args)
        self._forget_items_handed(func, method, receiver, args, state)
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
        if method == "__init__" and isinstance(func, cst.Attribute) and _is_super_call(func.value) and self.emitting:
            self.note_base_init_call(args)
        base_result = (
            self._call_base_method(node, method, args, state)
            if method is not None and method != "__init__" and isinstance(func, cst.Attribute) and _is_super_call(func.value)
            else None
        )
        if base_result is not None:
            result = base_result
        elif method is not None and receiver is not None:
            result = self._apply_method(node, receiver, method, args, state)
            if result is UNKNOWN:
                result = self._kept_object_result(node, receiver, method, args) or result
        elif qualname is not None:
            result = self._apply_qualified(node, qualname, args, state)
        elif callee.kind == Kind.CLASS:
            result = self._instantiate(node, callee.info, args, self._default_device(state))
            self.place_modules_init_moves(callee.info, args, state)
        elif callee.kind in (Kind.MODULE, Kind.CRITERION):
            result = (
                self._own_forward_outputs(node, callee, args, state)
                or self._parameterless_forward_result(node, callee, args, state)
                or self._mapping_forward_result(node, callee, args, state)
                or self._call_module(callee, args)
            )
            if self.emitting:
                self.note_module_call(node, callee, args)
        elif callee.kind == Kind.UNKNOWN and isinstance(callee.info, ClassInfo) and callee.info.find_method("__call__") is not None:
            # an object of a class of the file (or project) called: its `__call__` runs
            called = self._call_own_method(node, callee, "__call__", args, state)
            result = called if called is not None else UNKNOWN
        elif callee.kind == Kind.UNKNOWN and callee.role is Role.TOKENIZER:
            result = self.tokenized(node, "__call__", args)
        elif callee.kind == Kind.UNKNOWN and callee.role is Role.IMAGE_TO_TENSOR:
            result = image_tensor(node)
        elif callee.kind == Kind.FUNCTION and callee.role is Role.BATCH_ITERATOR:
            result = self.iterated_batches(node, args)
        elif callee.kind == Kind.UNKNOWN and callee.is_bare and callee.device is not None:
            # something moved to a device and then called: a model of unknown class; what it
            # returns is there too, though not known to be a tensor
            result = Value(Kind.UNKNOWN, callee.device, callee.origin)
            self._escape(args, state)
        elif callee.kind == Kind.FUNCTION and callee.info is CRITERION_BUILDER:
            result = self.criterion(node, args)  # the loss holds the `weight=` it is called with
        elif callee.kind == Kind.FUNCTION and isinstance(callee.info, BoundCall):
            result = self._call_bound(node, callee.info, args, state)
        elif callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.Lambda):
            result = self._call_lambda(callee.info, args, state)
            self._escape(args, state)  # what the body did to its arguments is not kept
        elif callee.kind == Kind.FUNCTION and isinstance(callee.info, cst.FunctionDef):
            left: dict[str, Value] = {}
            result = self._summarise(callee.info, None, None, False, args, state, call=node, left=left)
            self._escape_into(callee.info, args, state, skip_first=False, left=left)
            if left and callee.info in self._nested_functions and self._defined_in.get(callee.info) is self.current_function.node:
                # a closure called where it is defined moved a module of this function in place
                for name in self.free_modules_moved_in_place(callee.info):
                    if name in left and name in state:
                        state[name] = left[name]
        else:
            result = UNKNOWN
            if not (method is None and isinstance(func, cst.Name) and func.value in api.READ_ONLY_BUILTINS and callee.kind == Kind.UNKNOWN):
                # (`str(model)`, `getattr(model, "config", None)` read it and leave it where it is)
                self._escape(args, state)
        if result is UNKNOWN:
            result = optimizer_built_from_package(node, args) or result
        if result is UNKNOWN and method is None:
            context = self.current_function
            in_module_init = context.class_info is not None and context.class_info.is_module and context.name == "__init__"
            built = constructions.construction_origin(node, callee, args, self._default_device(state), in_module_init)
            if built is not None:
                result = Value(Kind.UNKNOWN, origin=built)
        result = self.tensors_asked_of(node, method, args, result)
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

    def _parameterless_forward_result(
        self, node: cst.Call, callee: Value, args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> Optional[Value]:
        """``self.pre_processor(pages)`` where the module's class, of this file, owns no
        parameters, buffers or submodules (a pre-processor, a parameter-free loss or mask
        builder): nothing of it sits on a device, so what it returns is where its ``forward``
        puts it on the call's values - stacked host pages stay on the host - not on "the
        module's device". None where the summary knows nothing."""
        forward = self._own_forward(callee)
        if forward is None or self.owns_parameters(callee.info):
            return None
        result = self._call_own_method(node, callee, "forward", args, state)
        if result is None or result.kind == Kind.UNKNOWN and result.device is None:
            return None
        return result

    def _mapping_forward_result(
        self, node: cst.Call, callee: Value, args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> Optional[Value]:
        """``out = model(batch)`` where the module's class, of this file, returns a dict written
        out in every ``return`` of its ``forward`` (``{"loss": loss, "logits": logits}``): what
        the call gives is that dict, its entries where ``forward`` put them on the call's
        values (``out["loss"]``), not one tensor on the module's device (which no string key
        indexes). None where the summary does not know the entries."""
        info = callee.info
        found = info.find_method("forward") if isinstance(info, ClassInfo) and info.is_module else None
        if found is None or not self.returns_mapping_literal(found[0]):
            return None
        forward = self._own_forward(callee)
        if forward is None:
            return None
        # a silent read of its result: the call is noted as the module call it is (see
        # note_module_call), not as a call site of `forward` that its own analysis would take
        result = self._summarise(forward, found[1], callee, True, args, state, call=node, note=False)
        if result.kind != Kind.CONTAINER or not result.has_items:
            return None
        return _on_module_device(result, callee.device)

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

    def _calls_a_property(self, func: cst.Attribute, base: Value, state: State) -> bool:
        """``holder.net(x)`` where ``net`` is a ``@property`` of the class of ``holder`` defined
        in this file: Python runs the getter and calls what it returns (a module it keeps, a
        function), so the call is not one of a method named ``net``. Only for a dotted receiver
        (``holder``, ``self.owner``), which reading again has no effect."""
        name = func.attr.value
        info = base.info
        if base.kind == Kind.CLASS or not isinstance(info, ClassInfo) or name not in self.property_names():
            return False
        if dotted_name(func.value) is None:
            return False
        found = info.find_method(name)
        return found is not None and has_decorator(found[0], "property")

    def _module_field(self, base: Value, name: str) -> Optional[Value]:
        """The module or criterion the object's construction gave its field ``name``
        (``state.model(x)`` of ``state = TrainState(model)``, a dataclass of the file), where
        the object's class has no method of that name: the call calls that module."""
        if base.fields is None:
            return None
        info = base.info
        if isinstance(info, ClassInfo) and info.find_method(name) is not None:
            return None
        field = base.field_value(name)
        return field if field is not None and field.kind in (Kind.MODULE, Kind.CRITERION) else None

    def _module_kept_by_object(self, base: Value, name: str) -> Optional[Value]:
        """The module or criterion an object of a plain class of the file keeps under ``name``
        (``self.net = Net().to(device)`` in its ``__init__``), where its class has no method of
        that name; None otherwise. So too a submodule of a module of a class of the file, called
        from outside the class (``model.generator(ids)`` of ``model = Outer().to(device)``): not a
        method but the module its methods see as ``self.generator``, where the model was moved
        (``Module.to`` moves every registered submodule; see module_member). Not for a model
        left where it was built: a module it was handed, or a copy of one, is wherever that one
        was put."""
        info = base.info
        if base.kind == Kind.MODULE and isinstance(info, ClassInfo) and info.is_module:
            if info.find_method(name) is not None or base.device is None or not base.device.may_be_accelerator:
                return None
            member = self.module_member(base, name)
            return member if member is not None and member.kind in (Kind.MODULE, Kind.CRITERION) else None
        if base.kind != Kind.UNKNOWN or not isinstance(info, ClassInfo) or info.is_module or info.is_dataset or info.find_method(name) is not None:
            return None
        kept = self.object_attribute(info, name)
        if kept is None or kept.kind not in (Kind.MODULE, Kind.CRITERION):
            return None
        if kept.device is not None and kept.device.also_on_host:
            return None  # the class's objects keep it placed differently: not known of this one
        return kept

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

    def _builtin(self, name: str, args: tuple[tuple[cst.Arg, Value], ...], node: Optional[cst.Call] = None, state: Optional[State] = None) -> Value:
        if state is not None and name in _ITERATING_BUILTINS:
            # `enumerate(loader)`, `zip(loader, ...)`, `next(iter(loader))` of an object whose
            # `__iter__` is a generator of the file: they iterate what it yields, as `for` does
            args = tuple((arg, value if arg.star else self._iterated_by_own_class(value, state)) for arg, value in args)
        if name == "enumerate" and args:
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.NUMBER), self.element_of(args[0][1])))))
        if name == "zip" and len(args) == 1 and args[0][0].star == "*":
            return Value(Kind.CONTAINER, info=Homogeneous(_column_of(args[0][1])))
        if name == "zip":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=tuple(self.element_of(value) for _, value in args))))
        if name == "range":
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.NUMBER)))
        if name in ("list", "tuple") and not args:
            return Value(Kind.CONTAINER, info=())  # `list()` is `[]`: an empty sequence
        if name in ("list", "tuple", "sorted", "reversed", "iter") and len(args) == 1:
            return Value(Kind.CONTAINER, info=Homogeneous(self.element_of(args[0][1])))
        if (
            name == "sorted" and args and args[0][0].keyword is None and not args[0][0].star
            and all(arg.keyword is not None and arg.keyword.value in ("key", "reverse") for arg, _ in args[1:])
        ):
            # `sorted(xs, key=lambda t: t.numel())`: the same elements, in another order
            return Value(Kind.CONTAINER, info=Homogeneous(self.element_of(args[0][1])))
        if name == "getattr" and len(args) == 2 and state is not None and not any(arg.star or arg.keyword is not None for arg, _ in args):
            attribute = args[1][1].literal
            if isinstance(attribute, str) and attribute.isidentifier():
                # `getattr(holder, "x")` reads `holder.x`
                return self._attribute_read(args[0][0].value, args[0][1], attribute, state) or UNKNOWN
        if name == "setattr" and len(args) == 3 and state is not None and not any(arg.star or arg.keyword is not None for arg, _ in args):
            attribute = args[1][1].literal
            owner = dotted_name(args[0][0].value)
            # the object may be changed beyond the attribute (a module given a submodule): what
            # was known of it is forgotten, as for any call it is handed to
            self._escape(args[:1], state)  # type: ignore[attr-defined]
            if isinstance(attribute, str) and attribute.isidentifier() and owner is not None and owner.split(".", 1)[0] in state:
                # `setattr(holder, "x", value)` stores as `holder.x = value` does
                state[f"{owner}.{attribute}"] = args[2][1]
            return NONE_VALUE
        if name == "len":
            return Value(Kind.NUMBER)
        if name == "dict" and node is not None:
            return self._mapping_of_pairs(node, args)
        if name == "map" and node is not None and state is not None:
            return self._mapped(node, args, state)
        if name == "next" and args:
            return self.element_of(args[0][1])
        if name == "filter" and len(args) == 2 and args[1][1].kind == Kind.PARAMETERS:
            return args[1][1]  # `filter(lambda p: p.requires_grad, model.parameters())`
        return UNKNOWN

    def _mapped(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """``map(model, batches)``, ``map(lambda t: model(t), xs)``, ``map(helper, xs)`` of one
        iterable: the callable run on an element (a module's call, a lambda's body, a function
        of the file's summary), and an iterable of what that gives."""
        if len(args) != 2 or any(arg.star or arg.keyword is not None for arg, _ in args):
            return UNKNOWN
        (_, function), (items_arg, items) = args
        handed = ((cst.Arg(items_arg.value), self.element_of(items)),)
        if function.kind in (Kind.MODULE, Kind.CRITERION):
            output = self._call_module(function, handed)
            if self.emitting:
                # the rules see the module's call on an element (see CallEvent.runs_module)
                self.sink.on_call(CallEvent(node, None, function, None, None, handed, output, state, runs_module=args[0][0].value))
        elif function.kind == Kind.FUNCTION and isinstance(function.info, cst.Lambda):
            output = self._call_lambda(function.info, handed, state)
        elif function.kind == Kind.FUNCTION and isinstance(function.info, cst.FunctionDef):
            output = self._summarise(function.info, None, None, False, handed, state, call=node)
        else:
            return UNKNOWN
        return Value(Kind.CONTAINER, info=Homogeneous(output))

    def _label(self, node: cst.BaseExpression) -> str:
        name = dotted_name(node)
        if name is not None:
            return name
        text = self.source_of(node)
        return text if len(text) <= 40 else text[:37] + "..."


#: methods of a dict that read it and leave its entries as they are
_ITEM_READING_METHODS = frozenset({"get", "keys", "values", "items", "copy", "__getitem__", "__contains__"})


def _sequence(value: Value) -> bool:
    """A list or tuple whose elements are known (a display, or one built by appends); not a
    dict (whose Homogeneous payload has a key)."""
    info = value.info
    return value.kind == Kind.CONTAINER and (isinstance(info, tuple) or isinstance(info, Homogeneous) and info.key is None)


def _class_attribute(info: ClassInfo, attribute: str) -> Optional[Value]:
    """The tensor the body of the class (or of a base of the file, in method resolution order)
    binds to ``attribute``, if any."""
    pending = [info]
    seen: set[int] = set()
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        kept = current.class_attributes.get(attribute)
        if kept is not None:
            return kept
        if attribute in current.methods:
            return None
        pending.extend(current.bases)
    return None


def _member_class(container: Value) -> Optional[ClassInfo]:
    """The class of the file every member of a module container is of (see
    torch_semantics._members_of_one_class), if known."""
    members = container.info
    if isinstance(members, Homogeneous) and isinstance(members.element.info, ClassInfo):
        return members.element.info
    return None


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


#: builtins that iterate their arguments
_ITERATING_BUILTINS = frozenset({"enumerate", "zip", "list", "tuple", "sorted", "reversed", "iter", "next"})

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
    if isinstance(body, cst.SimpleStatementSuite):
        # `for t in ts: out.append(t.cuda())`: its small statements run in order
        for small in body.body:
            if walk.contains(small, target):
                return True
            if _contains_jump(small):
                return False
        return True
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if walk.contains(statement, target):
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


def _contains_jump(statement: cst.CSTNode) -> bool:
    """A ``continue``, ``break``, ``return`` or ``raise`` that can end an iteration early; the
    ``continue`` or ``break`` of a nested loop ends that loop's iteration, not this one's."""
    loop_jumps = _Finder(lambda node: isinstance(node, (cst.Continue, cst.Break)), skip_loops=True)
    walk.visit(statement, loop_jumps)
    if loop_jumps.found:
        return True
    exits = _Finder(lambda node: isinstance(node, (cst.Return, cst.Raise)))
    walk.visit(statement, exits)
    return exits.found


def _through_reexported_torch(qualname: str) -> str:
    """``torch.sparse.torch.eye`` is ``torch.eye``: torch's submodules ``import torch``, so the
    package is reachable through them (an old one-hot idiom spells it so)."""
    if qualname.startswith("torch.") and ".torch." in qualname:
        return "torch." + qualname.rsplit(".torch.", 1)[1]
    return qualname


def _is_super_call(node: cst.BaseExpression) -> bool:
    """``super()`` or ``super(Class, self)``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


def _dimensions_kept(elements: Sequence[cst.SubscriptElement], scalar: Optional[bool]) -> Optional[bool]:
    """Is a tensor indexed by ``elements`` known to have a dimension (``scalar`` False)? Slices
    (``:``, ``1:3``) keep every dimension they select from, ``...`` keeps the rest, and ``None``
    adds one: ``mean[:, None, None]`` of a vector is a tensor with dimensions, not a 0-dim one
    that PyTorch would let a GPU operation take. An integer or a tensor index may drop one, but
    not the one a slice beside it keeps: ``pairs[:, 0]`` is a column, a vector (the index fails
    on a tensor without that many dimensions); unknown where no slice or ``None`` is there."""
    has_dimension = False
    may_drop = False
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Slice) or is_none_literal(index.value):
            has_dimension = True
        elif not isinstance(index.value, cst.Ellipsis):
            may_drop = True
    if has_dimension:
        return False
    if may_drop:
        return None
    return False if scalar is False else None


def _literal_key(node: cst.BaseExpression) -> Optional[str]:
    """``"device"`` for the key ``"device"`` of a dict display; None for any other key."""
    if not isinstance(node, cst.SimpleString):
        return None
    try:
        key = string_value(node)
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None


def _moved_object_of_unknown_kind(value: Value) -> bool:
    """A value of unknown kind that ``.to(device)`` (or the like) put where an accelerator may be."""
    return value.kind == Kind.UNKNOWN and value.is_bare and value.device is not None and value.device.may_be_accelerator


def _on_module_device(value: Value, device: Optional[Device], depth: int = 0) -> Value:
    """What a module's ``forward``, summarised, returned, as its caller sees it: what it put on
    the model's device (its weights' outputs) is where the caller's module is; entries at
    constant keys (nested dicts too) likewise."""
    if value.device == MODEL_DEVICE and device != MODEL_DEVICE:
        value = replace(value, device=device)
    if value.fields and depth < 3:
        value = replace(value, fields=tuple((name, _on_module_device(entry, device, depth + 1)) for name, entry in value.fields))
    return value
