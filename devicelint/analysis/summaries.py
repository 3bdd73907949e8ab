"""The file's own functions and classes, seen from the code that uses them.

* the order functions are analysed in (callers before callees) and the state each one starts
  from: its callers' arguments, its annotations, the parameters its body uses as tensors, and
  for a method the ``self.*`` attributes ``__init__`` left;
* summaries of calls of helpers and methods of the file: the body run silently on the caller's
  arguments (see devicelint.analysis.helpers), and what the callee may do to a module handed
  to it;
* what instantiating a class of the file gives: a model that owns parameters starts on the CPU.

What a body does with its parameters (used as tensors, as modules, read by numpy) is
devicelint.analysis.parameter_uses, a base of ``Summaries``.

``Summaries`` is a mixin of devicelint.analysis.flow.FlowAnalyzer: it uses the interpreter's
``eval``/``exec_block``/``qualname_of``/``_running`` and the state FlowAnalyzer.__init__ sets up.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter

import re
from dataclasses import replace
from typing import Callable, Iterator, Optional

import libcst as cst

from devicelint.analysis import checkpoint_loads, constructions, helpers
from devicelint.analysis.combined_inputs import combined_parameter_pairs
from devicelint.analysis.host_reads import method_finder
from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.facts import ClassInfo, CriterionInfo, ModuleConstruction, SiteCall
from devicelint.analysis.names import (
    OwnScopeVisitor,
    dotted_name,
    has_decorator,
    is_static_or_class_method,
    keyword_arg,
    own_scope_calls,
    parameter_names,
    string_value,
)
from devicelint.analysis.parameter_uses import ParameterUses, input_device
from devicelint.analysis.state import DEFAULT_DEVICE_KEY, State, join_states
from devicelint.analysis.torch_semantics import (
    MODULE_ANNOTATIONS,
    TENSOR_ANNOTATIONS,
    is_model_factory,
    spelled,
)
from devicelint.analysis.values import CPU, MODEL_DEVICE, UNKNOWN, Device, Homogeneous, Kind, Origin, Provenance, Role, TensorOrNone, Value, follows, is_none_literal, join, may_hold_accelerator_tensor

#: how far down the queue a function that waits for its callers is looked for
_PENDING_LOOKAHEAD = 200
#: passes of one call site (see Summaries._specialise_by_call_site): at most this many per
#: function beyond its joined analysis, this many per file, and only for bodies up to this
#: many characters
_CALL_SITE_PASSES_PER_FUNCTION = 3
_CALL_SITE_PASSES_PER_FILE = 12
_CALL_SITE_BODY_LIMIT = 6000
#: identifiers, and the names ``def`` gives (see Summaries._init_only_helpers)
_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINED = re.compile(r"\bdef\s+([A-Za-z_]\w*)")
#: `class Name` and `super(Name`: where a class's name is neither a call of it nor a use of it
#: a property's getter (``@property`` then ``def name``)
_PROPERTY = re.compile(r"@property\s+(?:async\s+)?def\s+([A-Za-z_]\w*)")
_CLASS_OR_SUPER = re.compile(r"\bclass\s+([A-Za-z_]\w*)|\bsuper\(\s*([A-Za-z_]\w*)")
#: ``name(`` or ``.name(``, not ``def name(``
_CALLED_NAME = re.compile(r"(?<!def )(?<!class )(?<![\w])([A-Za-z_]\w*)\s*\(")
#: methods through which a module is not called on inputs as ``forward`` is: ``forward`` and
#: ``__call__`` themselves (the module's call), construction, and nn.Module's own methods,
#: which the analysis models whatever a class of the file defines under their names
_MODULE_CALL_METHODS = api.MOVE_METHODS | frozenset(
    "forward __call__ __init__ train eval parameters named_parameters buffers named_buffers modules named_modules "
    "children named_children state_dict load_state_dict apply zero_grad requires_grad_ share_memory register_buffer "
    "register_parameter register_module add_module extra_repr half float double bfloat16 type".split()
)
#: text that says a class places its tensors itself
_PLACEMENT_TEXT = re.compile(r"\.to\(|\.cuda\(|device")
#: torch functions that turn data (a list, an array) into a tensor on the host, unless told a device
_HOST_CONVERSIONS = frozenset({"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.from_numpy"})
#: what follows ``self.x`` when it is moved or converted to another tensor's device at once:
#: a chain of simple calls (``.detach()``, ``.float()``) ending in ``.to(``/``.cuda(``/``.type_as(``,
#: maybe after an element read whose index is brought to the host first (``self.logvar[t.cpu()]``):
#: the host table is indexed on the host and the result moved
MOVED_AT_ONCE = re.compile(r"(\[[^\[\]]*\.cpu\(\)\s*\])?(\.\w+\([^()]*\))*\.(to|cuda|type_as)\(")


class Summaries(ParameterUses):
    """Functions and classes of the file: their analysis order, starting states and call
    summaries (mixed into FlowAnalyzer)."""

    # ------------------------------------------------------------------ analysis order and starting states

    def _next_pending(self) -> int:
        """Callers before callees: a free function with parameters waits until something calls
        it (or nothing else is left), so that its analysis starts from its callers' arguments -
        the model and the loader handed to ``evaluate(model, loader, device)``."""
        for index, (function, class_info, enclosing) in enumerate(self._pending[:_PENDING_LOOKAHEAD]):
            if enclosing is not None or function in self._call_sites:
                if self._waits_for_own_init(function, class_info):
                    continue
                return index
            if class_info is not None and function.name.value == "__init__" and not self._waits_for_construction(function, class_info):
                return index  # the other methods see the attributes it sets
            if not _has_arguments(function, class_info is not None) and not self._waits_for_attributes(function, class_info):
                if self._waits_for_own_init(function, class_info):
                    continue  # `__iter__` of a batch wrapper: it reads what its constructions kept
                return index
        # everything left waits for callers: start with one nothing in the file calls by name
        # (``forward``, an entry point), so that the helpers it calls see its arguments
        called = self.called_names()
        for index, (function, class_info, _) in enumerate(self._pending[:_PENDING_LOOKAHEAD]):
            if function.name.value not in called and not (
                class_info is not None and function.name.value == "__init__" and self._waits_for_construction(function, class_info)
            ) and not self._waits_for_injection(function, class_info):
                return index
        for index, (function, _, _) in enumerate(self._pending[:_PENDING_LOOKAHEAD]):
            if function.name.value not in called:
                return index
        return 0

    def _waits_for_own_init(self, method: cst.FunctionDef, class_info: Optional[ClassInfo]) -> bool:
        """Does a method of a plain class, already called, wait for the ``__init__`` of its class
        (or of a base) that waits for the code building its objects, so that it sees the
        attributes those constructions give (``self.scale`` set from ``super().__init__(config)``)?"""
        if class_info is None or class_info.is_module or class_info.is_dataset or method.name.value == "__init__":
            return False
        if is_static_or_class_method(method) or self._attributes_ready(class_info):
            return False
        return any(
            not owner.init_analysed and not owner.is_module and "__init__" in owner.methods
            for owner in (class_info, *class_info.ancestors())
        )

    def _waits_for_attributes(self, method: cst.FunctionDef, class_info: Optional[ClassInfo]) -> bool:
        """Does a method without arguments (``self.forward()`` in ``optimize_parameters``) wait for
        the methods of the file that call it by name? They may carry the attributes other
        methods of its class set (see _attributes_set_by_caller), which its analysis starts
        from."""
        if class_info is None or method.name.value == "__init__" or is_static_or_class_method(method):
            return False
        return method.name.value in self.called_names() and bool(self._written_elsewhere(class_info))

    def _waits_for_injection(self, method: cst.FunctionDef, class_info: Optional[ClassInfo]) -> bool:
        """Does a method of a module class whose ``__init__`` keeps constructor arguments (see
        kept_arguments) wait for the constructions of the class that the file's text makes and
        the analysis has not met yet (``build(device)`` at the end of the file)? What they hand
        in says which modules those attributes hold (see _injected_modules)."""
        if class_info is None or not class_info.is_module or method.name.value == "__init__":
            return False
        return any(self._awaits_constructions(owner) for owner in (class_info, *class_info.ancestors()))

    def _awaits_constructions(self, info: ClassInfo) -> bool:
        seen = len(self.facts.module_constructions)
        memo = self._awaiting.get(info)
        if memo is not None and memo[0] == seen:
            return memo[1]
        awaits = False
        init = info.methods.get("__init__")
        if init is not None and self.kept_arguments(info):
            counts = [self._calls_in_text(other) for other in (info, *self.subclasses_of(info))]
            if -1 not in counts:
                met = sum(1 for built in self.facts.module_constructions.values() if built.init is init)
                awaits = met < sum(counts)
        self._awaiting[info] = (seen, awaits)
        return awaits

    def _waits_for_construction(self, init: cst.FunctionDef, class_info: ClassInfo) -> bool:
        """Does a plain class's ``__init__`` wait for the code that builds its objects (see
        _note_construction)? Only where that code is in the file and has not run yet."""
        if class_info.is_module or class_info.is_dataset or not _has_arguments(init, True):
            return False
        # an object of a subclass of the file built too: its `super().__init__(...)` calls it
        return class_info.name in self.called_names() or class_info in self._bases_of_built_classes()

    def _bases_of_built_classes(self) -> frozenset[ClassInfo]:
        """The file's classes that a class the file builds by name derives from (computed once
        the file's classes are known, again if more appear)."""
        known, bases = self._built_bases
        if known != len(self._classes):
            called = self.called_names()
            bases = frozenset(base for info in self._classes if info.name in called for base in info.ancestors())
            self._built_bases = (len(self._classes), bases)
        return bases

    def called_names(self) -> frozenset[str]:
        """Names the file calls, as ``name(`` or ``.name(`` (computed once)."""
        if self._called is None:
            self._called = frozenset(self._called_counts())
        return self._called

    def _called_counts(self) -> Counter[str]:
        """How many times the file calls each name, as ``name(`` or ``.name(`` (computed once)."""
        if self._called_count is None:
            self._called_count = Counter(_CALLED_NAME.findall(self._file_text()))
        return self._called_count

    def _file_word_counts(self) -> tuple[Counter[str], Counter[str]]:
        """The identifiers of the file's text, counted, with the names it defines with ``def``
        (computed once)."""
        if self._word_counts is None:
            text = self._file_text()
            self._word_counts = (Counter(_WORD.findall(text)), Counter(_DEFINED.findall(text)))
        return self._word_counts

    def property_names(self) -> frozenset[str]:
        """The names the file defines as properties (computed once)."""
        if self._property_names is None:
            self._property_names = frozenset(_PROPERTY.findall(self._file_text()))
        return self._property_names

    def property_accessors(
        self, node: cst.Attribute, state: State
    ) -> Optional[tuple[Optional[cst.FunctionDef], Optional[cst.FunctionDef], ClassInfo, Value]]:
        """``obj.name`` where ``name`` is a property of the class of ``obj`` defined in this file
        (``@property def name(self)``, ``@name.setter``): its getter and setter (either may be
        missing), the class defining them, and ``obj``'s value; None for anything else."""
        name = node.attr.value
        if name not in self.property_names():
            return None
        owner_value = self.eval(node.value, state)
        info = owner_value.info
        if not isinstance(info, ClassInfo) or owner_value.kind == Kind.CLASS:
            return None
        for cls in [info, *info.ancestors()]:
            getter = setter = None
            for line in cls.node.body.body:
                if isinstance(line, cst.FunctionDef) and line.name.value == name:
                    if has_decorator(line, "property"):
                        getter = line
                    elif has_decorator(line, f"{name}.setter"):
                        setter = line
            if getter is not None or setter is not None:
                return getter, setter, cls, owner_value
        return None

    def reads_a_property(self, node: cst.BaseExpression, state: State) -> bool:
        """Is ``node`` (``self.dummy_sample``) a read of a property of a class of the file: a call
        of its getter each time, not a stored value?"""
        return isinstance(node, cst.Attribute) and self.property_accessors(node, state) is not None

    def run_setter(
        self,
        setter: cst.FunctionDef,
        owner: ClassInfo,
        receiver: Value,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
        receiver_key: Optional[str],
    ) -> None:
        """``obj.name = value`` of a property: its setter runs on ``value`` and leaves its
        attributes on the object (``obj._name``), as a method call would."""
        carried = self._attributes_set_by_caller(owner, receiver_key, state)
        self._summarise(setter, owner, receiver, True, args, state, carried)
        if receiver_key is not None and not self._take_what_it_leaves(setter, owner, receiver, args, state, receiver_key, carried):
            self._forget_what_it_writes(setter, receiver_key, state)

    def _host_module_never_moved(self, class_info: ClassInfo, attribute: str, value: Value) -> bool:
        """``self.metric = Metric()`` left on the host by the ``__init__`` of a plain class of the
        file (not an ``nn.Module``: a move of whatever owns its objects does not reach it), built
        there or by the code that builds the object (``Trainer(model=Net())``): does it stay
        there for the class's other methods? Only where the file's text can move it by no path
        at all: every ``.<attribute>`` in the file is called, assigned on ``self`` or has an
        attribute other than a move read (never handed on, put in a container or moved), so is
        every use of the name the caller bound it to (see _name_never_moved), the class has no
        ``to()``/``cuda()`` or ``__getattr__`` of its own, and the file never walks an object's
        ``__dict__``/``vars()`` nor sets or gets attributes by name. A module put on the host
        by a move is left alone: that is deliberate (offloading)."""
        if value.kind not in (Kind.MODULE, Kind.CRITERION) or value.device is None or not value.device.is_cpu or value.origin is None:
            return False
        if not value.origin.created:
            return False
        if self._current_home is not None or any(method in self._foreign_home for method in class_info.methods.values()):
            return False  # a class of another module of the project: this file's text says nothing of who moves it
        if not _plain_all_the_way(class_info):
            return False  # a base the analysis cannot see may be a module, or move what it keeps
        memo = self._host_modules_never_moved
        key = (class_info.node, attribute, value.origin.node)
        if key not in memo:
            memo[key] = self._nothing_in_the_text_moves(class_info, attribute, value)
        return memo[key]

    def _nothing_in_the_text_moves(self, class_info: ClassInfo, attribute: str, value: Value) -> bool:
        """See _host_module_never_moved."""
        assert value.origin is not None
        if any(class_info.find_method(method) is not None for method in ("to", "cuda", "__getattr__", "__setattr__")):
            return False
        text = self._file_text()
        if "__dict__" in text or "vars(" in text or "setattr(" in text or "getattr(" in text:
            return False
        if not any(walk.contains(info.node, value.origin.node) for info in (class_info, *class_info.bases)):
            # a module handed to the constructor: built on the host by the code that builds the
            # object (never a move to the CPU, which is deliberate), and never moved by name
            outside = text.replace(self.source_of(class_info.node), "")  # the class's own uses of its parameter
            if not _name_never_moved(outside, self.source_of(value.origin.node), class_info.name):
                return False
        for match in re.finditer(r"\.%s\b" % re.escape(attribute), text):
            rest = text[match.end():match.end() + 40]
            if rest.startswith("("):
                continue
            follower = re.match(r"\s*\.\s*([A-Za-z_]\w*)", rest)
            if follower is not None:
                if follower.group(1) in _HOST_MODULE_MOVES:
                    return False
                continue
            if re.match(r"\s*=(?!=)", rest) and text[max(0, match.start() - 4):match.start()] == "self":
                continue  # the class's own store (what other methods store is _written_elsewhere's)
            return False
        return True

    def _file_text(self) -> str:
        """The module's source: as read, or generated from the tree where none was given."""
        return self.text if self.text is not None else self.source_of(self.module)

    def tensor_parameter_value(self, name: str) -> Optional[Value]:
        """What a parameter of the function being analysed is once its use shows it is a
        tensor: in a module's method (not ``__init__``) it follows the model, in a free function
        it is where the caller put it; None where ``name`` is not such a parameter."""
        context = self.function_stack[-1] if self.function_stack else None
        function = context.node if context is not None else None
        if function is None:
            return None
        if name not in parameter_names(function):
            return None
        info = context.class_info
        in_module = info is not None and info.is_module and function.name.value != "__init__" and not is_static_or_class_method(function)
        return Value(Kind.TENSOR, input_device(name, in_module, placed_by_caller=info is None))

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
                if _is_informative(value):
                    bound[name] = value
        # a parameter every call leaves to its default has that default (`device=None`, then
        # `self.device = device if device is not None else ...` takes the other arm); not a
        # string, which may name a device (`device="cpu"`) that other callers choose otherwise
        params = function.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            if param.default is not None and all(name not in site for site in sites if site is not None):
                if is_none_literal(param.default):
                    bound[name] = Value(Kind.NUMBER, role=Role.NONE_DEFAULT)
                    continue
                default = self.eval(param.default, self.home_state(function))
                if default.kind in (Kind.NUMBER, Kind.TENSOR) or default.kind == Kind.REF and default.qualname is not None:
                    # (a tensor default is made once, where the `def` runs: `mask=torch.ones(4)`)
                    bound[name] = default
        return bound

    def is_tensor_parameter(self, param: cst.Param) -> bool:
        """Is the parameter annotated ``torch.Tensor`` (or ``nn.Parameter``)?"""
        if param.annotation is None or param.star in ("*", "**"):
            return False
        return self.qualname_of(param.annotation.annotation, self.module_state) in TENSOR_ANNOTATIONS

    def _parameter_value(self, param: cst.Param) -> Value:
        """A parameter annotated ``torch.Tensor`` is a tensor on a device nobody knows here; one
        annotated ``nn.Module`` (or a module class of the file) is a module the caller placed."""
        if param.annotation is None or param.star in ("*", "**"):
            return UNKNOWN
        if self.is_tensor_parameter(param):
            return Value(Kind.TENSOR)
        return self._annotated_value(param.annotation.annotation, param)

    def _annotated_value(self, written: cst.BaseExpression, origin_node: cst.CSTNode) -> Value:
        """What an annotation says a value is (see _parameter_value); UNKNOWN where it says
        nothing the analysis uses."""
        annotation = _without_optional(written, self._qualname_in_module)
        if self._qualname_in_module(annotation) in TENSOR_ANNOTATIONS:
            return Value(Kind.TENSOR)  # `Optional[torch.Tensor]`: a tensor where it is one
        element = _element_annotation(annotation, self._qualname_in_module)
        if element is not None and self._qualname_in_module(element) in TENSOR_ANNOTATIONS:
            # `Tuple[torch.Tensor, ...]`, `List[torch.Tensor]`: a sequence of tensors
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.TENSOR)))
        qualname = self.qualname_of(annotation, self.module_state)
        if qualname in MODULE_ANNOTATIONS:
            return Value(Kind.MODULE)
        if qualname in api.DATALOADER_NAMES:
            # batches of a DataLoader are collated on the host
            return Value(Kind.LOADER, CPU, Origin(origin_node, "loader", provenance=Provenance.LOADER))
        if isinstance(annotation, cst.Name):
            known = self.module_state.get(annotation.value)
            if known is not None and known.kind == Kind.CLASS and known.info.is_module:
                return Value(Kind.MODULE, info=known.info)
        return UNKNOWN

    def _qualname_in_module(self, node: cst.BaseExpression) -> Optional[str]:
        return self.qualname_of(node, self.module_state)

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
        # a module's constructor takes configuration: its tensors are wherever the caller built
        # them, not on the model's device
        in_module = self_value.kind == Kind.MODULE and self_value.device is MODEL_DEVICE and function.name.value != "__init__"
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            if param is self_param:
                state[name] = self_value
                if attributes_of is not None:
                    for attribute, value in self._attributes_seen_by_methods(attributes_of, function).items():
                        if not attributes_of.is_module and self._host_module_never_moved(attributes_of, attribute, value):
                            state[f"{name}.{attribute}"] = value  # nothing in the file can move it: it stays on the host
                            continue
                        state[f"{name}.{attribute}"] = _as_seen_from_method(value, self.model_device(attributes_of) if attributes_of.is_module else None)
                    prefix = name + "."
                    for key, value in bound.items():
                        if key.startswith(prefix):
                            state[key] = value  # what every caller on the same object left there
            elif name in bound:
                state[name] = bound[name]
                prefix = name + "."
                for key, value in bound.items():
                    if key.startswith(prefix):
                        state[key] = value  # a module every caller placed on the object it hands (see _objects_placed_by_caller)
            elif use_defaults and param.default is not None:
                state[name] = self.eval(param.default, self.module_state)
            elif param.default is not None and self.qualname_of(param.default, self.module_state) in api.FACTORIES:
                # `window_fn=torch.hann_window`: a factory handed as a callable, which the
                # callers that leave it out get
                state[name] = self.eval(param.default, self.module_state)
            else:
                value = self._parameter_value(param)
                if value.kind == Kind.UNKNOWN and name in self._tensor_uses(function, in_module)[0]:
                    value = Value(Kind.TENSOR)
                elif value.kind == Kind.UNKNOWN and self_param is None and name in self._module_uses(function):
                    # a model handed to a free function: like a tensor argument, wherever its caller put it
                    value = Value(Kind.MODULE, follows(name, argument=True), Origin(param, f"handed to `{function.name.value}()`"))
                if value.kind == Kind.TENSOR and value.device is None:
                    value = Value(Kind.TENSOR, input_device(name, in_module, placed_by_caller=self_param is None), info=value.info)
                state[name] = value
        for param in (params.star_arg, params.star_kwarg):
            if isinstance(param, cst.Param):
                # `*args` / `**kwargs`: the extra arguments every caller handed, where known
                state[param.name.value] = bound.get(param.name.value, UNKNOWN)
        if not bound:
            for dotted in self._tensor_uses(function, in_module)[1]:
                root = dotted.split(".", 1)[0]
                if state.get(root, UNKNOWN).kind != Kind.UNKNOWN or dotted in state or (self_param is not None and root == self_param.name.value):
                    continue
                # `state.masses.unsqueeze(-1)`: a tensor the argument object carries
                state[dotted] = Value(Kind.TENSOR, input_device(dotted, in_module, placed_by_caller=True))
        return state

    def _analyse_function(self, node: cst.FunctionDef, class_info: Optional[ClassInfo], enclosing: Optional[State]) -> None:
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg]:
            if isinstance(param, cst.Param) and param.default is not None:
                self.eval(param.default, self.module_state)
        # a nested function's free names come from the function around it, its parameters from
        # the calls the file makes of it - also where the function around it returns it as a
        # closure (`validate = make_validate_fnc(model)`, then `validate(X_test)`)
        bound = self._bound_by_callers(node)
        self._analysed_as[node] = (class_info, enclosing, bound)
        sites = self._call_sites.get(node) or ()
        if len({_values_given(site) for site in sites}) > 1 or any(_literal(value) is not None for value in bound.values()):
            self._joined_differing_calls.add(node)
        state, self_param = self._run_own_analysis(node, class_info, enclosing, bound)
        self.function_states[node] = state
        if class_info is not None and node.name.value == "__init__" and self_param is not None:
            prefix = self_param.name.value + "."
            for key, value in state.items():
                if key.startswith(prefix) and "." not in key[len(prefix):]:
                    class_info.attributes[key[len(prefix):]] = value
            class_info.init_analysed = True

    def _run_own_analysis(
        self, node: cst.FunctionDef, class_info: Optional[ClassInfo], enclosing: Optional[State], bound: dict[str, Value]
    ) -> tuple[State, Optional[cst.Param]]:
        """A reporting pass over the function's body, its parameters bound to ``bound``: the
        state it leaves, and its ``self`` parameter (None for a free function)."""
        params = node.params
        positional = [*params.posonly_params, *params.params]
        is_method = class_info is not None and not is_static_or_class_method(node)
        self_param = positional[0] if is_method and positional else None
        self_value = UNKNOWN
        attributes_of = None
        if self_param is not None and class_info is not None:
            if class_info.is_module:
                self_value = Value(Kind.MODULE, self.model_device(class_info), info=class_info)
            else:
                self_value = Value(Kind.UNKNOWN, info=class_info)
            attributes_of = class_info if node.name.value != "__init__" else None
        state = self._parameter_state(node, self_param, self_value, attributes_of, bound, use_defaults=False)
        default = self._callers_default(node)
        if default is not None:
            state[DEFAULT_DEVICE_KEY] = default
        if self.call_context is None and self_param is not None and class_info is not None and class_info.is_module and node.name.value == "forward":
            names = [param.name.value for param in [*params.posonly_params, *params.params, *params.kwonly_params] if param is not self_param]
            self._forward_parameters_assumed[node] = {name: state[name] for name in names if name in state}
        if enclosing is not None:
            enclosing = self._enclosing_state(node, enclosing)
        with self._running(node, class_info, enclosing):
            self.exec_block(helpers.body_statements(node), state)
        return state, self_param

    def _callers_default(self, function: cst.FunctionDef) -> Optional[Value]:
        """The default device every call of ``function`` the file makes runs it under
        (``torch.set_default_device("cuda")`` before ``model.fit(x)``: the factories and
        samplers of ``fit`` make their tensors there): that device, where every call the
        analysis noted had one, the same, that may be an accelerator; None otherwise."""
        defaults = self._call_defaults.get(function)
        sites = self._call_sites.get(function)
        if not defaults or not sites or len(defaults) != len(sites) or any(default is None for default in defaults):
            return None
        first = defaults[0]
        assert first is not None
        if first.device is None or not first.device.may_be_accelerator or any(default.device != first.device for default in defaults if default is not None):
            return None
        return first

    def default_device_at(self, state: State) -> Optional[Value]:
        """The default device factories use where ``state`` holds (``torch.set_default_device``,
        ``with torch.device(...)``, or the one every caller runs the function under)."""
        return self._default_device(state)

    def _specialise_by_call_site(self) -> None:
        """A function whose calls hand it values placed differently - one a model moved to the
        run's device, another one rebuilt on the CPU; one a host tensor, another a moved one -
        starts its analysis from their join, which keeps the accelerator and forgets the host
        (or forgets both): inside it the rules cannot see the call that mixes devices. Once every
        function has had its analysis, such a function gets one more reporting pass per call
        that binds a parameter placed otherwise than that analysis started from (a few per
        function and per file; small functions only). These passes tell only the rules that
        weigh where values are (Rule.follows_call_sites), their findings name the call, and
        they leave the function's state, the file's facts and the class's attributes as the
        joined pass left them. The calls such a pass makes are call sites too: a host tensor
        handed down a chain of helpers is followed to where it meets the model."""
        passes_left = _CALL_SITE_PASSES_PER_FILE
        tried: dict[cst.FunctionDef, set[frozenset]] = {}
        looked_at: dict[cst.FunctionDef, int] = {}
        progress = True
        while progress and passes_left > 0:
            progress = False
            for function in list(self._site_calls):
                analysed = self._analysed_as.get(function)
                if analysed is None:
                    continue
                class_info, enclosing, joined = analysed
                if function.name.value == "__init__" and not (class_info is not None and class_info.is_module):
                    continue  # a plain class's constructor waits for its constructions, which its analysis joins
                assumed = self._forward_parameters_assumed.get(function)
                if assumed is not None:
                    joined = {**assumed, **joined}  # a module's `forward`: its inputs as its own analysis took them
                placements = tried.setdefault(function, {_placements(joined)})
                sites = self._site_calls[function]
                start = looked_at.get(function, 0)
                looked_at[function] = len(sites)
                for call, site, mixed, assumed_in, _, _ in sites[start:]:
                    if passes_left <= 0 or len(placements) > _CALL_SITE_PASSES_PER_FUNCTION:
                        break
                    if mixed:
                        continue  # made where calls that disagree were joined: no one call's values
                    if assumed_in is not None and self._inputs_handed_otherwise(assumed_in):
                        continue  # made on what a `forward` assumed of inputs its calls hand otherwise
                    bound = _informative(site)
                    for name, default in self._defaults_left(function, site).items():
                        if default.kind == Kind.FUNCTION:
                            bound[name] = default  # a callback left to its default, which calls handing others do not run
                    key = _placements(bound)
                    if key in placements or not _placed_otherwise(bound, joined):
                        continue
                    if len(self._body_text(function)) > _CALL_SITE_BODY_LIMIT:
                        break  # a large body costs too much to run again
                    placements.add(key)
                    passes_left -= 1
                    progress = True
                    self._run_at_call_site(function, class_info, enclosing, site, call)

    def note_module_call(self, node: cst.Call, module: Value, args: tuple[tuple[cst.Arg, Value], ...]) -> None:
        """``self.encoder(x, lengths)``, ``model(batch)``: a call of a module of a class of the
        file runs that class's ``forward`` on the call's values. Its own analysis takes its
        inputs to be on the model's device (or of unknown kind, where its body does not use
        them as tensors); a call of a module that may be on an accelerator that hands it values
        placed otherwise - a GPU ``lengths`` tensor the body hands to ``pack_padded_sequence``,
        a list of host tensors - gets a reporting pass of its own on them (see
        _specialise_by_call_site), whose findings name the call. An input on another device
        than the module is the call's own mismatch, which the rules report there: the pass
        keeps that parameter as the ``forward``'s own analysis took it."""
        device = module.device
        # a module with no parameters, buffers or submodules (a parameter-free loss) computes
        # where its inputs are: a call's placed inputs are what its `forward` runs on
        holds_nothing = device is None and self._holds_nothing(module)
        if not holds_nothing and (device is None or device.is_cpu or device.argument or not device.may_be_accelerator):
            return  # a model on the host, or wherever a caller put it: its inputs may well be there
        forward = self._own_forward(module)
        if forward is None:
            return
        site = helpers.bind_arguments(forward, args, True)
        if site is None:
            return
        if holds_nothing:
            if any(value.is_tensor_like and value.device is not None for value in site[1].values()):
                self._record_site_call(forward, node, dict(site[1]))
            return
        self._forward_inputs_handed.setdefault(forward, []).append(site[1])
        handed = {name: UNKNOWN if _input_mismatch(value, device) else value for name, value in site[1].items()}
        self._record_site_call(forward, node, handed)

    def _holds_nothing(self, module: Value) -> bool:
        """A module of a class the analysis has read that creates no weights and keeps no module
        handed to it (see _holds_no_modules)."""
        info = module.info
        return isinstance(info, ClassInfo) and info.is_module and not info.framework_placed and not self._owns_parameters(info) and self._holds_no_modules(info)

    def _record_site_call(self, function: cst.FunctionDef, call: cst.Call, handed: dict[str, Value]) -> None:
        """Remember a call the reporting pass under way makes of ``function`` with what it hands
        it (see _specialise_by_call_site): whether the function making it joined calls that
        disagree, and whether it is a module's ``forward`` in its own analysis, which took its
        inputs to be on the model's device - an assumption, not what its callers hand it."""
        caller = self.current_function.node
        own_analysis = self.call_context is None and caller is not None
        mixed = own_analysis and caller in self._joined_differing_calls
        assumed_in = caller if own_analysis and caller in self._forward_parameters_assumed else None
        self._site_calls.setdefault(function, []).append(
            SiteCall(call, handed, mixed, assumed_in, caller, self.current_function.class_info if caller is not None else None)
        )

    def sole_call_of(self, function: cst.FunctionDef) -> Optional[cst.Call]:
        """The one call the file makes of ``function``, where its analysis starts from what
        that call hands it (see _bound_by_callers): that call; None where there are several,
        none, or one the analysis could not bind."""
        sites = self._call_sites.get(function)
        calls = self._site_calls.get(function)
        if not sites or len(sites) != 1 or sites[0] is None or not calls or len(calls) != 1:
            return None
        return calls[0].call

    def sole_caller_class(self, function: cst.FunctionDef) -> Optional[ClassInfo]:
        """The class whose method makes the one call the file makes of ``function`` (see
        sole_call_of), where that is a method's call; None otherwise."""
        site = self._site_call_of(function, None)
        return site.caller_class if site is not None and site.caller is not None else None

    def _site_call_of(self, function: cst.FunctionDef, call: Optional[cst.Call]) -> Optional[SiteCall]:
        """The noted call of ``function`` that is ``call``, or where ``call`` is None, the one
        call the file makes of it (see sole_call_of); None where there is no such call."""
        if call is None:
            call = self.sole_call_of(function)
        if call is None:
            return None
        return next((site for site in self._site_calls.get(function, ()) if site.call is call), None)

    def model_input_hand_off(
        self, function: cst.FunctionDef, expression: cst.BaseExpression, value: Value
    ) -> Optional[tuple[cst.Call, cst.Arg, cst.FunctionDef, str]]:
        """A host tensor that came into the model through one of its own methods - handed by a
        caller outside the class to ``model.predict(batch)``, which hands it on within the
        model (``self.score(batch)``) to the method being analysed, ``function``, where
        ``expression`` reads it as it came in (``batch[:, 0]``): the call in that entry method
        that hands it on, the argument it is there, the entry method and its parameter. The
        model is called on it from outside through that entry, which holds the device (the
        model's own): the move belongs there, where the input enters the model's computation,
        not where a layer deep inside meets it, and not at the caller of a method the model
        offers for inputs. None where ``function`` is not a method of a module class reached
        by a call on ``self`` from another method of it that hands on its own parameter (a
        method called only from outside the class, or from ``forward``, whose callers are
        held to move the inputs), for a value not on the host, and for one made in the model's
        methods or by a device-less factory of a function (DL202's, DL103's)."""
        if value.kind not in (Kind.TENSOR, Kind.BATCH) or value.device is None or not value.device.is_cpu:
            return None
        if value.origin is None or value.scalar is True:
            return None
        made = self.device_less_factory(value)
        if made is not None and made[2] is not None and not value.origin.from_data:
            return None
        hand_off: Optional[tuple[cst.Call, cst.Arg]] = None
        current, read, call = function, expression, self.call_context
        seen: set[int] = set()
        while True:
            analysed = self._analysed_as.get(current)
            if not _model_method(current, analysed[0] if analysed is not None else None):
                return None
            parameter = helpers.parameter_read_through(current, read)
            if parameter is None or walk.contains(current, value.origin.node):
                return None  # not what came in: made (or moved) here
            seen.add(id(current))
            site = self._site_call_of(current, call)
            if site is None or site.caller is None or id(site.caller) in seen or not _model_method(site.caller, site.caller_class):
                break
            receiver = _first_parameter(site.caller)
            func = site.call.func
            if receiver is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == receiver):
                break  # not a call the model makes of its own method
            names = helpers.argument_parameters(current, tuple((arg, UNKNOWN) for arg in site.call.args), True)
            handed = [arg for arg, name in zip(site.call.args, names) if name == parameter and not arg.star]
            if len(handed) != 1:
                break
            hand_off = (site.call, handed[0])
            current, read, call = site.caller, handed[0].value, None
        if hand_off is None:
            return None
        return hand_off[0], hand_off[1], current, parameter

    def _inputs_handed_otherwise(self, forward: cst.FunctionDef) -> bool:
        """Does a call of the file of a module whose ``forward`` this is hand it an input placed
        otherwise than its own analysis took it (``lfa(coords, x)`` with ``coords`` moved to the
        host, where the analysis of ``forward`` took ``coords`` to be on the model's device)?
        Then the calls that ``forward`` makes in its own analysis mix an assumption about that
        input with facts: the passes of ``forward`` on its callers' values make them instead."""
        assumed = self._forward_parameters_assumed.get(forward, {})
        for handed in self._forward_inputs_handed.get(forward, ()):
            for name, value in handed.items():
                where = _placement(value)[1]
                if where is not None and name in assumed and where != _placement(assumed[name])[1]:
                    return True
        return False

    def _own_forward(self, module: Value) -> Optional[cst.FunctionDef]:
        """The ``forward`` of a module of a class of this file (not another module's, whose
        findings could not be reported here; not one a subclass of the file overrides)."""
        info = module.info
        if not isinstance(info, ClassInfo) or not info.is_module:
            return None
        found = info.find_method("forward")
        if found is None or self.foreign_home(found[0]) is not None or self._overridden_below(info, "forward"):
            return None
        return found[0]

    def returns_mapping_literal(self, function: cst.FunctionDef) -> bool:
        """Does every ``return`` of ``function`` give a dict written out (``return {"loss": loss}``)?"""
        memo = self.function_memo(function, self._mapping_returners, "mapping returners")
        found = memo.get(function)
        if found is None:
            finder = _ReturnFinder()
            walk.visit(function.body, finder)
            found = memo[function] = bool(finder.values) and all(isinstance(value, cst.Dict) for value in finder.values)
        return found

    def _defaults_left(self, function: cst.FunctionDef, site: dict[str, Value]) -> dict[str, Value]:
        """The defaults of the parameters one call leaves out (``output_type="np"``): what that
        call runs the function on, where they tell more than its body does."""
        params = function.params
        left: dict[str, Value] = {}
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None and param.name.value not in site:
                value = self.eval(param.default, self.module_state)
                if _is_informative(value):
                    left[param.name.value] = value
        return left

    def _run_at_call_site(
        self,
        function: cst.FunctionDef,
        class_info: Optional[ClassInfo],
        enclosing: Optional[State],
        site: dict[str, Value],
        call: cst.Call,
    ) -> None:
        """One reporting pass of ``function`` on what ``call`` hands it (``site``; see
        _specialise_by_call_site); what the joined pass left is kept."""
        bound = _informative(site)
        saved_facts = self.facts.snapshot()
        saved_writes = self.attribute_writes.pop(function, None)
        self.call_context = call
        try:
            self._run_own_analysis(function, class_info, enclosing, {**self._defaults_left(function, site), **bound})
        finally:
            self.call_context = None
            self.facts.restore(saved_facts)
            if saved_writes is not None:
                self.attribute_writes[function] = saved_writes
            else:
                self.attribute_writes.pop(function, None)

    def _enclosing_state(self, nested: cst.FunctionDef, at_definition: State) -> State:
        """The names of the function around ``nested`` as its body sees them: a closure reads
        them when it is called - after its definition, up to the end of that function (or
        later, once returned) - so each is what it was at the definition joined with what it
        is at the end (``m.to(device)`` after ``def _run(x): return m(x)`` moves the ``m`` that
        ``_run`` calls)."""
        around = self._defined_in.get(nested)
        at_end = self.function_states.get(around) if around is not None else None
        if not at_end:
            return at_definition
        return {name: join(value, at_end[name]) if name in at_end else value for name, value in at_definition.items()}

    def _own_callee(self, caller: cst.FunctionDef, func: cst.BaseExpression) -> Optional[tuple[cst.FunctionDef, bool, bool]]:
        """The function of this file a call in ``caller`` runs, as (function, whether its first
        parameter is the receiver, whether it is a module's method): ``helper(...)`` for a
        module-level function, ``self.method(...)`` in a method, ``Class.static(...)``."""
        if isinstance(func, cst.Name):
            known = self.module_state.get(func.value)
            if known is not None and known.kind == Kind.FUNCTION and isinstance(known.info, cst.FunctionDef):
                return known.info, False, False
            return None
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None
        receiver, method = func.value.value, func.attr.value
        known = self.module_state.get(receiver)
        if known is not None and known.kind == Kind.CLASS and isinstance(known.info, ClassInfo):
            found = known.info.find_method(method)
            if found is not None and is_static_or_class_method(found[0]):
                return found[0], has_decorator(found[0], "classmethod"), False
            return None
        positional = [*caller.params.posonly_params, *caller.params.params]
        if not positional or positional[0].name.value != receiver or is_static_or_class_method(caller):
            return None
        owner = next((info for info in self._classes if caller in info.methods.values()), None)
        if owner is None:
            return None
        found = owner.find_method(method)
        if found is None or helpers.is_abstract_stub(found[0]):
            # the template-method pattern: the subclass that defines it runs (see _defined_only_below)
            found = self._defined_only_below(owner, method)
        elif self._overridden_below(owner, method):
            return None
        if found is None:
            return None
        callee, defined_in = found
        if has_decorator(callee, "staticmethod"):
            return callee, False, False
        if has_decorator(callee, "classmethod"):
            return callee, True, False
        return callee, True, defined_in.is_module and callee.name.value != "__init__"

    def model_device(self, class_info: ClassInfo) -> Device:
        """Where a module class's own tensors (``self``, its submodules, parameters, buffers)
        live, seen from its methods: the model's device - unless the class belongs to a test
        file that provably keeps every object of it on the host (see host_test_modules)."""
        return CPU if self.stays_on_host(class_info) else MODEL_DEVICE

    def stays_on_host(self, class_info: ClassInfo) -> bool:
        """Does every object of this module class stay on the host? True only for a class of a
        CPU unit test file that nothing in the file moves or hands to a framework that places
        it (see devicelint.analysis.host_test_modules)."""
        return class_info.is_module and self.host_test_modules.stays_on_host(class_info.node)

    def body_text(self, function: cst.FunctionDef) -> str:
        """The source of a function's body, generated once per file."""
        return self._body_text(function)

    def _body_text(self, function: cst.FunctionDef) -> str:
        memo = self.function_memo(function, self._body_texts, "body texts")
        text = memo.get(function)
        if text is None:
            texts = self.function_texts(function)
            cut = texts.body(function) if texts is not None else None
            text = memo[function] = cut if cut is not None else self.source_of(function.body)
        return text

    def _definition_text(self, function: cst.FunctionDef) -> str:
        """The text of a whole definition (header and decorators too)."""
        texts = self.function_texts(function)
        cut = texts.whole(function) if texts is not None else None
        return cut if cut is not None else self.source_of(function)

    def _written_elsewhere(self, class_info: ClassInfo) -> frozenset[str]:
        """Attributes that methods other than ``__init__`` assign: they may hold anything. A
        method only ``__init__`` calls (``self._build_buffers()``) runs there: what it assigns
        is ``__init__``'s (see _run_for_init)."""
        if class_info.written_elsewhere is None:
            writers: dict[str, list[cst.FunctionDef]] = {}
            movers: dict[str, list[cst.FunctionDef]] = {}
            init_only = self._init_only_helpers(class_info)
            for name, method in class_info.methods.items():
                if name == "__init__" or name in init_only:
                    continue
                assigned = helpers.assigned_in(method)
                for attribute in {name[5:] for name in assigned if name.startswith("self.")} | self._appended_in_place(method):
                    writers.setdefault(attribute, []).append(method)
                for attribute in self._moved_in_place(method):
                    movers.setdefault(attribute, []).append(method)
            class_info.writers = {attribute: tuple(methods) for attribute, methods in writers.items()}
            class_info.movers = {attribute: tuple(methods) for attribute, methods in movers.items() if attribute not in writers}
            class_info.written_elsewhere = frozenset(writers)
        return class_info.written_elsewhere

    def _appended_in_place(self, method: cst.FunctionDef) -> frozenset[str]:
        """Lists of its own object that a method fills by a statement of their own
        (``self.preds.append(out)``, ``self.losses.extend(batch)``): the method writes them
        (their elements), for the class's other methods and for the caller of the method (see
        _take_what_it_leaves). Read from the method's text."""
        return self._own_attributes_called(method, "append|extend")

    def _only_appends(self, method: cst.FunctionDef, attribute: str) -> bool:
        """Does the method fill ``self.<attribute>`` in place without assigning it?"""
        if attribute not in self._appended_in_place(method):
            return False
        positional = [*method.params.posonly_params, *method.params.params]
        return positional[0].name.value + "." + attribute not in helpers.assigned_in(method)

    def _moved_in_place(self, method: cst.FunctionDef) -> frozenset[str]:
        """Attributes of its own object that a method moves by a statement of their own
        (``self.encoder.to(self.device)``, ``self.model.cuda().eval()``, ``self.model.cpu()``): a
        module moves in place. Read from the method's text."""
        return self._own_attributes_called(method, "to|cuda|cpu")

    def _own_attributes_called(self, method: cst.FunctionDef, methods: str) -> frozenset[str]:
        """The attributes ``x`` of its own object on which a method calls one of ``methods`` (a
        regex alternation) at the start of a statement line (``self.x.append(...)``)."""
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional or has_decorator(method, "staticmethod") or has_decorator(method, "classmethod"):
            return frozenset()
        receiver = re.escape(positional[0].name.value)
        pattern = rf"^[ \t]*{receiver}\s*\.\s*(\w+)\s*\.\s*(?:{methods})\s*\("
        return frozenset(re.findall(pattern, self._body_text(method), re.MULTILINE))

    def _init_only_helpers(self, class_info: ClassInfo) -> frozenset[str]:
        """Methods of the class that ``__init__`` calls on its own object (``self._setup()``)
        and nothing else in the file names (no other call, no ``self.apply(self._init)``):
        they run only as part of ``__init__``, which takes what they set. Counted on the
        file's words (once per file), computed once per class."""
        if class_info.init_only_helpers is None:
            class_info.init_only_helpers = self._find_init_only_helpers(class_info)
        return class_info.init_only_helpers

    def _find_init_only_helpers(self, class_info: ClassInfo) -> frozenset[str]:
        init = class_info.methods.get("__init__")
        positional = [*init.params.posonly_params, *init.params.params] if init is not None else []
        if init is None or not positional or is_static_or_class_method(init):
            return frozenset()
        init_text = self._body_text(init)
        receiver = re.escape(positional[0].name.value)
        called = {match.group(1) for match in re.finditer(rf"(?<![\w.]){receiver}\s*\.\s*(\w+)\s*\(", init_text)}
        called &= class_info.methods.keys() - {"__init__"}
        if not called:
            return frozenset()
        words, defined = self._file_word_counts()
        in_init = Counter(word for word in _WORD.findall(init_text) if word in called)
        return frozenset(
            name
            for name in called
            if words[name] - defined[name] == in_init[name]
            and not self._overridden_below(class_info, name)
            and not has_decorator(class_info.methods[name], "staticmethod")
            and not has_decorator(class_info.methods[name], "classmethod")
        )

    def _attributes_seen_by_methods(
        self, class_info: ClassInfo, reader: Optional[cst.FunctionDef] = None, only: Optional[str] = None
    ) -> dict[str, Value]:
        """``self.*`` as a method (``reader``) other than ``__init__`` sees it: what the
        ``__init__`` of the class and of its bases in this file left; an attribute other methods
        assign is what they all store there (see _stored_by_methods), unknown where they
        disagree. ``only``: that one attribute (the others' stores are not looked for)."""
        merged: dict[str, Value] = {}
        for base in reversed(class_info.bases):
            merged.update(self._attributes_seen_by_methods(base, reader, only))
        for attribute, kept in class_info.class_attributes.items():
            if only is None or attribute == only:
                merged[attribute] = kept  # a tensor of the class body, where the object sets none
        if not class_info.init_analysed and not class_info.attributes:
            self._preview_init(class_info)
        if only is None:
            merged.update(class_info.attributes)
        elif only in class_info.attributes:
            merged[only] = class_info.attributes[only]
        if class_info.is_module:
            for attribute, injected in self._injected_modules(class_info).items():
                if (only is None or attribute == only) and _uninformative_module_slot(merged.get(attribute)):
                    merged[attribute] = injected
        for attribute in self._written_elsewhere(class_info):
            if only is not None and attribute != only:
                continue
            stored = self._stored_by_methods(class_info, attribute, merged.get(attribute), reader)
            if stored is not None:
                merged[attribute] = stored
            elif attribute in merged:
                merged[attribute] = UNKNOWN
        for attribute, movers in class_info.movers.items():
            if (only is None or attribute == only) and attribute in merged:
                moved = self._placed_by_methods(merged[attribute], movers, attribute, reader)
                if moved is not None:
                    merged[attribute] = moved
        for attribute, declared in self.declared_attributes(class_info).items():
            if (only is None or attribute == only) and merged.get(attribute, UNKNOWN) == UNKNOWN:
                # set by a subclass, methods that disagree on what they store, an object handed
                # in: the class body's own annotation still says what kind of value it is
                merged[attribute] = declared
        return merged

    def declared_attributes(self, class_info: ClassInfo) -> dict[str, Value]:
        """``_train_inputs: Optional[Tuple[torch.Tensor, ...]]`` written in the class body
        without a value: per such attribute, what its annotation says (a tensor, a sequence of
        tensors, a module; see _annotated_value), kept where it says something. Computed once."""
        if class_info.declared is None:
            class_info.declared = {}
            body = class_info.node.body
            for statement in helpers.block_statements(body):
                if not isinstance(statement, helpers.SIMPLE_LINES):
                    continue
                for small in statement.body:
                    if isinstance(small, cst.AnnAssign) and small.value is None and isinstance(small.target, cst.Name):
                        value = self._annotated_value(small.annotation.annotation, small)
                        if value != UNKNOWN:
                            class_info.declared[small.target.value] = value
        return class_info.declared

    def object_attribute(self, class_info: ClassInfo, attribute: str) -> Optional[Value]:
        """``graph.rows`` / ``self.config.norm_mean`` read outside the class, on an object of a
        plain class of the file (``graph = DistGraph(..., rows, cols)``): what the class's own
        methods see as ``self.rows`` (see _attributes_seen_by_methods); None where the class and
        its bases in the file do not say."""
        found = self._attributes_seen_by_methods(class_info, only=attribute).get(attribute)
        return None if found is None else _as_seen_from_method(found, None)

    def module_member(self, module: Value, attribute: str) -> Optional[Value]:
        """``model.obs`` / ``model.fc.weight`` read outside the class, on a module of a class of
        the file: a submodule, parameter or buffer the class's own methods see as
        ``self.obs``, where the module is (they move with it); None for anything else (a plain
        attribute may have been set since, by code the analysis does not follow)."""
        assert isinstance(module.info, ClassInfo)
        found = self._attributes_seen_by_methods(module.info, only=attribute).get(attribute)
        if found is None:
            return None
        if found.kind in (Kind.MODULE, Kind.CRITERION) or found.kind == Kind.TENSOR and found.role in (Role.PARAMETER, Role.BUFFER):
            return _as_seen_from_method(found, module.device)
        if found.kind == Kind.TENSOR and found.role is None and found is self._injected_modules(module.info).get(attribute):
            return found  # a tensor every construction handed in, kept as it was (`model.lo` of `Clamp(lo)`)
        return None

    def _stored_by_methods(
        self, class_info: ClassInfo, attribute: str, from_init: Optional[Value], reader: Optional[cst.FunctionDef]
    ) -> Optional[Value]:
        """``self.sigmas = sigmas.to("cpu")`` in a scheduler's ``set_timesteps(n, device)``: a
        tensor attribute that methods other than ``__init__`` set is, for the class's other
        methods, the tensor every one of those assignments (and ``__init__``'s, if any) stores,
        where they all agree on its device. None (unknown) where they disagree, where a
        writing method has not had its own analysis yet, or for the writing method itself
        (it may read what it stored before, or what another method stored) - unless the others
        agree: a method that reads what it stores (an accumulator, `self.losses =
        torch.cat([self.losses, loss])`) reads, on its first call, what the others stored (the
        `torch.tensor([])` a `reset()` leaves), as a loop's first iteration reads the value from
        before the loop."""
        values: list[Value] = [] if from_init is None else [from_init]
        registered_buffer = from_init is not None and from_init.kind == Kind.TENSOR and from_init.role is Role.BUFFER
        for method in class_info.writers.get(attribute, ()):
            if method is reader:
                continue
            if method not in self.function_states:
                if registered_buffer:
                    continue  # what it stores there stays the buffer (see below), whatever it is
                return None
            stored = self.attribute_writes.get(method, {}).get(attribute)
            if not stored and self._only_appends(method, attribute):
                # `self.blocks.append(layer)` on a ModuleList (or anything but a list the
                # analysis knows): the object's contents change, not which object it is
                continue
            if not stored:
                return None  # assigned where the method's own analysis did not see it
            values.extend(stored)
        if from_init is not None and len(values) == 1:
            return from_init  # only appends the analysis could not follow: what __init__ left
        tensors = [value for value in values if not _accumulator_start(value)]
        if tensors and len(tensors) < len(values):
            # `self.loss = 0` in `reset_stats()`, `self.loss += loss` in `step()`: a running total
            # that holds the tensor once a step has run, as a local `total = 0` does after its loop
            values = tensors
        if not values:
            return None
        if any(value.kind == Kind.MODULE for value in values):
            return _placed_module([value for value in values if value.role is not Role.NONE_LITERAL])
        if all(value.kind == Kind.TENSOR and value.role is Role.BUFFER for value in values) and not any(
            value.device is not None and value.device.is_cpu for value in values[1 if from_init is not None else 0 :]
        ):
            # a tensor assigned to a registered buffer's name updates the buffer (nn.Module's
            # __setattr__): it moves with the model like the one __init__ registered - unless a
            # method stores a host tensor there after the model was moved
            return Value(Kind.TENSOR, None, values[-1].origin, role=Role.BUFFER)
        if all(value.kind == Kind.CONTAINER for value in values) and any(
            attribute in self._appended_in_place(method) for method in class_info.writers.get(attribute, ())
        ):
            # `self.preds = []` in `__init__` (or a `reset()`), `self.preds.append(out)` in
            # `add(out)`: the list the other methods read holds what any of them left there
            joined = values[0]
            for value in values[1:]:
                joined = join(joined, value)
            return joined
        last = values[-1]
        for value in values:
            if value.kind != Kind.TENSOR or value.role is not None or value.device is None or value.device != last.device:
                return None
        scalar = last.scalar if all(value.scalar == last.scalar for value in values) else None
        return Value(Kind.TENSOR, last.device, last.origin, scalar=scalar)

    def _placed_by_methods(
        self, module: Value, movers: tuple[cst.FunctionDef, ...], attribute: str, reader: Optional[cst.FunctionDef]
    ) -> Optional[Value]:
        """A module ``__init__`` builds (``self.text_encoder = TextEncoder()``) that other
        methods move in place (``self.text_encoder.to(self.device)`` in ``prepare()``): in the
        class's other methods, where those moves put it (see _placed_module). None where a
        mover has not had its own analysis yet, or for a mover itself."""
        if module.kind != Kind.MODULE:
            return None
        values = [module]
        for method in movers:
            if method is reader or method not in self.function_states:
                return None
            moved = self.attribute_writes.get(method, {}).get(attribute)
            if not moved:
                return None
            values.extend(moved)
        return _placed_module(values)

    def _preview_init(self, class_info: ClassInfo) -> None:
        """A method of the class is called (``demo.run(loader)`` at module level) before the
        class's ``__init__`` has had its own analysis: run that ``__init__`` silently first, so
        the method sees ``self.predictor = Predictor(cfg)``. Its own analysis (with events)
        comes later, as before, and replaces what this finds."""
        init = class_info.methods.get("__init__")
        positional = [*init.params.posonly_params, *init.params.params] if init is not None else []
        if init is None or not positional or init in self._inlining or self._inline_depth >= helpers.MAX_DEPTH:
            return
        if self.foreign_home(init) is None and init not in self._pending_functions():
            return  # defined in a branch the analysis did not run: nothing to preview
        self_value = Value(Kind.MODULE, self.model_device(class_info), info=class_info) if class_info.is_module else Value(Kind.UNKNOWN, info=class_info)
        with self._silent_run(init), self._running(init, class_info, None):
            # its own analysis starts from the constructions the file made so far (see _bound_by_callers)
            state = self._parameter_state(init, positional[0], self_value, None, self._bound_by_callers(init), use_defaults=False)
            self.exec_block(helpers.body_statements(init), state)
        prefix = positional[0].name.value + "."
        for key, value in state.items():
            if key.startswith(prefix) and "." not in key[len(prefix):]:
                class_info.attributes.setdefault(key[len(prefix):], value)

    @contextlib.contextmanager
    def _silent_run(self, function: cst.FunctionDef) -> Iterator[tuple[list[Value], list[Optional[Value]]]]:
        """Run ``function``'s body without events, one level deeper; yields the lists its
        ``return``s and ``yield``s fill."""
        was_emitting = self.emitting
        self.emitting = False
        self._inline_depth += 1
        self._inlining.add(function)
        returns: list[Value] = []
        yielded: list[Optional[Value]] = []
        self._returns.append(returns)
        self._yielded.append(yielded)
        self._exit_states.append(None)
        try:
            yield returns, yielded
        finally:
            self._exit_states.pop()
            self._returns.pop()
            self._yielded.pop()
            self._inlining.discard(function)
            self._inline_depth -= 1
            self.emitting = was_emitting

    def _pending_functions(self) -> set[cst.FunctionDef]:
        return {function for function, _, _ in self._pending}

    def _attributes_ready(self, class_info: ClassInfo) -> bool:
        if "__init__" in class_info.methods and not class_info.init_analysed:
            return False
        return all(self._attributes_ready(base) for base in class_info.bases)

    # ------------------------------------------------------------------ calls of helpers and methods of the file

    def _call_own_method(
        self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> Optional[Value]:
        """``self._embed(x)``, ``helper.pad(x)``, ``Tools.pad(x)``: a method defined in this file.
        None when the method is not found here (the caller then treats the call as before)."""
        info = receiver.info
        assert isinstance(info, ClassInfo)
        found = info.find_method(method)
        if receiver.kind != Kind.CLASS and self.emitting:
            # whichever body runs, it is handed these arguments: a base class's `forward` calling
            # `self._forward(x)`, or `__call__` calling `self.make_final(x)` that only its
            # subclasses define, is where their definitions get their inputs
            for override in self._overrides_below(info, method):
                self._note_call_site(override, args, True, None, node)
        below = found is None and receiver.kind != Kind.CLASS
        if below:
            found = self._defined_only_below(info, method)
        elif found is not None and receiver.kind != Kind.CLASS and helpers.is_abstract_stub(found[0]):
            # the base only declares it (`raise NotImplementedError`): the object is one of the
            # subclass that defines it, as where the base does not define it at all
            defined = self._defined_only_below(info, method)
            if defined is not None:
                found, below = defined, True
        if found is None:
            return None
        function, owner = found
        left: dict[str, Value] = {}  # where its run left the modules it moved in place
        if receiver.kind != Kind.CLASS and not below and self._overridden_below(info, method):
            result = UNKNOWN  # a subclass here overrides it: which body runs depends on the object
        elif has_decorator(function, "staticmethod"):
            result = self._summarise(function, None, None, False, args, state, call=node)
        elif has_decorator(function, "classmethod"):
            result = self._summarise(function, owner, Value(Kind.CLASS, info=info), True, args, state, call=node)
        elif receiver.kind == Kind.CLASS:
            result = UNKNOWN  # Class.method(obj, ...): an unbound call
        else:
            receiver_key = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
            carried = self._attributes_set_by_caller(info, receiver_key, state)
            ran = None
            if receiver_key is not None and self._builds_own_object(receiver_key):
                ran = self._run_for_init(function, owner, receiver, args, state, receiver_key, carried, node)
            if ran is not None:
                result = ran
            else:
                # (a definition found below was noted as a call site with the overrides above)
                result = self._summarise(function, owner, receiver, True, args, state, carried, call=node, left=left, note=not below)
                if receiver_key is not None and not self._take_what_it_leaves(function, owner, receiver, args, state, receiver_key, carried):
                    self._forget_what_it_writes(function, receiver_key, state)
            if receiver_key is not None:
                self._forget_device_if_moved(function, receiver, receiver_key, state)
                self._place_receiver_left(function, receiver, receiver_key, left, state)
        if receiver.kind not in (Kind.MODULE, Kind.CRITERION):
            self._escape_into(function, args, state, skip_first=not has_decorator(function, "staticmethod"), left=left)
        return result

    def _call_base_method(
        self, node: cst.Call, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State
    ) -> Optional[Value]:
        """``super().icdf(value)`` in a method of a class of the file: the nearest base class of
        the file that defines ``method`` runs it on the same object (its ``self`` is the
        caller's). None where no base of the file defines it (a library base: ``nn.Linear``'s
        ``forward``), which the caller then treats as before."""
        context = self.current_function
        class_info, function = context.class_info, context.node
        if class_info is None or function is None or is_static_or_class_method(function):
            return None
        found = next((found for found in (base.find_method(method) for base in class_info.bases) if found is not None), None)
        if found is None:
            return None
        called, owner = found
        positional = [*function.params.posonly_params, *function.params.params]
        receiver = state.get(positional[0].name.value) if positional else None
        if receiver is None or has_decorator(called, "classmethod"):
            return None
        if has_decorator(called, "staticmethod"):
            return self._summarise(called, None, None, False, args, state, call=node)
        return self._summarise(called, owner, receiver, True, args, state, call=node)

    def _attributes_set_by_caller(self, info: ClassInfo, receiver_key: Optional[str], state: State) -> Optional[dict[str, Value]]:
        """``self.gradients = torch.zeros(shape)`` then ``self._ascent(x)`` in a method of the
        same object: attributes that methods other than ``__init__`` write are unknown to any
        method in general, but the callee starts from what this caller left in them. So too
        ``model.optimize(points, seg)`` then ``model.get_current_errors()`` from outside the
        class: the caller's ``model.*`` holds what ``optimize`` left (see _take_what_it_leaves).
        The callee's analysis takes them where every call of it carries them (see
        _bound_by_callers)."""
        if receiver_key is None:
            return None
        prefix = receiver_key + "."
        written = self._written_elsewhere(info)
        placed_by_caller = self._modules_placed_by_caller(info, prefix, state)
        if not written and not placed_by_caller:
            return None
        carried = {}
        for attribute in written:
            value = state.get(prefix + attribute)
            if value is not None and (value.kind != Kind.UNKNOWN or value.device is not None):
                carried[attribute] = value
        carried.update(placed_by_caller)
        return carried

    def _objects_placed_by_caller(
        self, function: cst.FunctionDef, args: tuple[tuple[cst.Arg, Value], ...], bind_self: bool, state: State
    ) -> Optional[dict[str, Value]]:
        """``agent.Q.to(device)`` in ``main``, then ``train(args, env, agent)``: an object of a
        plain class of the file handed to a function carries its attributes with it, so the
        modules the caller placed on it (see _modules_placed_by_caller) are where the function
        finds them (``agent.Q(state)``, ``agent.act(state)`` in ``train``), by the parameter's
        dotted name; None where no argument is such an object."""
        found: Optional[dict[str, Value]] = None
        names = helpers.argument_parameters(function, args, bind_self)
        for (arg, value), name in zip(args, names):
            info = value.info
            if name is None or arg.star or not isinstance(info, ClassInfo) or info.is_module or value.kind == Kind.CLASS:
                continue
            key = dotted_name(arg.value)
            if key is None:
                continue
            placed = self._modules_placed_by_caller(info, key + ".", state)
            if placed:
                found = found or {}
                found.update({f"{name}.{attribute}": module for attribute, module in placed.items()})
        return found

    def _modules_placed_by_caller(self, info: ClassInfo, prefix: str, state: State) -> dict[str, Value]:
        """``w.model.to(device)`` (or ``w.model = w.model.cuda()``) from outside the class, on
        a module that its ``__init__`` built: the object's methods find it where the caller put
        it. (The caller's own view of ``w.model`` may be an object it only saw move; it is the
        module ``__init__`` built.)"""
        placed_modules: dict[str, Value] = {}
        if not any(key.startswith(prefix) for key in state):
            return placed_modules
        if not info.init_analysed and not info.attributes:
            self._preview_init(info)
        for attribute, built in info.attributes.items():
            if built.kind != Kind.MODULE:
                placed = state.get(prefix + attribute)
                if built.role is Role.NONE_LITERAL and placed is not None and placed.kind == Kind.MODULE and placed.device is not None:
                    # `self.model = None` in `__init__`, then `obj.model = Net()` by the caller (or by
                    # a loader that builds the object): the object's methods find that module
                    placed_modules[attribute] = placed
                continue
            placed = state.get(prefix + attribute)
            if placed is None or placed.device is None or placed.device == built.device:
                continue
            if placed.kind == Kind.MODULE or placed.kind == Kind.UNKNOWN and placed.is_bare:
                placed_modules[attribute] = Value(Kind.MODULE, placed.device, placed.origin, info=built.info, role=built.role)
        return placed_modules

    def file_classes(self) -> list[ClassInfo]:
        """The classes defined in the file (as far as the analysis has seen them)."""
        return list(self._classes)

    def constructs_module(self, function: cst.FunctionDef) -> bool:
        """Is ``function`` the ``__init__`` of an nn.Module class - or of a class the analysis
        has not read (another module's)? What it makes are the module's tensors, on the host
        until the module is moved. False for any other function, and for the ``__init__`` of a
        plain class of the file, whose arguments are placed by whoever builds the object. A
        method only a module's ``__init__`` calls (``self._build_buffers()``) builds it too."""
        name = function.name.value
        if name != "__init__":
            return any(info.is_module and self._runs_in_init_of(function, info) for info in self._classes)
        for info in self._classes:
            if info.methods.get("__init__") is function:
                return info.is_module
        return True

    def runs_in_init(self, function: cst.FunctionDef) -> bool:
        """Is ``function`` a method that only its class's ``__init__`` calls (``self._setup()``),
        so that it runs as part of building the object?"""
        return any(self._runs_in_init_of(function, info) for info in self._classes)

    def _runs_in_init_of(self, function: cst.FunctionDef, info: ClassInfo) -> bool:
        name = function.name.value
        return info.methods.get(name) is function and name in self._init_only_helpers(info)

    def moves_attribute_where_read(self, info: ClassInfo, attribute: str) -> bool:
        """Does a method of the class (or of a subclass in this file), other than ``__init__``,
        move ``self.<attribute>`` as it reads it (``self.weight.to(x.device)``)?  Then the class
        knows the attribute stays where ``__init__`` made it, and places it itself where it
        needs it; a read that does not is an operation of its own."""
        memo = self._moved_where_read
        key = (id(info.node), attribute)
        found = memo.get(key)
        if found is None:
            pattern = re.compile(rf"\bself\.{re.escape(attribute)}\b")
            found = memo[key] = any(
                MOVED_AT_ONCE.match(text, match.end()) is not None
                for owner in (info, *self.subclasses_of(info))
                for name, method in owner.methods.items()
                if name != "__init__"
                for text in (self.body_text(method),)
                for match in pattern.finditer(text)
            )
        return found

    def attribute_moved_where_read(self, host: Value) -> bool:
        """Is ``host`` a tensor that a device-less factory made in a module's ``__init__`` and
        that the module keeps as a plain attribute (also one left None on other paths) which
        its class moves where it reads it (see moves_attribute_where_read)?"""
        made = self.device_less_factory(host)
        if made is None or made[2] is None:
            return False
        call, _, function = made
        for info in self._classes:
            if not info.is_module or not (info.methods.get("__init__") is function or self._runs_in_init_of(function, info)):
                continue
            for attribute, value in info.attributes.items():
                if isinstance(value.info, TensorOrNone):
                    value = value.info.tensor
                if value.kind == Kind.TENSOR and value.origin is not None and value.origin.node is call:
                    if self.moves_attribute_where_read(info, attribute):
                        return True
        return False

    def subclasses_of(self, info: ClassInfo) -> list[ClassInfo]:
        """The classes of this file that inherit from ``info``, directly or not."""
        return [other for other in self._classes if other is not info and _inherits_from(other, info)]

    def _overrides_below(self, info: ClassInfo, method: str) -> list[cst.FunctionDef]:
        """The definitions of ``method`` in the classes of this file that inherit from ``info``."""
        return [other.methods[method] for other in self._classes if other is not info and method in other.methods and _inherits_from(other, info)]

    def _overridden_below(self, info: ClassInfo, method: str) -> bool:
        return bool(self._overrides_below(info, method))

    def _defined_only_below(self, info: ClassInfo, method: str) -> Optional[tuple[cst.FunctionDef, ClassInfo]]:
        """``self._forward(x)`` in a method of a base class that does not define ``_forward``
        (the template-method pattern): the object is one of a subclass, and Python runs that
        subclass's definition. The definition and its class where the file holds one (or one
        in a class the file builds, where several subclasses define it); None where it cannot
        be told, or where the base has a base outside the file (which may define the method
        for an object of the base itself) and the file builds the base."""
        defining = [other for other in self._classes if method in other.methods and other is not info and _inherits_from(other, info)]
        if len(defining) > 1:
            called = self.called_names()
            defining = [other for other in defining if other.name in called]
        if len(defining) != 1:
            return None
        if info.name in self.called_names() and any(len(ancestor.bases) < len(ancestor.node.bases) for ancestor in (info, *info.ancestors())):
            return None
        owner = defining[0]
        return owner.methods[method], owner

    def _forget_device_if_moved(self, function: cst.FunctionDef, receiver: Value, receiver_key: str, state: State) -> None:
        """``model.enable_group_offload(device)``: a method that moves its own module or hands
        ``self`` to other code (hooks, offloading, ``apply_group_offloading(module=self)``) leaves
        the model's device unknown."""
        if receiver.kind not in (Kind.MODULE, Kind.CRITERION) or receiver.device is None:
            return
        positional = [*function.params.posonly_params, *function.params.params]
        if positional and positional[0].name.value in self._may_move(function):
            state[receiver_key] = Value(receiver.kind, None, receiver.origin, info=receiver.info, role=receiver.role)

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

    def _take_what_it_leaves(
        self,
        function: cst.FunctionDef,
        class_info: ClassInfo,
        receiver: Value,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
        receiver_key: str,
        carried: Optional[dict[str, Value]],
    ) -> bool:
        """``model.optimize(points, seg)``, ``self.forward()`` in ``optimize_parameters``: a
        method called on an object of a class of the file leaves attributes on it
        (``self.score = self.net(self.points)``) that a later call on the same object reads.
        Its body runs silently from the class's attributes and what the caller knows of the
        receiver's (``model.*``); each attribute it assigns, joined over its ``return``s and its
        end (where a path leaves it alone, what was there before), becomes the caller's
        ``model.<attribute>``, in the caller's terms. False where the body cannot run (too deep,
        recursive, a generator, an unknown decorator, arguments that do not bind): the caller
        then forgets what it writes. Memoised on everything the run starts from."""
        summarisable, _, written = self._facts_of(function)
        positional = [*function.params.posonly_params, *function.params.params]
        if not positional:
            return False
        own_prefix = positional[0].name.value + "."
        assigned = [name[len(own_prefix):] for name in written if name.startswith(own_prefix)]
        assigned += sorted(self._appended_in_place(function).difference(assigned))
        if not assigned:
            return True  # it leaves the object's attributes as they were
        if self._inline_depth >= helpers.MAX_DEPTH or function in self._inlining or not summarisable or self._is_generator(function):
            return False
        binding = helpers.bind_arguments(function, args, True)
        if binding is None or binding[0] is None:
            return False
        self_param, bound = binding
        caller_prefix = receiver_key + "."
        known = tuple(sorted(carried.items())) if carried else ()
        default = self._default_device(state)
        ready = self._attributes_ready(class_info)
        key = (
            function,
            id(class_info),
            receiver,
            id(receiver.info),
            tuple((name, value, id(value.info), value.role) for name, value in sorted(bound.items(), key=lambda item: item[0])),
            known,
            default,
        )
        left = self._left_attributes.get(key) if ready else None
        if left is None:
            if self._summaries_left <= 0:
                return False
            self._summaries_left -= 1
            left = self._run_for_attributes(function, class_info, receiver, self_param, bound, known, default, assigned, receiver_key)
            if left is None:
                return False
            if ready:
                self._left_attributes[key] = left
        for attribute, value in left.items():
            target = caller_prefix + attribute
            if target in state or value.kind != Kind.UNKNOWN or value.device is not None:
                state[target] = value
        return True

    def _run_for_attributes(
        self,
        function: cst.FunctionDef,
        class_info: ClassInfo,
        receiver: Value,
        self_param: cst.Param,
        bound: dict[str, Value],
        known: tuple[tuple[str, Value], ...],
        default: Optional[Value],
        assigned: list[str],
        receiver_key: str,
    ) -> Optional[dict[str, Value]]:
        """The attributes ``assigned`` as ``function`` leaves them (see _take_what_it_leaves);
        None where it always raises."""
        own_prefix = self_param.name.value + "."
        with self._silent_run(function), self._running(function, class_info, None):
            exits: list[State] = []
            self._exit_states[-1] = exits
            local = self._parameter_state(function, self_param, receiver, class_info, bound, use_defaults=True)
            for attribute, value in known:
                local[own_prefix + attribute] = value
            if default is not None:
                local[DEFAULT_DEVICE_KEY] = default
            self._forget_hooked_modules(function, local)
            self.exec_block(helpers.body_statements(function), local)
        if self._facts_of(function)[1]:
            exits.append(local)
        if not exits:
            return None
        model_device = receiver.device if class_info.is_module else None
        left: dict[str, Value] = {}
        for attribute in assigned:
            value: Optional[Value] = None
            for exit_state in exits:
                found = exit_state.get(own_prefix + attribute)
                if found is not None:
                    value = found if value is None else join(value, found)
            if value is not None:
                value = _in_caller_terms(helpers.attributed_to(value, function, self.factory_home), bound)
                value = _anchored_on_receiver(value, self_param.name.value, receiver_key)
                left[attribute] = _on_receiver_device(value, model_device) if class_info.is_module else value
        return left

    def _facts_of(self, function: cst.FunctionDef) -> tuple[bool, bool, frozenset[str]]:
        """(can be summarised, may fall off its end, dotted names it assigns)."""
        memo = self.function_memo(function, self._helper_facts, "helper facts")
        facts = memo.get(function)
        if facts is None:
            home = self.home_state(function)
            summarisable = function.asynchronous is None and helpers.decorators_are_transparent(
                function, lambda e: self.qualname_of(e, home), lambda e: _own_function(e, home)
            )
            falls_off, assigned = helpers.ending_and_assigned(function)  # parses no deferred body
            facts = (summarisable, falls_off, assigned)
            memo[function] = facts
        return facts

    def _is_generator(self, function: cst.FunctionDef) -> bool:
        """Does the function's own body ``yield`` (not a function nested in it)?"""
        memo = self.function_memo(function, self._generators, "generators")
        known = memo.get(function)
        if known is None:
            known = False
            if "yield" in self._body_text(function):  # spare the walk of bodies that cannot yield
                finder = _YieldFinder()
                walk.visit(function.body, finder)
                known = finder.found
            memo[function] = known
        return known

    def _note_call_site(
        self,
        function: cst.FunctionDef,
        args: tuple[tuple[cst.Arg, Value], ...],
        bind_self: bool,
        carried: Optional[dict[str, Value]],
        call: Optional[cst.Call] = None,
        objects: Optional[dict[str, Value]] = None,
    ) -> None:
        """Remember what a reporting pass's call hands the function: its own analysis starts
        from the join over its calls (see _bound_by_callers), and a call that hands it values
        placed otherwise may get a pass of its own (see _specialise_by_call_site). ``objects``:
        the modules the caller placed on objects it hands (see _objects_placed_by_caller), by
        the parameter's dotted name (``agent.Q``)."""
        # `self._forward(inputs, **kwargs)`: what it names binds, the spread may give any
        # parameter left (unknown, not its default)
        spread = any(arg.star == "**" for arg, _ in args) and not any(arg.star == "*" for arg, _ in args)
        # (`*args` / `**kwargs` of a method are left unknown: a wrapper module's `forward(*args,
        # **kwargs)` hands them to a submodule whose placement the analysis knows less well than
        # the caller's: twin 1909, an EMA copy moved by the device its construction names)
        site = helpers.bind_arguments(function, args, bind_self, forwarding=spread, spreads=not spread and not bind_self)
        if site is not None and carried and site[0] is not None:
            prefix = site[0].name.value + "."
            site = (site[0], {**site[1], **{prefix + attribute: value for attribute, value in carried.items()}})
        if site is not None and objects:
            site = (site[0], {**site[1], **objects})
        self._call_sites.setdefault(function, []).append(site[1] if site is not None else None)
        if site is not None and call is not None:
            self._record_site_call(function, call, site[1])

    def _builds_own_object(self, receiver_key: str) -> bool:
        """Is ``receiver_key`` the ``self`` of an ``__init__`` being analysed (or of a method
        running as part of one)?"""
        function = self.current_function.node
        if function is None or "." in receiver_key or is_static_or_class_method(function):
            return False
        if function.name.value != "__init__" and function not in self._init_runs:
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        return bool(positional) and positional[0].name.value == receiver_key

    def _recursive_mover(self, function: cst.FunctionDef) -> Optional[tuple[str, cst.Call]]:
        """``def move_to_device(batch, device)`` that returns ``{k: move_to_device(v, device) for
        k, v in batch.items()}`` for a dict, the same over the items of a list or tuple, and
        ``batch.to(device)`` (or ``batch`` itself) for anything else: a helper that moves every
        tensor of a nested batch and keeps its structure. Every ``return`` of its body calls the
        function itself, moves the parameter (``.to(...)``/``.cuda(...)``) or returns it as it
        is; at least one recurses and one moves. The parameter and the move; None for any other
        function (computed once per function)."""
        memo = self.function_memo(function, self._recursive_movers, "recursive movers")
        if function not in memo:
            text = self._body_text(function)
            calls_itself = re.search(rf"(?<![\w.]){re.escape(function.name.value)}\s*\(", text) is not None
            memo[function] = _find_recursive_mover(function) if calls_itself and _MOVE_TEXT.search(text) else None
        return memo[function]

    def _run_recursive_mover(
        self,
        function: cst.FunctionDef,
        class_info: Optional[ClassInfo],
        mover: tuple[str, cst.Call],
        self_param: Optional[cst.Param],
        self_value: Optional[Value],
        bound: dict[str, Value],
        state: State,
    ) -> Optional[Value]:
        """What a recursive move helper (see _recursive_mover) returns for what it is handed:
        the value with every tensor in it (entries of a tuple, fields of a dict, the element of
        a list) where the helper's move puts one. None where the move gives no device."""
        parameter, move = mover
        enclosing = state if function in self._nested_functions else None
        with self._silent_run(function), self._running(function, class_info, enclosing):
            local = self._parameter_state(function, self_param, self_value or UNKNOWN, None, bound, use_defaults=True)
            local[parameter] = Value(Kind.TENSOR, CPU, scalar=False)
            one = self.eval(move, local)
        if one.kind != Kind.TENSOR or one.device is None:
            return None
        one = _in_caller_terms(helpers.attributed_to(one, function, self.factory_home), bound)
        return _moved_through(bound[parameter], one, 0)

    def _run_for_init(
        self,
        function: cst.FunctionDef,
        class_info: ClassInfo,
        receiver: Value,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
        receiver_key: str,
        carried: Optional[dict[str, Value]],
        call: Optional[cst.Call] = None,
    ) -> Optional[Value]:
        """``self._eval_noise()`` in ``__init__``: the method runs there, on the object being
        built, whether or not it ends in a ``return``. Its body runs silently from the caller's
        ``self.*``, and the attributes it leaves (joined over its ``return``s and its end) are
        the caller's from then on, so ``__init__``'s attributes - and so every other method -
        see them. What it returns is what a summary gives. None where it cannot run (too deep,
        recursive, a generator, an unknown decorator): the caller summarises the call as for
        any method."""
        if self._inline_depth >= helpers.MAX_DEPTH or function in self._inlining or self._summaries_left <= 0:
            return None
        summarisable, falls_off, _ = self._facts_of(function)
        if not summarisable or self._is_generator(function):
            return None
        binding = helpers.bind_arguments(function, args, True)
        if binding is None or binding[0] is None:
            return None
        if self.emitting:
            self._note_call_site(function, args, True, carried, call)
        self._summaries_left -= 1
        self_param, bound = binding
        caller_prefix = receiver_key + "."
        own_prefix = self_param.name.value + "."
        default = self._default_device(state)
        self._init_runs.add(function)
        try:
            with self._silent_run(function) as (returns, _), self._running(function, class_info, None):
                exits: list[State] = []
                self._exit_states[-1] = exits
                local = self._parameter_state(function, self_param, receiver, None, bound, use_defaults=True)
                for key, value in state.items():
                    if key.startswith(caller_prefix):
                        local[own_prefix + key[len(caller_prefix):]] = value
                if default is not None:
                    local[DEFAULT_DEVICE_KEY] = default
                self.exec_block(helpers.body_statements(function), local)
        finally:
            self._init_runs.discard(function)
        if falls_off:
            exits.append(local)
        if not exits:
            return None  # it always raises: nothing after the call runs
        left: State = {}
        for exit_state in exits:
            left = join_states(left, {key: value for key, value in exit_state.items() if key.startswith(own_prefix)})
        for key, value in left.items():
            value = _in_caller_terms(helpers.attributed_to(value, function, self.factory_home), bound)
            state[caller_prefix + key[len(own_prefix):]] = value
        if falls_off or not returns:
            return UNKNOWN
        result = returns[0]
        for other in returns[1:]:
            result = join(result, other)
        result = _in_caller_terms(helpers.attributed_to(result, function, self.factory_home), bound)
        if result.kind == Kind.UNKNOWN and _sequence_on_some_paths(returns):
            result = Value(Kind.UNKNOWN, role=Role.SEQUENCE_ON_SOME_PATHS)
        return result

    def _summarise(
        self,
        function: cst.FunctionDef,
        class_info: Optional[ClassInfo],
        self_value: Optional[Value],
        bind_self: bool,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
        carried: Optional[dict[str, Value]] = None,
        call: Optional[cst.Call] = None,
        left: Optional[dict[str, Value]] = None,
        note: bool = True,
    ) -> Value:
        """What a call of a function of this file returns, given the caller's arguments: its body
        run silently on them (see devicelint.analysis.helpers). ``carried``: the ``self.*``
        attributes the caller set (or that earlier calls on the object left), which the run and
        the callee's own analysis start from (see _attributes_set_by_caller). ``call``: the call
        itself, where there is one to name (see _specialise_by_call_site). ``left``, where given,
        is filled with where the run left the modules it was handed and moved in place (see
        _modules_left_by_run), by parameter (``model``) or kept attribute (``state.model``).
        ``note``: whether the call is one of the function's call sites (a construction's run of
        ``__init__`` is noted as a construction instead)."""
        if self.emitting and note:
            self._note_call_site(function, args, bind_self, carried, call, self._objects_placed_by_caller(function, args, bind_self, state))
            self._call_defaults.setdefault(function, []).append(self._default_device(state))
        if self._inline_depth >= helpers.MAX_DEPTH or function in self._inlining:
            return UNKNOWN
        summarisable, falls_off, _ = self._facts_of(function)
        # a body that may fall off its end may return None: its result is unknown, but where it
        # leaves the modules it moves in place is worth its run
        returns_unknown = falls_off and not self._is_generator(function)
        if not summarisable or returns_unknown and (left is None or not self._moved_in_place_by(function) and not self._moves_free_modules(function)):
            return UNKNOWN
        binding = helpers.bind_arguments(function, args, bind_self, spreads=not bind_self)
        if binding is None:
            return UNKNOWN
        self_param, bound = binding
        mover = self._recursive_mover(function)
        if mover is not None and mover[0] in bound:
            moved = self._run_recursive_mover(function, class_info, mover, self_param, self_value, bound, state)
            if moved is not None:
                return moved
        default = self._default_device(state)
        ready = class_info is None or self._attributes_ready(class_info)
        known = tuple(sorted(carried.items())) if carried and self_param is not None else ()
        key = (
            function,
            known,
            id(class_info),
            self_value,
            id(self_value.info) if self_value is not None else 0,
            tuple(
                (name, value, id(value.info), id(value.fields), value.role, value.device.only_on if value.device is not None else None)
                for name, value in sorted(bound.items(), key=lambda item: item[0])
            ),
            default,
        )
        if ready:
            cached = self._summaries.get(key)
            if cached is not None:
                if left is not None:
                    left.update(self._modules_left.get(key, {}))
                return cached
        if self._summaries_left <= 0:
            return UNKNOWN
        self._summaries_left -= 1

        enclosing = state if function in self._nested_functions else None
        moved_in_place = self._moved_in_place_by(function) if left is not None else frozenset()
        if left is not None and enclosing is not None:
            moved_in_place = moved_in_place | self.free_modules_moved_in_place(function)
        exits: list[State] = []
        with self._silent_run(function) as (returns, yielded), self._running(function, class_info, enclosing):
            if moved_in_place:
                self._exit_states[-1] = exits
            with_attributes = class_info if self_value is not None and self_value.kind != Kind.CLASS else None
            local = self._parameter_state(function, self_param, self_value or UNKNOWN, with_attributes, bound, use_defaults=True)
            if known:
                prefix = self_param.name.value + "."  # type: ignore[union-attr]
                for attribute, value in known:
                    local[prefix + attribute] = value
            if default is not None:
                local[DEFAULT_DEVICE_KEY] = default
            self._forget_hooked_modules(function, local)
            self.exec_block(helpers.body_statements(function), local)
        if moved_in_place:
            if falls_off:
                exits.append(local)
            receiver = {self_param.name.value: self_value} if self_param is not None and self_value is not None else {}
            modules_left = self._modules_left_by_run(function, moved_in_place, {**bound, **receiver}, exits)
            assert left is not None
            left.update(modules_left)
            if ready:
                self._modules_left[key] = modules_left
        result = UNKNOWN
        if returns_unknown:
            pass
        elif yielded:
            # a generator function returns a generator: iterating it gives what it yields
            if all(value is not None for value in yielded):
                element = yielded[0]
                for other in yielded[1:]:
                    element = join(element, other)  # type: ignore[arg-type]
                element = _in_caller_terms(helpers.attributed_to(element, function, self.factory_home), bound)  # type: ignore[arg-type]
                if element.kind != Kind.UNKNOWN:
                    result = Value(Kind.CONTAINER, info=Homogeneous(element))
        elif returns:
            result = returns[0]
            for other in returns[1:]:
                result = join(result, other)
            result = helpers.attributed_to(result, function, self.factory_home)
            result = _in_caller_terms(result, bound)
            if result.kind == Kind.UNKNOWN and _sequence_on_some_paths(returns):
                result = Value(Kind.UNKNOWN, role=Role.SEQUENCE_ON_SOME_PATHS)
        if ready:
            self._summaries[key] = result
        return result

    def _forget_hooked_modules(self, function: cst.FunctionDef, local: State) -> None:
        """A module handed to a function that installs forward hooks on it or its submodules
        (see _hooked) is wherever those hooks put it when it runs: its device is unknown there
        and in what the function returns."""
        text = self._body_text(function)
        for name, value in list(local.items()):
            if value.kind in (Kind.MODULE, Kind.CRITERION) and value.device is not None and _hooked(name, text):
                local[name] = value.with_device(None, None)

    def _escape_into(
        self,
        function: cst.FunctionDef,
        args: tuple[tuple[cst.Arg, Value], ...],
        state: State,
        skip_first: bool,
        left: Optional[dict[str, Value]] = None,
    ) -> None:
        """A module handed to a function of this file keeps its device unless the function
        may move it (``model.to(...)``, ``model.cuda()``) or hands it on to other code. Where
        the function's run (``left``, see _modules_left_by_run) tells where it left a module it
        moved in place - the module handed in (``model.cpu()`` in a save helper) or one an
        object handed in keeps (``state.model.cpu()``) - the caller's module is there after
        the call, as if the move were written at the call."""
        names = helpers.argument_parameters(function, args, skip_first)
        placed = self._place_modules_left(args, names, left, state) if left else frozenset()
        if any(_may_hold_own_tensors(value) for _, value in args):
            # `place(box, device)` that stores `box.ids = box.ids.to(device)`: the object's
            # attributes are no longer what its construction handed in
            text = self._body_text(function)
            for (arg, value), name in zip(args, names):
                if _may_hold_own_tensors(value) and (name is None or name in self._may_move(function) or _stores_attribute_of(name).search(text)):
                    self._forget_object_tensors(arg, value, state)
        if not any(value.kind in (Kind.MODULE, Kind.CRITERION) or constructions.is_construction(value) for _, value in args):
            return  # nothing that could escape: spare the scan of the callee's text
        moving = self._may_move(function)
        self._escape(tuple(pair for pair, name in zip(args, names) if (name is None or name in moving) and name not in placed), state)

    def place_modules_init_moves(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> None:
        """``Trainer(model, device)`` whose ``__init__`` keeps ``self.model = model.to(device)``:
        ``nn.Module.to`` moves the module in place, so the caller's ``model`` is on ``device``
        once the object is built, as after a helper that moves it (see _escape_into). Plain
        classes of the file; their ``__init__`` runs silently on the construction's arguments,
        only where its text moves a parameter in place."""
        if info.is_module or info.is_dataset:
            return
        found = info.find_method("__init__")
        if found is None:
            return
        init, owner = found
        moved = self._moved_in_place_by(init)
        if not moved:
            return
        names = helpers.argument_parameters(init, args, True)
        roots = {name.split(".", 1)[0] for name in moved}
        if not any(name in roots for name in names):
            return
        left: dict[str, Value] = {}
        self._summarise(init, owner, Value(Kind.UNKNOWN, info=info), True, args, state, left=left, note=False)
        if left:
            self._place_modules_left(args, names, left, state)

    def _place_receiver_left(
        self, function: cst.FunctionDef, receiver: Value, receiver_key: str, left: dict[str, Value], state: State
    ) -> None:
        """``dvae.load_pretrained(device)`` whose body is ``self.to(device)``: a method of the
        file that moves its own module in place leaves it where it put it (see _escape_into for
        the modules handed to a function)."""
        positional = [*function.params.posonly_params, *function.params.params]
        if receiver.kind not in (Kind.MODULE, Kind.CRITERION) or not positional or has_decorator(function, "staticmethod"):
            return
        own_name = positional[0].name.value
        placed = left.get(own_name)
        if placed is not None:
            state[receiver_key] = _anchored_on_receiver(placed, own_name, receiver_key)

    def _place_modules_left(
        self, args: tuple[tuple[cst.Arg, Value], ...], names: list[Optional[str]], left: dict[str, Value], state: State
    ) -> frozenset[str]:
        """Put the caller's modules where the callee left them (see _escape_into); the
        parameters whose own module was placed so."""
        placed: set[str] = set()
        for (arg, _), name in zip(args, names):
            key = dotted_name(arg.value) if name is not None and not arg.star else None
            if key is None:
                continue
            for moved, value in left.items():
                root, _, attribute = moved.partition(".")
                if root != name:
                    continue
                state[f"{key}.{attribute}" if attribute else key] = value
                if not attribute:
                    placed.add(name)
        return frozenset(placed)

    def _moves_free_modules(self, function: cst.FunctionDef) -> bool:
        return function in self._nested_functions and bool(self.free_modules_moved_in_place(function))

    def free_modules_moved_in_place(self, function: cst.FunctionDef) -> frozenset[str]:
        """The names of the function around a nested function (``algorithm`` in ``def
        save_checkpoint(path): torch.save(algorithm.cpu().state_dict(), path)``) that its body
        moves in place with a bare move method: free names, neither parameters nor bound in its
        body, so a call of the closure moves the very module the function around it holds
        (``Module.to``/``cuda``/``cpu`` work in place). A text scan, once per function."""
        memo = self.function_memo(function, self._free_names_moved_in_place, "free names moved in place")
        moved = memo.get(function)
        if moved is None:
            params = function.params
            names = set(parameter_names(function))
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    names.add(star.name.value)
            text = self._body_text(function)
            found = set()
            for match in _MOVED_IN_PLACE.finditer(text):
                name = match.group(1)
                if "." in name or name in names or name in ("self", "cls"):
                    continue
                if re.search(rf"(?<![.\w]){re.escape(name)}\s*(?:=(?!=)|[-+*/]=)|\b(?:for|as|global)\s+{re.escape(name)}\b|\bdef\s+{re.escape(name)}\b", text):
                    continue  # bound in the body (or a global): not the caller's object
                found.add(name)
            moved = memo[function] = frozenset(found)
        return moved

    def _moved_in_place_by(self, function: cst.FunctionDef) -> frozenset[str]:
        """The parameters (``model``), and attributes of parameters (``state.model``), that the
        function's body moves in place with a bare move method (``.to(``, ``.cuda(``, ``.cpu(``):
        a text scan, once per function."""
        memo = self.function_memo(function, self._parameters_moved_in_place, "parameters moved in place")
        moved = memo.get(function)
        if moved is None:
            names = parameter_names(function)
            text = self._body_text(function)
            moved = frozenset(match.group(1) for match in _MOVED_IN_PLACE.finditer(text) if match.group(1).split(".", 1)[0] in names)
            memo[function] = moved
        return moved

    def _modules_left_by_run(
        self, function: cst.FunctionDef, moved_in_place: frozenset[str], bound: dict[str, Value], exits: list[State]
    ) -> dict[str, Value]:
        """Where a run of ``function`` left the modules it moved in place (``moved_in_place``),
        joined over the states its ``return``s and its end leave, in the caller's terms: only a
        module whose device every path knows (one that a path handed on to code the analysis
        cannot see has none, and is left out, for the caller to forget). A module parameter
        must be one the call handed (``bound``)."""
        modules_left: dict[str, Value] = {}
        if not exits:
            return modules_left
        free = self.free_modules_moved_in_place(function) if function in self._nested_functions else frozenset()
        for moved in moved_in_place:
            root = moved.split(".", 1)[0]
            if moved in free and root not in bound:
                pass  # a name of the function around it: the same object the caller holds
            elif root not in bound or ("." not in moved and bound[root].kind not in (Kind.MODULE, Kind.CRITERION)):
                continue
            found = [exit_state.get(moved) for exit_state in exits]
            if any(value is None or value.kind not in (Kind.MODULE, Kind.CRITERION) or value.device is None for value in found):
                continue
            joined = found[0]
            for value in found[1:]:
                joined = join(joined, value)  # type: ignore[arg-type]
            if joined is None or joined.device is None:
                continue
            modules_left[moved] = _in_caller_terms(helpers.attributed_to(joined, function, self.factory_home), bound)
        return modules_left

    def _may_move(self, function: cst.FunctionDef) -> frozenset[str]:
        """Parameters the function's body may move or hand on: ``p.to(`` / ``p.cuda(`` and the
        like, ``p`` rebound, or ``p`` passed bare to another call."""
        memo = self.function_memo(function, self._moving_parameters, "moving parameters")
        moving = memo.get(function)
        if moving is None:
            params = function.params
            names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
            text = self._body_text(function)
            moving = frozenset(name for name in names if _moves_or_hands_on(name).search(text) or _hooked(name, text))
            memo[function] = moving
        return moving

    def checkpoint_load_call(
        self, qualname: Optional[str], callee: Value, args: tuple[tuple[cst.Arg, Value], ...]
    ) -> Optional[tuple[checkpoint_loads.UnmappedLoadCall, Optional[cst.FunctionDef]]]:
        """Is this call one of a checkpoint loader (a function of the file or of another module
        of the project whose ``torch.load`` reads the path it is given, or a library's, see
        torch_api.CHECKPOINT_LOADERS) that loads without a ``map_location``? With the loader's
        definition (None for a library's). See devicelint.analysis.checkpoint_loads."""
        if qualname is not None and qualname in api.CHECKPOINT_LOADERS:
            path_position, location_position, path_name, location_name = api.CHECKPOINT_LOADERS[qualname]
            loader = checkpoint_loads.CheckpointLoader(qualname, path_name, location_name, True, downloads=qualname in api.DOWNLOADING_CHECKPOINT_LOADERS)
            parameters = checkpoint_loads.library_parameters(args, path_position, location_position, (path_name, location_name))
            found = checkpoint_loads.unmapped_call(loader, args, parameters)
            return (found, None) if found is not None else None
        if callee.kind != Kind.FUNCTION or not isinstance(callee.info, cst.FunctionDef):
            return None
        function = callee.info
        loader = self._checkpoint_loader(function)
        if loader is None:
            return None
        found = checkpoint_loads.unmapped_call(loader, args, helpers.argument_parameters(function, args, False))
        return (found, function) if found is not None else None

    def _checkpoint_loader(self, function: cst.FunctionDef) -> Optional[checkpoint_loads.CheckpointLoader]:
        """The checkpoint loader ``function`` is, if any (computed once, see checkpoint_loads)."""
        # kept with the function's module (shared by every file of the batch that imports it)
        memo = self.function_memo(function, self._checkpoint_loaders, "checkpoint loaders")
        if function not in memo:
            home = self.home_state(function)
            memo[function] = None  # a loader that calls itself is none
            if "load" in self._body_text(function):  # spare the walk of bodies that cannot load
                memo[function] = checkpoint_loads.find_loader(
                    function, lambda node: self.qualname_of(node, home), lambda call: self._loader_called(call, home)
                )
        return memo[function]

    def _loader_called(self, call: cst.Call, home: State) -> Optional[checkpoint_loads.CheckpointLoader]:
        """The checkpoint loader a call inside another function calls by name (a free function
        of the same module, ``load_state_from_file(path)``), if it is one."""
        if not isinstance(call.func, cst.Name):
            return None
        callee = home.get(call.func.value)
        if callee is None or callee.kind != Kind.FUNCTION or not isinstance(callee.info, cst.FunctionDef):
            return None
        return self._checkpoint_loader(callee.info)

    def _forget_object_tensors(self, arg: cst.Arg, value: Value, state: State) -> None:
        """The caller's object of a plain class of the file after code that may store new
        tensors in it: the tensors it holds are unknown. Those its construction said (its
        fields) and, for an object that carries none, those the class-level view gives (what
        every construction hands in, what its methods store): read later, that view would
        be stale for this object."""
        if value.fields is not None:
            _forget_tensor_fields(arg, value, state)
            return
        key = dotted_name(arg.value)
        if key is None or key not in state:
            return
        assert isinstance(value.info, ClassInfo)
        seen = self._attributes_seen_by_methods(value.info)
        forgotten = tuple((name, UNKNOWN) for name, held in seen.items() if held.kind == Kind.TENSOR)
        if forgotten:
            state[key] = replace(state[key], fields=forgotten)

    def _escape(self, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> None:
        """A module handed to code we cannot see may be moved there: forget its device. So may
        the tensors an object of a class of the file holds (`setattr(box, "ids", ...)`)."""
        for arg, value in args:
            if _may_hold_own_tensors(value):
                self._forget_object_tensors(arg, value, state)
            if constructions.is_construction(value):
                key = dotted_name(arg.value)
                if key is not None:
                    state[key] = UNKNOWN  # no longer known to be where its constructor left it
            elif value.kind in (Kind.MODULE, Kind.CRITERION):
                if isinstance(value.info, CriterionInfo):
                    value.info.escaped = True
                key = dotted_name(arg.value)
                if key is not None and value.device is not None:
                    state[key] = Value(value.kind, None, value.origin, info=value.info, role=value.role)

    # ------------------------------------------------------------------ classes of the file

    def _instantiate(self, node: cst.Call, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...], default_device: Optional[Value]) -> Value:
        """An object of a class of the file built by ``node``; ``default_device``: the device
        factories use where it is built (``with torch.device(d)``), None for the CPU."""
        origin = Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED)
        if info.is_module:
            if not self.function_stack or self.function_stack[-1].class_info is None:
                self.facts.program_builds_own_model = True  # not (only) as a submodule of another
            device = None
            if default_device is not None and constructions.built_off_host(default_device):
                # its parameters are made on the default device: where that is, if known
                device = default_device.device
            elif not info.framework_placed and self._owns_parameters(info) and not self._places_itself(info):
                # its own parameters are made on the host; a module it is handed and keeps that is
                # already placed off the host (`Loss(actor)` after `actor.to(device)`) leaves its
                # parts on two devices: where "it" is, is then not one place
                device = None if self._keeps_placed_module(info, args) else CPU
            elif not info.framework_placed and not self._owns_parameters(info):
                device = self._placed_by_kept_modules(info, args)
            elif not info.framework_placed:
                placed = self._placed_by_own_init(info, args)
                if placed is not None:
                    device = placed[0]
                    origin = Origin(node, f"put on its `{placed[1]}` argument by `{spelled(node)}`")
            if self.emitting:
                self._note_module_construction(node, info, args)
            return Value(Kind.MODULE, device, origin, info=info)
        if info.is_dataset:
            device = self._placed_items(info, args) if self._places_data(info) else CPU
            if info.item_positions is None:
                info.item_positions = _item_positions(info)
            if info.item_text_keys is None:
                info.item_text_keys = _item_text_keys(info)
            return Value(Kind.DATASET, device, Origin(node, "dataset", from_data=True, provenance=Provenance.DATASET), info=info, role=_item_role(info))
        if self.emitting:
            self._note_construction(info, args)
        held = self._mapping_entries(node, info, args)
        if held is None:
            held = self._kept_batch(info, args)
        if held is not None:
            return held
        fields = _dataclass_fields_given(info, args)
        return Value(Kind.UNKNOWN, info=info, fields=fields if fields is not None else self._kept_tensors_given(info, args))

    def _kept_tensors_given(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[tuple[str, Value], ...]]:
        """``Tokens(torch.tensor(rows))`` of a plain class of the file whose own ``__init__``
        keeps a parameter as it came in (``self.input_ids = input_ids``, see kept_arguments):
        the object holds the tensor this construction handed it, by attribute, as a dataclass's
        object holds its fields. Where each construction hands in its own tensors, the object
        read later (``tokens.input_ids``, in whatever function it was returned to) is known
        even before the class's ``__init__`` has had the analysis of all its constructions.
        Only tensors; only attributes nothing else assigns or moves (no other method writes
        them, ``__init__`` assigns them once) in a class that moves nothing by a method of its
        own (``to``/``cuda``/``cpu``; except the construction inside such a method that builds
        a new object from moved copies, ``return Pair(self.ids.to(d), ...)``) or through
        ``setattr``/``__dict__``/``vars``; None otherwise."""
        kept = self.kept_arguments(info)
        if not kept or any(name in info.methods for name in ("__setattr__", "__getattr__")):
            return None
        movers = [info.methods[name] for name in ("to", "cuda", "cpu") if name in info.methods]
        if movers:
            # a class that places its objects itself: what one holds is known only where its own
            # `to()` builds it from moved copies (`return Pair(self.ids.to(d), ...)`), not where
            # the program builds one (it may move it with that method later)
            current = self.function_stack[-1].node if self.function_stack else None
            if current not in movers or self._moves_own_object(current):
                return None
        init = info.methods.get("__init__")
        bound = helpers.bind_arguments(init, args, skip_first=True) if init is not None else None
        if bound is None:
            return None
        written = self._written_elsewhere(info)
        given: list[tuple[str, Value]] = []
        for attribute, parameter in kept.items():
            value = bound[1].get(parameter)
            if value is None or value.kind not in (Kind.TENSOR, Kind.BATCH) or value.device is None:
                continue
            if attribute in written or attribute in info.movers:
                continue
            given.append((attribute, value))
        if not given or self._class_sets_attributes_indirectly(info):
            return None
        init_text = self._body_text(init)
        given = [(attribute, value) for attribute, value in given if _bound_once(init_text, attribute)]
        return tuple(given) or None

    def _class_sets_attributes_indirectly(self, info: ClassInfo) -> bool:
        """Does a method of the class set its attributes by name (``setattr``, ``__dict__``,
        ``vars(self)``)?"""
        return any(
            "setattr(" in text or "__dict__" in text or "vars(" in text
            for text in (self._body_text(method) for method in info.methods.values())
        )

    def _moves_own_object(self, method: cst.FunctionDef) -> bool:
        """Does a move method of the class (``to``/``cuda``/``cpu``) change its own object: store
        into an attribute of ``self`` or move one in place (anything but building and returning
        a new object from moved copies)?"""
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional:
            return True
        owner = re.escape(positional[0].name.value)
        text = self._body_text(method)
        stores = re.search(rf"\b{owner}\s*\.[\w\s.]*(?:[-+*/@%&|^]|//|\*\*)?=(?!=)", text)
        in_place = re.search(rf"\b{owner}\s*\.\s*\w+\s*\.\s*(?:\w+_|data)\b", text)
        return bool(stores or in_place or "setattr(" in text or "__dict__" in text or "vars(" in text) or bool(self._moved_in_place(method))

    def _kept_batch(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[Value]:
        """An object of a plain class of the file with a ``to()`` of its own, built from host
        tensors its ``__init__`` keeps as they came in (``self.ids = ids``, also in a dict of
        them), one of them the program's data: a batch on the host, which its class moves (its
        own ``to()`` still runs); its kept attributes read what it was given. None for anything
        else: a class without ``to()``, a kept tensor not on the host or of unknown place, no
        data among them."""
        own_to = info.find_method("to")
        init = info.find_method("__init__")
        if own_to is None or init is None or init[1] is not info:
            return None
        kept = self.kept_arguments(info)
        if not kept:
            return None
        bound = helpers.bind_arguments(init[0], args, skip_first=True)
        if bound is None:
            return None
        fields: list[tuple[str, Value]] = []
        data: Optional[Value] = None
        for attribute, parameter in kept.items():
            value = bound[1].get(parameter)
            if value is None:
                continue
            entries = [value]
            if value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous):
                entries = [value.info.element]
            elif value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
                entries = [item for item in value.info if isinstance(item, Value)]
            for entry in entries:
                if entry.kind not in (Kind.TENSOR, Kind.BATCH):
                    continue
                if entry.device is None or not entry.device.is_cpu:
                    return None
                if data is None and entry.origin is not None and entry.origin.from_data:
                    data = entry
            fields.append((attribute, value))
        if data is None:
            return None
        return Value(Kind.BATCH, CPU, data.origin, scalar=False, info=info, fields=tuple(fields))

    def _mapping_entries(self, node: cst.Call, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[Value]:
        """An object of a ``dict`` subclass of the file that builds it as ``dict`` does (no
        ``__init__`` or ``__new__`` of its own): a mapping of what it is given - one mapping,
        or keyword arguments (``Encoding(input_ids=ids, attention_mask=mask)``). Where every
        entry is a tensor, it is a dict batch where they are, which still runs the class's own
        methods (its ``to()``); None for anything else."""
        if not info.is_mapping or info.find_method("__init__") is not None or info.find_method("__new__") is not None:
            return None
        if any(_is_dataclass(klass) for klass in (info, *info.ancestors())):
            return None  # a dataclass's generated `__init__` takes its fields (transformers' and diffusers' outputs)
        positional = [value for arg, value in args if arg.keyword is None and not arg.star]
        if len(positional) == 1 and len(args) == 1 and positional[0].kind == Kind.CONTAINER and isinstance(positional[0].info, Homogeneous):
            mapping = positional[0]
        elif args and not positional:
            mapping = self._mapping_of_pairs(node, args)
        else:
            return None
        if mapping.kind != Kind.CONTAINER or not isinstance(mapping.info, Homogeneous) or mapping.info.some is not None:
            return None
        entry = mapping.info.element
        if entry.kind not in (Kind.TENSOR, Kind.BATCH) or entry.device is None:
            return None
        return Value(Kind.BATCH, entry.device, entry.origin, scalar=False, info=info)

    def kept_arguments(self, info: ClassInfo) -> dict[str, str]:
        """``self.encoder = encoder`` (also ``self.model = model.eval()``, ``self.encoder,
        self.decoder = encoder, decoder``) at the top level of the class's own ``__init__``: per
        attribute, the parameter it keeps as it came in (computed once). Models are composed by
        injection - ``Seq2Seq(encoder, decoder)``, ``GreedySearchDecoder(encoder, decoder)`` -
        and the module an attribute holds is then the one the constructions hand in."""
        if info.kept_arguments is None:
            info.kept_arguments = {}
            init = info.methods.get("__init__")
            positional = [*init.params.posonly_params, *init.params.params] if init is not None else []
            if init is not None and positional and not is_static_or_class_method(init):
                owner = positional[0].name.value
                for statement in helpers.body_statements(init):
                    if not isinstance(statement, helpers.SIMPLE_LINES):  # also `def __init__(self, e): self.e = e`
                        continue
                    for small in statement.body:
                        if isinstance(small, cst.Assign) and len(small.targets) == 1:
                            for target, value in _paired_targets(small.targets[0].target, small.value):
                                parameter = self._kept_parameter(init, owner, target, value)
                                if parameter is not None:
                                    info.kept_arguments[parameter[0]] = parameter[1]
        return info.kept_arguments

    def _kept_parameter(self, init: cst.FunctionDef, owner: str, target: cst.BaseExpression, value: cst.BaseExpression) -> Optional[tuple[str, str]]:
        """(attribute, parameter) where ``target = value`` is ``self.attribute = parameter`` (or
        the parameter put in evaluation or training mode, which returns the module itself)."""
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == owner):
            return None
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("eval", "train") and not value.args:
            value = value.func.value
        if not isinstance(value, cst.Name) or value.value == owner:
            return None
        parameter = self.parameter_read_unchanged(init, value)
        return (target.attr.value, parameter) if parameter is not None else None

    def _injected_modules(self, info: ClassInfo) -> dict[str, Value]:
        """Per attribute the class's ``__init__`` keeps a parameter in (see kept_arguments), the
        module every construction of the class (or of a subclass that runs that ``__init__``)
        hands that parameter, where they all hand a module of one class of the file:
        ``GreedySearchDecoder(encoder, decoder)`` with ``encoder = EncoderRNN(...)``. Nothing
        where a construction hands something else or leaves it out, where classes disagree
        (as a join of two classes would be), or where the file may build the class in a way the
        analysis has not met (yet): a call it has not run, a subclass with an ``__init__`` of its
        own, the class handed on uncalled."""
        kept = self.kept_arguments(info)
        init = info.methods.get("__init__")
        if not kept or init is None or not self.facts.module_constructions:
            return {}
        sites = [built for built in self.facts.module_constructions.values() if built.init is init]
        if not sites:
            return {}
        subclasses = self.subclasses_of(info)
        if any("__init__" in other.methods for other in subclasses):
            return {}
        counts = [self._calls_in_text(other) for other in (info, *subclasses)]
        if -1 in counts or len(sites) != sum(counts):
            return {}
        injected: dict[str, Value] = {}
        for attribute, parameter in kept.items():
            handed = [built.bound.get(parameter) for built in sites]
            first = handed[0]
            if (
                first is not None and first.device is not None and first.device.may_be_accelerator
                and (first.kind == Kind.TENSOR or first.role is Role.DISTRIBUTION)
            ):
                # a tensor (or a distribution) placed where the run's device is, kept as a plain
                # attribute: `Module.to()` does not touch it, so the methods see it where every
                # construction put it (`Flow(prior)` with `prior = Normal(mu.to(device), ...)`)
                if all(
                    value is not None and value.kind == first.kind and value.role is first.role and value.device == first.device
                    for value in handed[1:]
                ):
                    injected[attribute] = first
                continue
            if first is None or not isinstance(first.info, ClassInfo):
                continue
            plain = first.kind == Kind.UNKNOWN and not first.info.is_module and not first.info.is_dataset
            if first.kind not in (Kind.MODULE, Kind.CRITERION) and not plain:
                continue
            if any(value is None or value.kind != first.kind or value.info is not first.info for value in handed[1:]):
                continue
            if plain:
                # an object of a plain class of the file (a triples factory, a vocabulary): its
                # attributes are what that class's `__init__` leaves
                injected[attribute] = Value(Kind.UNKNOWN, None, Origin(sites[0].node, f"the `{first.info.name}` handed to `{info.name}()`"), info=first.info)
                continue
            injected[attribute] = Value(first.kind, None, Origin(sites[0].node, f"the `{first.info.name}` module handed to `{info.name}()`"), info=first.info)
        return injected

    def _calls_in_text(self, info: ClassInfo) -> int:
        """How many times the file's text calls the class by its name; -1 (never a count of
        constructions) where it also names it otherwise - hands it on as a class, annotates
        with it, `isinstance` - so the file may build objects of it that the analysis does not
        see."""
        if info.calls_in_text is None:
            words, _ = self._file_word_counts()
            called = self._called_counts()
            if self._class_or_super_counts is None:
                self._class_or_super_counts = Counter(
                    defined or supered for defined, supered in _CLASS_OR_SUPER.findall(self._file_text())
                )
            defined_or_super = self._class_or_super_counts[info.name]
            named_otherwise = words[info.name] - called[info.name] - defined_or_super
            info.calls_in_text = called[info.name] if named_otherwise == 0 else -1
        return info.calls_in_text

    def _kept_module_arguments(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> list[Value]:
        """The modules (and criteria) a construction hands to the class's ``__init__`` that it
        keeps as attributes."""
        kept = self.kept_arguments(info)
        found = info.find_method("__init__")
        if not kept or found is None:
            return []
        site = helpers.bind_arguments(found[0], args, True)
        if site is None:
            return []
        handed = (site[1][parameter] for parameter in kept.values() if parameter in site[1])
        return [value for value in handed if value.kind in (Kind.MODULE, Kind.CRITERION)]

    def _keeps_placed_module(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> bool:
        """Does the constructor keep a module it is handed that may be on an accelerator?"""
        return any(value.device is not None and value.device.may_be_accelerator for value in self._kept_module_arguments(info, args))

    def _placed_by_own_init(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[Device, str]]:
        """``Encoder(vocab, dim, device=device)`` whose ``__init__`` moves every weight it makes
        to its ``device`` parameter (``self.network = nn.Sequential(...).to(device)``): the
        module is where the construction's argument says, once that is a device that may be the
        accelerator. None where some weight is made elsewhere (or where the class's own weights
        are not known), where the weights follow different parameters, where the class keeps
        a module it is handed, or where the construction hands no such device."""
        init = info.methods.get("__init__")
        if init is None or any(base.is_module and "__init__" in base.methods for base in info.bases):
            return None
        if not info.init_analysed and not info.attributes:
            self._preview_init(info)
        names = parameter_names(init)
        followed: set[str] = set()
        for value in info.attributes.values():
            weights = value.kind in (Kind.MODULE, Kind.CRITERION) or value.kind == Kind.TENSOR and value.role in (Role.PARAMETER, Role.BUFFER)
            if not weights:
                continue
            device = value.device
            if device is None or device.kind != "follows" or value.origin is None or not value.origin.moved:
                return None
            label = device.label
            attribute = label[len("self."):] if label not in names and label.startswith("self.") else None
            if attribute is not None and attribute in self.kept_arguments(info) and _bound_once(self._body_text(init), attribute):
                # `self.device = device`, then `.to(self.device)`: the attribute is the parameter
                label = self.kept_arguments(info)[attribute]
            if label not in names:
                return None
            followed.add(label)
        if len(followed) != 1 or self._kept_module_arguments(info, args):
            return None
        parameter = followed.pop()
        site = helpers.bind_arguments(init, args, True)
        given = site[1].get(parameter) if site is not None else None
        if given is None or given.kind != Kind.DEVICE or given.device is None:
            return None
        device = given.device
        if not device.may_be_accelerator or device.argument or device.kind == "follows":
            return None
        for (arg, _), name in zip(args, helpers.argument_parameters(init, args, True)):
            spelled_as = dotted_name(arg.value) if name == parameter and not arg.star else None
            if spelled_as is not None:
                device = replace(device, label=spelled_as)  # where the caller says: `device`, `args.device`
        return device, parameter

    def _placed_by_kept_modules(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[Device]:
        """A module class that owns no parameters of its own but keeps the modules its
        constructor is handed (``GreedySearchDecoder(encoder, decoder)``) is where they are:
        their device, where each is a module placed on one device that may be the accelerator."""
        devices = {value.device for value in self._kept_module_arguments(info, args)}
        if len(devices) != 1:
            return None
        device = devices.pop()
        return device if device is not None and device.may_be_accelerator and not device.argument else None

    def _note_module_construction(self, node: cst.Call, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> None:
        """``AppendFeatures(torch.rand(5, 2))``: remember what the call hands to the module's
        ``__init__`` (a tensor it may keep as a plain attribute, which ``model.to()`` leaves
        where it was made) and whose model builds it, if any; its moves are noted by ``_move``."""
        found = info.find_method("__init__")
        site = helpers.bind_arguments(found[0], args, True) if found is not None else None
        if found is None or site is None:
            return
        context = self.current_function
        builder = context.class_info
        builds_model = (
            builder is not None
            and builder.is_module
            and context.node is not None
            and (context.name == "__init__" or context.name in self._init_only_helpers(builder))
        )
        known = self.facts.module_constructions.get(node)
        if known is not None:
            known.bound = site[1]  # a loop runs again: its last pass holds the joined state
            return
        self.facts.module_constructions[node] = ModuleConstruction(
            node, found[0], site[1], submodule_of=builder if builds_model else None, class_info=info
        )
        # a module's `__init__` is analysed before the code that builds it (its other methods
        # need its attributes): a pass on what this construction hands it follows it there
        # (see _specialise_by_call_site)
        self._record_site_call(found[0], node, site[1])

    def _placed_items(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[Device]:
        """Where a dataset that places its own data puts its items, for this construction:
        ``PointCloudDataset(root, device=device)`` whose ``__init__`` keeps ``self.device =
        device`` and whose ``__getitem__`` returns ``torch.tensor(..., device=self.device)``
        gives items on ``device``. Its ``__init__`` runs silently on these arguments, then its
        ``__getitem__`` on the attributes that left; the device is known only where every
        ``return`` gives a tensor on one device that can be the accelerator. None otherwise."""
        found_init, found_item = info.find_method("__init__"), info.find_method("__getitem__")
        if found_init is None or found_item is None or self._inline_depth >= helpers.MAX_DEPTH:
            return None
        (init, init_owner), (getitem, item_owner) = found_init, found_item
        if init in self._inlining or getitem in self._inlining:
            return None
        site = helpers.bind_arguments(init, args, True)
        item_params = [*getitem.params.posonly_params, *getitem.params.params]
        if site is None or site[0] is None or not item_params:
            return None
        self_value = Value(Kind.UNKNOWN, info=info)
        with self._silent_run(init), self._running(init, init_owner, None):
            state = self._parameter_state(init, site[0], self_value, None, site[1], use_defaults=True)
            self.exec_block(helpers.body_statements(init), state)
        prefix = site[0].name.value + "."
        attributes = {key[len(prefix):]: value for key, value in state.items() if key.startswith(prefix) and "." not in key[len(prefix):]}
        with self._silent_run(getitem) as (returns, _), self._running(getitem, item_owner, None):
            state = self._parameter_state(getitem, None, UNKNOWN, None, {}, use_defaults=True)
            item_self = item_params[0].name.value
            state[item_self] = self_value
            for attribute, value in attributes.items():
                state[f"{item_self}.{attribute}"] = value
            self.exec_block(helpers.body_statements(getitem), state)
        devices = {value.device for value in returns if value.kind == Kind.TENSOR}
        if not returns or len(devices) != 1 or any(value.kind != Kind.TENSOR for value in returns):
            return None
        device = devices.pop()
        handed = [value.device for value in site[1].values() if value.kind == Kind.DEVICE and value.device is not None and value.device.may_be_accelerator]
        if device is None or not (device.is_accel or device in handed):
            return None  # not on a device the program chose or handed in (`self.cache.unsqueeze(0)`)
        # said in the caller's terms: the device handed to the constructor, not `self.device`
        return handed[0] if len(handed) == 1 else device

    def _note_construction(self, info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> None:
        """``SummaryGraph(model, dummy_input)``: an object of a plain class of the file is built
        from these arguments, so its ``__init__`` is analysed with them, as a free function is
        with its callers' (a module's or a dataset's constructor takes configuration)."""
        found = info.find_method("__init__")
        if found is None:
            return
        init = found[0]
        site = helpers.bind_arguments(init, args, True)
        self._call_sites.setdefault(init, []).append(site[1] if site is not None else None)

    def note_base_init_call(self, args: tuple[tuple[cst.Arg, Value], ...]) -> None:
        """``super().__init__(config, **kwargs)`` in the ``__init__`` of a plain class of the
        file: the nearest base of the file that defines ``__init__`` is built from these
        arguments, as by a construction (see _note_construction); what the spreads pass on is
        unknown to it."""
        context = self.current_function
        info = context.class_info
        if info is None or info.is_module or info.is_dataset or context.name != "__init__":
            return
        for base in info.bases:
            found = base.find_method("__init__")
            if found is not None:
                break
        else:
            return
        init, owner = found
        if owner.is_module or owner.is_dataset:
            return
        site = helpers.bind_arguments(init, args, True, forwarding=True)
        self._call_sites.setdefault(init, []).append(site[1] if site is not None else None)

    def inputs_placed_by_module(self, module: Value, args: tuple[tuple[cst.Arg, Value], ...]) -> list[bool]:
        """Per argument of a call of a module whose class the analysis has read (in this file or
        another module of the project): may the input be on any device? True where the module
        owns no parameters or buffers (a sinusoidal ``Timesteps``) or its ``forward`` moves that
        input itself (``frame_indices.to(device=...)``) or hands it where PyTorch reads it on the
        host (``pack_padded_sequence(x, lengths)``: a batch's lengths left on the CPU are right)."""
        info = module.info
        if not isinstance(info, ClassInfo):
            return [False] * len(args)
        found = info.find_method("forward")
        if not self._owns_parameters(info):
            return self._inputs_placed_by_weightless_module(info, found[0] if found is not None else None, args)
        if found is None:
            return [False] * len(args)
        forward = found[0]
        moved = self._inputs_moved_by_forward(forward, info)
        return [name is not None and name in moved for name in helpers.argument_parameters(forward, args, skip_first=True)]

    def _holds_no_modules(self, info: ClassInfo) -> bool:
        """Does a module class that creates no weights also keep no module handed to it
        (``GreedySearchDecoder(encoder, decoder)`` keeps two, whose own ``forward`` may read an
        input on the host)? A kept constructor argument of unknown kind that a method calls
        (``self.encoder(x, lengths)``) may be one; a built-in loss (a criterion) is not."""
        kept = set(self.kept_arguments(info))
        for owner in info.ancestors():
            kept |= set(self.kept_arguments(owner))
        called: Optional[set[str]] = None
        for attribute, value in self._attributes_seen_by_methods(info).items():
            if value.kind == Kind.MODULE:
                return False
            if attribute in kept and value.kind == Kind.UNKNOWN:
                if called is None:
                    text = "".join(self._definition_text(method) for owner in (info, *info.ancestors()) for method in owner.methods.values())
                    called = set(_SELF_ATTRIBUTE_CALL.findall(text))
                if attribute in called:
                    return False
        return True

    def _inputs_moved_by_forward(self, forward: cst.FunctionDef, info: ClassInfo) -> frozenset[str]:
        """The parameters a ``forward`` (a method of ``info``'s class) moves itself, hands, as
        they came in, where PyTorch reads them on the host, or reads only on the host itself
        (``h, w = sizes.tolist()``; see host_reads) - see inputs_placed_by_module."""
        memo = self.function_memo(forward, self._moved_inputs, "moved inputs")
        moved = memo.get(forward)
        if moved is None:
            text = self._body_text(forward)
            params = forward.params
            names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
            find_method = method_finder(info)
            memo[forward] = frozenset()  # a forward handing its input back to its own class: not proven
            moved = frozenset(
                name
                for name in names
                if _moved_itself(name).search(text)
                or _read_on_host(name).search(text)
                or _only_taken_to_host(name, text)
                or self._host_reads.read_only_on_host(forward, name, find_method)
            )
            moved = memo[forward] = moved | self._inputs_placed_by_submodules(forward, info, frozenset(names) - moved)
        return moved

    def _inputs_placed_by_submodules(self, forward: cst.FunctionDef, info: ClassInfo, names: frozenset[str]) -> frozenset[str]:
        """The parameters among ``names`` that ``forward`` hands, as they came in, to a
        submodule of a class of the file whose own ``forward`` places that input (see
        _inputs_moved_by_forward): ``self.block(x, label)``, or ``layer(x, label)`` for each
        ``layer`` of ``self.layers`` (a ModuleList of one class). An input placed there, two
        modules down, may come in on any device."""
        if not names:
            return frozenset()
        positional = [*forward.params.posonly_params, *forward.params.params]
        if not positional:
            return frozenset()
        own = positional[0].name.value
        finder = _SubmoduleCalls(own)
        walk.visit(forward.body, finder)
        loops = finder.loops  # `for layer in self.layers:` -> layer: layers
        placed: set[str] = set()
        for callee, on_self, call in finder.calls:
            if not on_self and callee not in loops:
                continue
            attribute = callee if on_self else loops[callee]
            kept = self._attributes_seen_by_methods(info, only=attribute).get(attribute)
            if kept is None or kept.kind != Kind.MODULE:
                continue
            sub_info = kept.info.element.info if isinstance(kept.info, Homogeneous) and not on_self else kept.info
            if not isinstance(sub_info, ClassInfo) or sub_info is info or not sub_info.is_module:
                continue
            found = sub_info.find_method("forward")
            if found is None:
                continue
            sub_moved = self._inputs_moved_by_forward(found[0], sub_info)
            handed = tuple((arg, UNKNOWN) for arg in call.args)
            for arg, parameter in zip(call.args, helpers.argument_parameters(found[0], handed, True)):
                if not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in names and parameter in sub_moved:
                    placed.add(arg.value.value)
        return frozenset(placed)

    def _inputs_placed_by_weightless_module(
        self, module_info: ClassInfo, forward: Optional[cst.FunctionDef], args: tuple[tuple[cst.Arg, Value], ...]
    ) -> list[bool]:
        """A module that owns no parameters or buffers (a loss of the file, ``NPairsLoss``)
        computes with nothing but its inputs, which may come in on any device - on one device,
        where its ``forward`` combines them (see combined_inputs): an input with a dimension
        on the host is misplaced beside another input, combined with it there, that may be on
        an accelerator (``self.loss_fn(predict, torch.arange(n))`` where ``forward`` runs
        ``self.ce(self.similarities(x1, x2), target)`` on ``x1, x2 = predict``)."""
        if forward is None or not self._holds_no_modules(module_info):
            return [True] * len(args)
        memo = self.function_memo(forward, self._combined_inputs, "combined inputs")
        pairs = memo.get(forward)
        if pairs is None:
            pairs = memo[forward] = combined_parameter_pairs(forward, skip_first=True)
        if not pairs:
            return [True] * len(args)
        moved = self._inputs_moved_by_forward(forward, module_info)
        names = helpers.argument_parameters(forward, args, skip_first=True)
        placed = []
        for (_, value), name in zip(args, names):
            misplaced = (
                name is not None
                and name not in moved
                and value.kind in (Kind.TENSOR, Kind.BATCH)
                and value.device is not None
                and value.device.is_cpu
                and value.scalar is not True
                and any(
                    other is not None and (name, other) in pairs and other not in moved and may_hold_accelerator_tensor(other_value)
                    for (_, other_value), other in zip(args, names)
                )
            )
            placed.append(not misplaced)
        return placed

    def forward_parameters(self, module: Value, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[cst.FunctionDef, list[Optional[str]]]]:
        """For a call of a module whose class this file defines: its ``forward`` and the
        parameter each argument binds (None where it cannot be told); None for another module."""
        info = module.info
        if not isinstance(info, ClassInfo):
            return None
        found = info.find_method("forward")
        if found is None or self.foreign_home(found[0]) is not None:
            return None
        forward = found[0]
        return forward, helpers.argument_parameters(forward, args, skip_first=True)

    def own_method_inputs(
        self, module: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...]
    ) -> Optional[tuple[cst.FunctionDef, list[Optional[str]], list[bool]]]:
        """``crf.decode(emissions, mask)``: a method other than ``forward`` that the module's
        class (in this file) defines and that computes with the module's own weights - it reads
        a parameter, buffer or submodule of ``self``, or calls ``self`` - so its inputs must be
        where the module is, as ``forward``'s must. The method, the parameter each argument binds
        (None where it cannot be told), and per argument whether the method places that input
        itself (moves it, or hands it where PyTorch reads it on the host; see
        inputs_placed_by_module). None for other calls: nn.Module's own methods, static and
        class methods, a method a subclass of the file overrides (which body runs depends on the
        object), one defined in another module of the project, or one that never touches the
        module's weights (``model.preprocess(image)``: its inputs may be anywhere)."""
        info = module.info
        if not isinstance(info, ClassInfo) or not info.is_module or method in _MODULE_CALL_METHODS:
            return None
        found = info.find_method(method)
        if found is None or self.foreign_home(found[0]) is not None or self._overridden_below(info, method):
            return None
        function = found[0]
        if is_static_or_class_method(function) or not self._computes_with_own_weights(info, function):
            return None
        moved = self._inputs_moved_by_forward(function, info)
        names = helpers.argument_parameters(function, args, skip_first=True)
        return function, names, [name is not None and name in moved for name in names]

    def _computes_with_own_weights(self, info: ClassInfo, function: cst.FunctionDef) -> bool:
        """Does a method of a module class read one of the module's parameters, buffers or
        submodules (``self.transitions``, ``self.encoder(x)``), or call the module itself?"""
        memo = self.function_memo(function, self._own_weight_readers, "own weight readers")
        if function not in memo:
            weights = {
                attribute
                for attribute, value in self._attributes_seen_by_methods(info, function).items()
                if value.kind == Kind.MODULE or value.role in (Role.PARAMETER, Role.BUFFER)
            }
            positional = [*function.params.posonly_params, *function.params.params]
            receiver = re.escape(positional[0].name.value) if positional else "self"
            text = self._body_text(function)
            calls_itself = re.search(rf"\b{receiver}(?:\.forward)?\s*\(", text) is not None
            read = set(re.findall(rf"\b{receiver}\.([A-Za-z_]\w*)", text))
            memo[function] = calls_itself or not read.isdisjoint(weights)
        return memo[function]

    def parameter_read_unchanged(self, function: cst.FunctionDef, expression: cst.BaseExpression) -> Optional[str]:
        """The parameter of ``function`` that ``expression`` reads as it came in: the name
        itself, or a chain of tensor methods that keep the device and subscripts on it
        (``labels.view(-1)``, ``labels[:, 0]``); None where the body rebinds the parameter
        anywhere (``labels = labels.to(logits.device)``) or the expression is anything else."""
        parameter = helpers.parameter_read_through(function, expression)
        if parameter is None:
            return None
        memo = self.function_memo(function, self._rebound_names, "rebound names")
        rebound = memo.get(function)
        if rebound is None:
            rebound = memo[function] = helpers.assigned_names(helpers.body_statements(function))
        return None if parameter in rebound else parameter

    def placed_where_parameter_is(self, function: cst.FunctionDef, value: Value) -> Optional[str]:
        """The parameter of ``function`` whose device a value was put on or made on, read as it
        came in (``batch_prob.to(device=input.device)``, ``w.to(x)``, ``torch.zeros(n,
        device=x.device)``): the value follows that input wherever its caller put it, not the
        model - though the function's own analysis takes both to be on the model's device."""
        origin = value.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return None
        return self._parameter_named_as_device(function, origin.node)

    def places_where_parameter_is(self, function: cst.FunctionDef, parameter: str) -> bool:
        """Does ``function`` put or make a tensor on the device of its parameter ``parameter``
        (see placed_where_parameter_is)? Code that does was written for inputs on any device."""
        return any(self._parameter_named_as_device(function, call) == parameter for call in own_scope_calls(function.body))

    def _parameter_named_as_device(self, function: cst.FunctionDef, call: cst.Call) -> Optional[str]:
        """The parameter of ``function`` (read as it came in) that ``call`` names as the device to
        move to or make on: ``.to(x)``, ``.to(device=x.device)``, ``.type_as(x)``, ``device=x.device``."""
        func = call.func
        # a move's positional argument names a device or a tensor; a factory's are sizes
        positional_is_device = isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda", "type_as")
        for arg in call.args:
            if arg.star or (arg.keyword.value != "device" if arg.keyword is not None else not positional_is_device):
                continue
            expression = arg.value
            if isinstance(expression, cst.Attribute) and expression.attr.value == "device":
                expression = expression.value
            parameter = self.parameter_read_unchanged(function, expression)
            if parameter is not None:
                return parameter
        return None

    def parameter_converted_in_place(self, function: cst.FunctionDef, expression: cst.BaseExpression) -> Optional[tuple[str, tuple[cst.Call, ...]]]:
        """``self.mean = mean`` where ``function`` re-binds the parameter ``mean`` only to a torch
        conversion of itself, on the paths that need one (``if isinstance(mean, (list, tuple)):
        mean = torch.tensor(mean)[None]``): the parameter and its conversions. What comes
        in as a list leaves as a tensor made on the host; a tensor may pass unchanged. None for
        anything else, also a parameter never re-bound (see parameter_read_unchanged)."""
        if not isinstance(expression, cst.Name):
            return None
        if expression.value not in parameter_names(function):
            return None
        memo = self.function_memo(function, self._conversions_in_place, "conversions in place")
        key = (function, expression.value)
        if key not in memo:
            memo[key] = helpers.conversions_of(helpers.body_statements(function), expression.value)
        calls = memo[key]
        if not calls or any(self.factory_name(call) not in _HOST_CONVERSIONS or keyword_arg(call, "device") is not None for call in calls):
            return None
        return expression.value, tuple(calls)

    def owns_parameters(self, info: ClassInfo) -> bool:
        """Does the module class (or a base in this file) create parameters or submodules?"""
        return self._owns_parameters(info)

    def _owns_parameters(self, info: ClassInfo) -> bool:
        if info.owns_parameters is None:
            info.owns_parameters = False
            init = info.methods.get("__init__")
            if init is None:
                info.owns_parameters = any(self._owns_parameters(base) for base in info.bases)
            else:
                finder = _ParameterFinder(self, info, self.home_state(init))
                walk.visit(init.body, finder)
                info.owns_parameters = finder.found or any(self._owns_parameters(base) for base in info.bases)
        return info.owns_parameters

    def _places_itself(self, info: ClassInfo) -> bool:
        if info.places_itself is None:
            init = info.methods.get("__init__")
            text = self._definition_text(init) if init is not None else ""
            info.places_itself = bool(_PLACEMENT_TEXT.search(text)) or any(self._places_itself(base) for base in info.bases)
        return info.places_itself

    def replaces_own_tensors_on_call(self, info: ClassInfo) -> bool:
        """Does a call of the module class move its own tensors - in ``forward`` or a method of
        its own that ``forward`` calls, however deep (``self.cast_types(dtype, device)``)? It
        moves itself (``self.to(device)``) or re-binds one of its tensors to a move of that
        tensor (``self.proxies.data = self.proxies.data.to(device)``, ``self.w = self.w.to(x)``)
        to a device other than the host: such a module goes where each call's inputs are, and
        where it was built says nothing of where its weights meet them."""
        if info.replaces_own_on_call is None:
            info.replaces_own_on_call = False  # a cycle of calls finds nothing more
            found = info.find_method("forward")
            seen: set[str] = set()
            pending = [found[0]] if found is not None else []
            while pending and not info.replaces_own_on_call:
                method = pending.pop()
                if method.name.value in seen or method.name.value == "__init__":
                    continue
                seen.add(method.name.value)
                moved_here, called = _own_tensor_moves(method)
                if moved_here:
                    info.replaces_own_on_call = True
                for name in called:
                    callee = info.find_method(name)
                    if callee is not None and name not in seen:
                        pending.append(callee[0])
        return info.replaces_own_on_call

    def _places_data(self, info: ClassInfo) -> bool:
        text = "".join(self._definition_text(method) for name, method in info.methods.items() if name in ("__getitem__", "__iter__", "__init__"))
        return bool(_PLACEMENT_TEXT.search(text)) or any(self._places_data(base) for base in info.bases)


def _moved_off_host_call(call: cst.Call) -> bool:
    """``x.to(device)``, ``x.cuda()``, ``x.type_as(y)``: a move whose target is not spelled as the
    host; not a cast alone (``x.to(torch.float16)``, ``x.to(y.dtype)``, ``x.to(dtype=...)``)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("to", "cuda", "type_as"):
        return False
    if func.attr.value != "to":
        return True
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "device":
            target = arg.value
            if type(target) is cst.SimpleString and "cpu" in target.value.lower():
                return False
            if type(target) is cst.Attribute and target.attr.value in ("cpu", "dtype"):
                return False
            if type(target) is cst.Attribute and (dotted_name(target) or "").startswith("torch.") and target.attr.value in api.DTYPE_NAMES:
                return False
            return True
    return False  # keywords alone: a dtype, `non_blocking=`, `copy=`


def _moves_in_chain(call: cst.Call) -> bool:
    """Is a link of the chain of calls ending in ``call`` a move off the host
    (``self.p.data.to(device).type(dtype)``)?"""
    node: cst.BaseExpression = call
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        if _moved_off_host_call(node):
            return True
        node = node.func.value
    return False


def _moved_receiver_root(call: cst.Call) -> Optional[str]:
    """The dotted name a chain of calls ending in ``call`` starts from: ``self.p.data`` for
    ``self.p.data.float().to(d)``; None where the chain starts from anything else."""
    node: cst.BaseExpression = call.func.value if type(call.func) is cst.Attribute else call.func
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        node = node.func.value
    return dotted_name(node)


#: what a walk of statements enters (see _own_tensor_moves)
_STATEMENT_PARTS = (cst.BaseStatement, cst.BaseSuite, cst.BaseSmallStatement, cst.Else, cst.ExceptHandler, cst.Finally)


def _own_tensor_moves(method: cst.FunctionDef) -> tuple[bool, set[str]]:
    """For Summaries.replaces_own_tensors_on_call: does ``method`` move ``self`` off the host
    or re-bind a tensor of ``self`` to a move of it there, and the names of the methods of
    ``self`` it calls (``self.name(...)``)? Not entering nested functions, classes, lambdas."""
    called: set[str] = set()
    moved = False
    for call in own_scope_calls(method.body):
        func = call.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            called.add(func.attr.value)
            if func.attr.value in ("to", "cuda") and _moved_off_host_call(call):
                moved = True
    if moved:
        return True, called
    stack: list[cst.CSTNode] = [method.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Assign and type(node.value) is cst.Call and _moves_in_chain(node.value):
            root = _moved_receiver_root(node.value)
            for target in node.targets:
                name = dotted_name(target.target)
                if name is None or not name.startswith("self.") or root is None:
                    continue
                own = name[:-len(".data")] if name.endswith(".data") else name
                if root == own or root == own + ".data":
                    return True, called
            continue
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) and node is not method.body:
            continue
        stack.extend(child for child in walk.children(node) if isinstance(child, _STATEMENT_PARTS))
    return False, called


def _is_informative(value: Value) -> bool:
    """Does a call's argument tell its parameter more than the function's own body does? An
    object of unknown kind does only where it was placed on a device (`input_.to("cuda")`),
    built by a constructor not told one, or is an object of a class of the file (a hand-written
    batch iterator handed to `train(model, iterator)`: its `__iter__` says what the loop gets),
    or a config whose entries the caller stored (`cfg["device"] = dev`)."""
    return (
        value.kind != Kind.UNKNOWN
        or constructions.is_construction(value)
        or value.device is not None
        or isinstance(value.info, ClassInfo)
        or value.has_items
    )


def _informative(site: dict[str, Value]) -> dict[str, Value]:
    return {name: value for name, value in site.items() if _is_informative(value)}


def _placement(value: Optional[Value]) -> tuple[Kind, Optional[str]]:
    """What a parameter's value is, as far as placing it goes: its kind, and whether it is on
    the host, on a device that can be the accelerator (only where the analysis says so), or
    neither known. A tensor the caller was itself handed (``follows(x, argument=True)``) is
    wherever its own caller put it: not known here (a pass of that caller's calls, with what
    they hand it, follows the chain)."""
    if value is None:
        return Kind.UNKNOWN, None
    if value.kind == Kind.FUNCTION and isinstance(value.info, cst.FunctionDef):
        # a function of the file handed as a callback (`metric=neg_mse`): which one it is says
        # what calling the parameter runs
        return value.kind, f"def {value.info.name.value} {id(value.info)}"
    device = value.device
    if value.kind == Kind.CONTAINER and device is None:
        device = _where_every_tensor_is(value)  # a list of tensors (`[torch.as_tensor(page) for page in pages]`)
        if device is None and value.has_items:
            # `{"video": torch.randn(...), "text": {...}}`: a dict whose entries are remembered by
            # key (see Value.with_item), the tensor ones all in one place
            device = _where_every_tensor_entry_is(value)
    if device is None or device.is_symbolic and device.argument:
        return value.kind, None
    if device.is_cpu:
        return value.kind, "host"
    if device.may_be_accelerator:
        return value.kind, "accelerator"
    return value.kind, device.kind


def _input_mismatch(value: Value, module_device: Device) -> bool:
    """Is a tensor handed to a module on another device than the module (a host batch given
    to a moved model), or a list or tuple of known entries among which is a host data batch and
    none on an accelerator (``model([ids, mask])``, unpacked by its ``forward``)? The rules
    report that at the call. (A list built in a loop or a comprehension - pages, crops - is not
    checked there: a pass of ``forward`` follows it.)"""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        entries = [entry for entry in value.info if isinstance(entry, Value)]
        if any(entry.kind == Kind.TENSOR and entry.device is not None and entry.device.may_be_accelerator for entry in entries):
            return False
        return any(
            _input_mismatch(entry, module_device) and entry.origin is not None and entry.origin.from_data for entry in entries
        )
    return value.kind in (Kind.TENSOR, Kind.BATCH) and value.device is not None and value.device.conflicts_with(module_device)


def _where_every_tensor_is(container: Value) -> Optional[Device]:
    """The device of a list or tuple whose every element is a tensor, all on that device."""
    elements = [container.info.element] if isinstance(container.info, Homogeneous) else list(container.info) if isinstance(container.info, tuple) else []
    if not elements or any(not isinstance(element, Value) or element.kind != Kind.TENSOR for element in elements):
        return None
    devices = {element.device for element in elements}
    return devices.pop() if len(devices) == 1 else None


def _where_every_tensor_entry_is(container: Value) -> Optional[Device]:
    """The device of the tensors a dict holds at the constant keys it remembers (its other
    entries are no tensors), where there is one such tensor at least and they are all there."""
    devices = {entry.device for name, entry in container.fields or () if name.startswith("[") and entry.kind == Kind.TENSOR}
    return devices.pop() if len(devices) == 1 else None


def _values_given(site: Optional[dict[str, Value]]) -> Optional[frozenset]:
    """What a call hands a function, as far as its analysis can tell calls apart: placements
    and literals (``output_type="pt"``)."""
    if site is None:
        return None
    return frozenset((name, _placement(value), _literal(value)) for name, value in site.items())


def _literal(value: Value) -> object:
    """The string or flag a value is known to be, if any: what a pass on one call's values
    chooses branches by (see FlowAnalyzer._known_truth)."""
    return value.literal if isinstance(value.literal, (str, bool)) else None


def _placements(bound: dict[str, Value]) -> frozenset:
    return frozenset((name, _placement(value)) for name, value in bound.items())


def _placed_otherwise(site: dict[str, Value], joined: dict[str, Value]) -> bool:
    """Does a call hand some parameter a value whose placement is known and is not the one the
    function's joined analysis started from?"""
    for name, value in site.items():
        placement = _placement(value)
        if placement[1] is not None and placement != _placement(joined.get(name)):
            return True
    return False


def _own_function(expression: cst.BaseExpression, home: State) -> Optional[cst.FunctionDef]:
    """The function of the file a decorator's bare name is bound to at module level."""
    if not isinstance(expression, cst.Name):
        return None
    known = home.get(expression.value)
    return known.info if known is not None and known.kind == Kind.FUNCTION and isinstance(known.info, cst.FunctionDef) else None


def _dataclass_fields_given(info: ClassInfo, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[tuple[str, Value], ...]]:
    """What ``Frame(eye, zeros)`` / ``Frame(rotations=eye, translations=zeros)`` gives the fields
    of a dataclass of the file, as its generated ``__init__`` binds them; None for another
    class, or arguments that do not bind plainly (``*args``, a name that is no field)."""
    names = info.dataclass_fields
    if names is None:
        return None
    given: dict[str, Value] = {}
    position = 0
    if len(args) == 1 and args[0][0].star == "*" and args[0][1].kind == Kind.CONTAINER:
        # `Frame(*(t.to(device) for t in astuple(self)))`: the fields in order, from the
        # elements of the unpacked sequence (each one what all its elements are, where that is
        # all that is known of them)
        spread = args[0][1].info
        if isinstance(spread, tuple) and len(spread) == len(names):
            return tuple(zip(names, spread))
        if isinstance(spread, Homogeneous) and spread.key is None and spread.apart is None and spread.some is None:
            return tuple((name, spread.element) for name in names)
        return None
    for arg, value in args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(names):
                return None
            given[names[position]] = value
            position += 1
        elif arg.keyword.value in names and arg.keyword.value not in given:
            given[arg.keyword.value] = value
        else:
            return None
    return tuple(given.items())


def _sequence_on_some_paths(returns: list[Value]) -> bool:
    """One ``return`` gives a tuple or list literal, another a tensor."""
    sequence = any(value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and value.info for value in returns)
    return sequence and any(value.kind == Kind.TENSOR for value in returns)


def _in_caller_terms(value: Value, bound: dict[str, Value]) -> Value:
    """A helper's result on "the device of `u`" (``device=u.device`` with ``u`` its own
    parameter) is, for the caller, on the device of what it passed as ``u``: that argument's
    device, or unknown when the caller does not know it."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return replace(value, info=tuple(_in_caller_terms(item, bound) for item in value.info))
    device = value.device
    if device is None or not device.is_symbolic or not device.argument:
        return value
    root = device.label.split(".", 1)[0]
    if root not in bound:
        return value
    return replace(value, device=bound[root].device)


def _anchored_on_receiver(value: Value, own_name: str, receiver_key: str) -> Value:
    """``self.real_A = data.to(self.device)`` left on ``model``: for the caller it follows
    ``model.device``, not a ``self.device`` of its own."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return replace(value, info=tuple(_anchored_on_receiver(item, own_name, receiver_key) for item in value.info))
    device = value.device
    if own_name == receiver_key or device is None or device.kind != "follows":
        return value
    label = device.label
    if label != own_name and not label.startswith(own_name + "."):
        return value
    return replace(value, device=replace(device, label=receiver_key + label[len(own_name):], argument=False))


def _on_receiver_device(value: Value, receiver_device: Optional[Device]) -> Value:
    """What a module's method left on ``self`` on "the model's device", seen from the code that
    called it on the object: on that object's device (unknown where the caller does not know
    it)."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return replace(value, info=tuple(_on_receiver_device(item, receiver_device) for item in value.info))
    if value.device != MODEL_DEVICE:
        return value
    return replace(value, device=receiver_device)


def _item_role(info: ClassInfo) -> Optional[Role]:
    """What a dataset class's items are, where every ``return`` of its own ``__getitem__`` says
    so: tuple or list displays (Role.SEQUENCE_BATCH) or dict displays (Role.MAPPING_BATCH) -
    also a name the method binds only to dict displays (``inputs = {}``, then
    ``inputs["depth"] = ...``)."""
    method = info.methods.get("__getitem__")
    if method is None:
        return None
    finder = _ReturnFinder()
    walk.visit(method.body, finder)
    if not finder.values or any(value is None for value in finder.values):
        return None
    built = _DictBuilds({value.value for value in finder.values if isinstance(value, cst.Name)})  # type: ignore[union-attr]
    if built.names:
        walk.visit(method.body, built)
    kinds = {cst.Dict if isinstance(value, cst.Name) and built.only_dicts(value.value) else type(value) for value in finder.values}
    if kinds <= {cst.Tuple, cst.List}:
        return Role.SEQUENCE_BATCH
    if kinds == {cst.Dict}:
        return Role.MAPPING_BATCH
    return None


def _item_positions(info: ClassInfo) -> Optional[tuple[Optional[Role], ...]]:
    """Per position of a dataset class's items, where every ``return`` of its own
    ``__getitem__`` is a tuple or list display of one length: Role.SEQUENCE_BATCH where every
    one holds a tuple or list display there (``return (left, right), label``), Role.MAPPING_BATCH
    where every one holds a dict display, else None. None when the returns do not agree."""
    method = info.methods.get("__getitem__")
    if method is None:
        return None
    finder = _ReturnFinder()
    walk.visit(method.body, finder)
    displays = finder.values
    if not displays or not all(isinstance(value, (cst.Tuple, cst.List)) for value in displays):
        return None
    rows = [value.elements for value in displays]  # type: ignore[union-attr]
    width = len(rows[0])
    if any(len(row) != width or any(isinstance(element, cst.StarredElement) for element in row) for row in rows):
        return None
    positions: list[Optional[Role]] = []
    for index in range(width):
        kinds = {type(row[index].value) for row in rows}
        if kinds <= {cst.Tuple, cst.List}:
            positions.append(Role.SEQUENCE_BATCH)
        elif kinds == {cst.Dict}:
            positions.append(Role.MAPPING_BATCH)
        else:
            positions.append(None)
    return tuple(positions)


def _item_text_keys(info: ClassInfo) -> tuple[str, ...]:
    """The keys a dict-item dataset's ``__getitem__`` fills with Python strings (``"date":
    folder.split("/")[0]`` in a returned display, or ``inputs["date"] = ...`` on a returned
    name bound only to dicts), in source order; empty where it fills none or its items are
    not dicts."""
    method = info.methods.get("__getitem__")
    if method is None or _item_role(info) is not Role.MAPPING_BATCH:
        return ()
    finder = _ReturnFinder()
    walk.visit(method.body, finder)
    built = _DictBuilds({value.value for value in finder.values if isinstance(value, cst.Name)})
    if built.names:
        walk.visit(method.body, built)
    keys: list[str] = []
    entries = [*built.entries]
    for value in [*finder.values, *built.displays]:
        if isinstance(value, cst.Dict):
            entries.extend((element.key, element.value) for element in value.elements if isinstance(element, cst.DictElement))
    for key, stored in entries:
        if isinstance(key, cst.SimpleString) and is_text(stored):
            literal = string_value(key)
            if isinstance(literal, str) and literal not in keys:
                keys.append(literal)
    return tuple(keys)


#: methods only Python strings have (a tensor, array or number has none of them)
_STRING_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "format", "capitalize", "casefold"})


def is_text(node: cst.BaseExpression) -> bool:
    """Is the expression a Python string by its very form: a literal, an f-string, ``str(...)``,
    a string method's result (``name.strip()``, ``"/".join(parts)``), or an element of a
    ``split`` by a string (``folder.split("/")[0]``, ``line.split()[1]``: ``Tensor.split``
    takes a size, never a string or nothing)?"""
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Call):
        call = node.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("split", "rsplit"):
            return not call.args or isinstance(call.args[0].value, (cst.SimpleString, cst.FormattedString))
        return False
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "str"
    if isinstance(func, cst.Attribute):
        if isinstance(func.value, (cst.SimpleString, cst.FormattedString)):
            return True  # `"/".join(parts)`, `"{}-{}".format(a, b)`
        return func.attr.value in _STRING_METHODS
    return False


class _DictBuilds(OwnScopeVisitor):
    """For the names a function returns: the values bound to each (to tell a name bound only to
    dict displays, ``inputs = {}``) and the entries stored in them by a string key
    (``inputs["date"] = ...``)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.bound: dict[str, list[cst.BaseExpression]] = {}
        #: names bound some other way (a loop target, an unpacking, ``+=``): not known dicts
        self.other: set[str] = set()
        self.entries: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []

    @property
    def displays(self) -> list[cst.BaseExpression]:
        return [value for values in self.bound.values() for value in values if isinstance(value, cst.Dict)]

    def only_dicts(self, name: str) -> bool:
        values = self.bound.get(name)
        return bool(values) and name not in self.other and all(
            isinstance(value, cst.Dict) or _empty_dict_call(value) for value in values
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value in self.names:
                self.bound.setdefault(target.target.value, []).append(node.value)
            elif isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name) and target.target.value.value in self.names:
                index = target.target.slice[0].slice if len(target.target.slice) == 1 else None
                if isinstance(index, cst.Index):
                    self.entries.append((index.value, node.value))
            else:
                self._other(target.target)

    def _other(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name) and target.value in self.names:
            self.other.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._other(element.value)
        elif isinstance(target, cst.StarredElement):
            self._other(target.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._other(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value in self.names and node.value is not None:
            self.bound.setdefault(node.target.value, []).append(node.value)

    def visit_For(self, node: cst.For) -> None:
        self._other(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._other(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._other(node.target)


def _empty_dict_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict" and not node.args


class _ReturnFinder(OwnScopeVisitor):
    """The returned expressions of one function body (None for a bare ``return``)."""

    def __init__(self) -> None:
        self.values: list[Optional[cst.BaseExpression]] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.values.append(node.value)


#: ``self.encoder(``: a call of what an attribute holds
_SELF_ATTRIBUTE_CALL = re.compile(r"(?<![\w.])self\s*\.\s*([A-Za-z_]\w*)\s*\(")


class _SubmoduleCalls(cst.CSTVisitor):
    """The calls a module's method makes of its submodules: ``self.block(...)`` (by attribute
    name), and ``layer(...)`` inside ``for layer in self.layers:`` (by the loop's name, which
    ``loops`` maps to the attribute)."""

    def __init__(self, own: str) -> None:
        self.own = own
        self.loops: dict[str, str] = {}
        #: (attribute or loop name, whether it is called on the object itself, the call)
        self.calls: list[tuple[str, bool, cst.Call]] = []

    def visit_For(self, node: cst.For) -> None:
        target, iterated = node.target, node.iter
        if isinstance(target, cst.Name) and isinstance(iterated, cst.Attribute) and isinstance(iterated.value, cst.Name) and iterated.value.value == self.own:
            self.loops[target.value] = iterated.attr.value

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.own:
            self.calls.append((func.attr.value, True, node))
        elif isinstance(func, cst.Name):
            self.calls.append((func.value, False, node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _moved_itself(name: str) -> "re.Pattern[str]":
    """``x.to(`` / ``x.cuda(``: the function moves the value it was given; or, for a batch
    handed as a dict or list, an entry of it (``batch["features"].to(device)``); also through
    views and casts of it that keep its values (``sigma.reshape(-1, 1).to(x.device)``)."""
    return re.compile(
        rf"\b{re.escape(name)}\s*(?:\[[^\[\]]*\]\s*)?(?:\.\s*(?:{_VALUE_KEEPING_METHODS})\s*\([^()]*\)\s*)*\.\s*(to|cuda)\s*\("
    )


#: tensor methods that give a view or a cast of their receiver (its values, its shape changed)
_VALUE_KEEPING_METHODS = "reshape|view|unsqueeze|squeeze|flatten|permute|transpose|contiguous|detach|clone|float|double|half|long|int|bool"


def _only_taken_to_host(name: str, text: str) -> bool:
    """Does the body read ``name`` only as ``name.cpu()`` (a neighbour search run on the host,
    ``torch.cdist(coords.cpu(), ...)``)? Then the value may come in on any device: the function
    takes it to the host itself. A body that also reads it otherwise (``self.fc(x)``) is not
    one."""
    reads = len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", text))
    return reads > 0 and reads == len(re.findall(rf"(?<![\w.]){re.escape(name)}\s*\.\s*cpu\s*\(\s*\)", text))


#: the functions and tensor methods of torch_api.HOST_ONLY_ARGUMENTS as code calls them, and
#: the keywords of their host-only arguments
_HOST_FUNCTIONS = "|".join(sorted(re.escape(name.rsplit(".", 1)[-1]) for name in api.HOST_ONLY_ARGUMENTS))
_HOST_METHODS = "|".join(sorted(map(re.escape, api.HOST_ONLY_METHOD_ARGUMENTS)))
_HOST_KEYWORDS = "|".join(
    sorted({keyword for _, keywords, _ in (*api.HOST_ONLY_ARGUMENTS.values(), *api.HOST_ONLY_METHOD_ARGUMENTS.values()) for keyword in keywords})
)


def _read_on_host(name: str) -> "re.Pattern[str]":
    """``pack_padded_sequence(x, name)``, ``lengths=name``, ``x.tensor_split(name)``: the
    function hands the value it was given, as it came in, to a call that reads it on the host
    (a later positional argument of such a call - a flag - is not told apart from it)."""
    escaped = re.escape(name)
    keyword = rf"(?:(?:{_HOST_KEYWORDS})\s*=\s*)?"
    return re.compile(
        rf"\b(?:{_HOST_FUNCTIONS})\s*\((?:[^()]|\([^()]*\))*?,\s*{keyword}{escaped}\s*[,)]"
        rf"|\.\s*(?:{_HOST_METHODS})\s*\(\s*{keyword}{escaped}\s*[,)]"
    )


#: a move method called (``x.to(``, ``x.cuda(``)
_MOVE_TEXT = re.compile(r"\.\s*(?:to|cuda)\s*\(")


def _find_recursive_mover(function: cst.FunctionDef) -> Optional[tuple[str, cst.Call]]:
    """See Summaries._recursive_mover."""
    names = parameter_names(function)
    finder = _Returns(function.name.value)
    walk.visit(function.body, finder)
    if finder.other or finder.yields or not finder.returns:
        return None
    recursive = False
    moves: list[tuple[str, cst.Call]] = []
    kept: set[str] = set()
    for value, calls_itself in finder.returns:
        if calls_itself:
            recursive = True
        elif (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda")
            and isinstance(value.func.value, cst.Name) and value.func.value.value in names
        ):
            moves.append((value.func.value.value, value))
        elif isinstance(value, cst.Name) and value.value in names:
            kept.add(value.value)
        else:
            return None
    moved = {name for name, _ in moves}
    if not recursive or len(moved) != 1 or not kept <= moved:
        return None
    return moves[0]


class _Returns(OwnScopeVisitor):
    """The ``return`` values of a function body (not of functions nested in it), each with
    whether it calls the function ``name`` itself."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.returns: list[tuple[cst.BaseExpression, bool]] = []
        self.other = False  # a bare `return`
        self.yields = False

    def visit_Yield(self, node: cst.Yield) -> bool:
        self.yields = True
        return False

    def visit_Return(self, node: cst.Return) -> bool:
        if node.value is None:
            self.other = True
            return False
        calls = _CallsOf(self.name)
        walk.visit(node.value, calls)
        self.returns.append((node.value, calls.found))
        return False


class _CallsOf(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            self.found = True
        return not self.found


def _moved_through(value: Value, moved: Value, depth: int) -> Value:
    """``value`` with every tensor in it put where ``moved`` (one tensor the move made) is:
    tensors and batches, the entries of a tuple, the element of a list, the fields of a dict;
    anything else as it is."""
    if depth > 4:
        return value
    if value.kind == Kind.TENSOR:
        return Value(Kind.TENSOR, moved.device, moved.origin, scalar=value.scalar)
    if value.kind == Kind.BATCH:
        return Value(Kind.BATCH, moved.device, moved.origin, scalar=value.scalar, role=value.role, info=value.info)
    if value.kind != Kind.CONTAINER:
        return value
    info = value.info
    if isinstance(info, tuple):
        info = tuple(_moved_through(item, moved, depth + 1) if isinstance(item, Value) else item for item in info)
    elif isinstance(info, Homogeneous):
        info = replace(info, element=_moved_through(info.element, moved, depth + 1))
    fields = tuple((name, _moved_through(item, moved, depth + 1)) for name, item in value.fields) if value.fields else value.fields
    return replace(value, info=info, fields=fields)


#: ``model.cpu(``, ``state.model.to(``: a name, or one attribute of it, moved by a method that
#: moves a module in place
_MOVED_IN_PLACE = re.compile(r"(?<![.\w])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*\.\s*(?:to|cuda|cpu)\s*\(")


def _moves_or_hands_on(name: str) -> "re.Pattern[str]":
    escaped = re.escape(name)
    return re.compile(
        rf"\b{escaped}\s*\.\s*(to|cuda|cpu|xpu|mps|_apply|apply|to_empty)\s*\("  # moved
        rf"|[(,]\s*{escaped}\s*[,)]"  # handed to another call
        rf"|[(,]\s*\w+\s*=\s*{escaped}\s*[,)]"  # ... as a keyword argument
        rf"|(?<![.\w]){escaped}\s*=[^=]"  # rebound
    )


def _hooked(name: str, text: str) -> bool:
    """Does the text install, on ``name`` or its submodules, forward hooks that move the module
    they run for (``def pre(module, args): module.to(device)``, then ``for m in model.modules():
    m.register_forward_pre_hook(pre)``)? They run at every call of the module and move it there
    (CPU offloading: FSDP's offload policy, accelerate's hooks), so the module is no longer where
    the code before left it. Hooks that only read (shapes, activations) move nothing."""
    if "register_forward_pre_hook" not in text and "register_forward_hook" not in text:
        return False
    moving_hook = any(
        re.search(rf"\b{re.escape(module)}\s*\.\s*(to|cuda|cpu|to_empty)\s*\(", text)
        for module in _NESTED_DEF_FIRST_PARAMETER.findall(text)
    )
    if not moving_hook:
        return False
    escaped = re.escape(name)
    return re.search(rf"\b{escaped}\s*\.\s*(register_forward_pre_hook|register_forward_hook|modules|named_modules|children|named_children)\s*\(", text) is not None


#: ``def pre(module, args):`` -> ``module``: a hook's first parameter is the module it runs for
_NESTED_DEF_FIRST_PARAMETER = re.compile(r"\bdef\s+\w+\s*\(\s*(\w+)")


class _YieldFinder(OwnScopeVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Yield(self, node: cst.Yield) -> bool:
        self.found = True
        return False


class _ParameterFinder(cst.CSTVisitor):
    """Does an ``__init__`` build layers with parameters, or parameters themselves?"""

    def __init__(self, analyzer: Summaries, info: ClassInfo, module_state: State) -> None:
        self.analyzer = analyzer
        self.info = info
        #: the state of the module the class is defined in (another module of the project, maybe)
        self.module_state = module_state
        self.found = False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        if self.found:
            return False
        name = dotted_name(node.func)
        if name is None:
            return None
        if self._registers_through_own_method(name) or name.endswith("register_buffer"):
            self.found = True
            return None
        head, _, rest = name.partition(".")
        value = self.module_state.get(head)
        if value is None:
            return None
        if value.kind == Kind.REF and value.info is not None and not rest:
            value = self.analyzer.resolve_project_ref(value)  # a layer class from another module of the project
        if value.kind == Kind.REF:
            qualname = f"{value.qualname}.{rest}" if rest else value.qualname
            if qualname in api.PARAMETERISED_LAYERS or is_model_factory(qualname):
                self.found = True
        elif value.kind == Kind.CLASS and not rest and value.info is not self.info and value.info.is_module:
            if self.analyzer._owns_parameters(value.info):
                self.found = True
        return None

    def _registers_through_own_method(self, name: str) -> bool:
        """``self.add_state("correct", torch.tensor(0))``: a method of the class (or a base)
        that registers what it is handed as a buffer or parameter (torchmetrics' ``add_state``)."""
        owner, _, method = name.partition(".")
        if owner != "self" or not method or "." in method:
            return False
        found = self.info.find_method(method)
        return found is not None and _REGISTERS.search(self.analyzer._definition_text(found[0])) is not None


#: a body that registers a buffer or parameter on the module
_REGISTERS = re.compile(r"\.register_(?:buffer|parameter)\s*\(")


def _inherits_from(info: ClassInfo, ancestor: ClassInfo) -> bool:
    return any(base is ancestor or _inherits_from(base, ancestor) for base in info.bases)


#: comments and triple-quoted strings: prose, where a name is no use of it
_COMMENTS_AND_DOCSTRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|#[^\n]*')


def _plain_all_the_way(class_info: ClassInfo) -> bool:
    """Is every base of the class (and of its bases) ``object`` or a plain class of the file
    (no keyword such as ``metaclass=``)?"""
    written = [arg for arg in class_info.node.bases if not (isinstance(arg.value, cst.Name) and arg.value.value == "object")]
    if class_info.node.keywords or any(arg.keyword is not None or arg.star for arg in class_info.node.bases):
        return False
    if len(written) != len(class_info.bases):
        return False
    return all(not base.is_module and _plain_all_the_way(base) for base in class_info.bases)


def _name_never_moved(text: str, construction: str, class_name: str) -> bool:
    """``model = Net()`` handed to ``Trainer(model=model)``: where the file binds the module
    ``construction`` builds to a name, is every bare use of that name in the file's text one that
    cannot move it - an attribute read other than a move, a call, an assignment to it, or an
    argument of a construction of ``class_name``? A module built in the argument list itself
    has no name to be moved by."""
    text = _COMMENTS_AND_DOCSTRINGS.sub("", text)
    bound = re.search(r"(?<![\w.])([A-Za-z_]\w*)\s*=\s*" + re.escape(construction), text)
    if bound is None:
        return True
    name = bound.group(1)
    spans = []
    for start in re.finditer(r"(?<![\w.])%s\s*\(" % re.escape(class_name), text):
        depth, index = 0, start.end() - 1
        while index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                break
            index += 1
        spans.append((start.end(), index))
    for match in re.finditer(r"(?<![\w.])%s\b" % re.escape(name), text):
        rest = text[match.end():match.end() + 40]
        follower = re.match(r"\s*\.\s*([A-Za-z_]\w*)", rest)
        if follower is not None:
            if follower.group(1) in _HOST_MODULE_MOVES:
                return False
            continue
        if rest.startswith("(") or re.match(r"\s*=(?!=)", rest):
            continue
        if any(begin <= match.start() < end for begin, end in spans):
            continue
        return False
    return True


#: methods that move a module (or hand its tensors to another device) in place
_HOST_MODULE_MOVES = frozenset({"to", "cuda", "cpu", "xpu", "mps", "npu", "to_empty", "apply", "_apply", "share_memory", "load_state_dict", "half", "float", "double", "type"})


def _as_seen_from_method(value: Value, model_device: Optional[Device]) -> Value:
    """``self.*`` as another method sees it. In an ``nn.Module`` (``model_device`` is where it
    lives), registered submodules, parameters and buffers are wherever the model went: they
    follow the model. Elsewhere a module attribute placed by ``__init__`` on an accelerator (or
    on a symbolic device) stays there; one left on the CPU may be moved by any method, so its
    device is unknown."""
    if value.kind in (Kind.MODULE, Kind.CRITERION):
        if model_device is not None:
            return Value(value.kind, model_device, value.origin, info=value.info, role=value.role)
        keep = value.device is not None and value.device.may_be_accelerator
        return Value(value.kind, value.device if keep else None, value.origin, info=value.info, role=value.role)
    if value.kind == Kind.TENSOR and value.role in (Role.PARAMETER, Role.BUFFER):
        return Value(Kind.TENSOR, model_device, value.origin, scalar=value.scalar, info=value.info, role=value.role)
    return value


def _paired_targets(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``a = x`` as [(a, x)], ``a, b = x, y`` as [(a, x), (b, y)]; [] for unpacking anything else."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements) or any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
            return []
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    if isinstance(target, (cst.Tuple, cst.List)):
        return []
    return [(target, value)]


def _uninformative_module_slot(value: Optional[Value]) -> bool:
    """Does what ``__init__`` left in an attribute say nothing about which module it holds - an
    object of unknown kind (a constructor argument), or a module of unknown class?"""
    if value is None or value.info is not None or value.role is not None:
        return False
    return value.kind == Kind.UNKNOWN and value.is_bare or value.kind == Kind.MODULE


def _has_arguments(function: cst.FunctionDef, is_method: bool) -> bool:
    """Does the function take arguments from its caller (beyond a method's ``self``/``cls``)?"""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if is_method and not has_decorator(function, "staticmethod"):
        positional = positional[1:]
    return bool(positional or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg)




def _placed_module(values: list[Value]) -> Optional[Value]:
    """An attribute that holds a module some methods of its object build and others place
    (``self.model = None`` in ``__init__``, ``self.model = Net().to(self.device)`` in ``fit()``;
    or ``self.encoder.to(self.device)`` in ``prepare()``): a module moves in place and stays
    where it was put, so the object's other methods, which run once it is set up, find it
    where every move that can reach the accelerator put it - where they all agree, and
    nothing brought it back to the host (``.cpu()``). None where any value is no module,
    where the moves disagree, or where none places it."""
    if not values or any(value.kind != Kind.MODULE for value in values):
        return None
    placed = [value for value in values if value.device is not None and value.device.may_be_accelerator]
    if not placed or any(value.device != placed[0].device for value in placed):
        return None
    for value in values:
        if value.device is not None and value.device.is_cpu and value.origin is not None and value.origin.provenance is Provenance.MOVED_TO_HOST:
            return None
    info = placed[0].info if all(value.info is placed[0].info for value in values if value.info is not None) else None
    return Value(Kind.MODULE, placed[0].device, placed[0].origin, info=info, role=placed[0].role)


def _accumulator_start(value: Value) -> bool:
    """A plain number literal stored in an attribute (``self.loss = 0``): the start of a running
    total, as ``values.join`` takes a local ``total = 0`` to be."""
    return (
        value.kind == Kind.NUMBER
        and isinstance(value.literal, (int, float))
        and not isinstance(value.literal, bool)
        and value.role is None
    )


#: typing's generic sequences whose one argument is the element type (``List[torch.Tensor]``),
#: and the tuple forms, whose ``Tuple[X, ...]`` says every element is an X
_SEQUENCE_ANNOTATIONS = frozenset(
    {f"typing.{name}" for name in ("List", "Sequence", "Iterable", "Iterator", "MutableSequence", "Collection")}
    | {f"collections.abc.{name}" for name in ("Sequence", "Iterable", "Iterator", "MutableSequence", "Collection")}
    | {"list"}
)
_TUPLE_ANNOTATIONS = frozenset({"typing.Tuple", "tuple"})


def _subscript_arguments(node: cst.Subscript) -> list[cst.BaseExpression]:
    return [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]


def _without_optional(node: cst.BaseExpression, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> cst.BaseExpression:
    """``Optional[X]`` and ``X | None`` (also ``Union[X, None]``) are ``X``."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        if is_none_literal(node.right):
            return node.left
        if is_none_literal(node.left):
            return node.right
    if isinstance(node, cst.Subscript):
        qualname = qualname_of(node.value)
        arguments = _subscript_arguments(node)
        if qualname == "typing.Optional" and len(arguments) == 1:
            return arguments[0]
        if qualname == "typing.Union":
            kept = [argument for argument in arguments if not is_none_literal(argument)]
            if len(kept) == 1:
                return kept[0]
    return node


def _element_annotation(node: cst.BaseExpression, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> Optional[cst.BaseExpression]:
    """The element type of a homogeneous sequence annotation: ``X`` of ``List[X]``,
    ``Sequence[X]``, ``Tuple[X, ...]``, ``list[X]``, ``tuple[X, ...]``; None otherwise."""
    if not isinstance(node, cst.Subscript):
        return None
    qualname = qualname_of(node.value) or (node.value.value if isinstance(node.value, cst.Name) else None)
    arguments = _subscript_arguments(node)
    if qualname in _SEQUENCE_ANNOTATIONS and len(arguments) == 1:
        return arguments[0]
    if qualname in _TUPLE_ANNOTATIONS and len(arguments) == 2 and isinstance(arguments[1], cst.Ellipsis):
        return arguments[0]
    return None


def _model_method(function: cst.FunctionDef, class_info: Optional[ClassInfo]) -> bool:
    """A method of a module class that runs on the model's inputs other than ``forward`` (whose
    callers are held to move them) and ``__init__``."""
    return (
        class_info is not None and class_info.is_module and not is_static_or_class_method(function)
        and function.name.value not in ("__init__", "forward", "__call__")
    )


def _first_parameter(function: cst.FunctionDef) -> Optional[str]:
    positional = [*function.params.posonly_params, *function.params.params]
    return positional[0].name.value if positional else None


def _is_dataclass(info: ClassInfo) -> bool:
    """Is the class decorated ``@dataclass`` (``@dataclasses.dataclass``, ``@dataclass(...)``)?"""
    for decorator in info.node.decorators:
        found = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        name = dotted_name(found)
        if name is not None and name.split(".")[-1] == "dataclass":
            return True
    return False


def _bound_once(text: str, attribute: str) -> bool:
    """Does the function whose body is ``text`` bind ``self.<attribute>`` exactly once (a plain,
    augmented or annotated assignment)?"""
    return len(re.findall(rf"\bself\s*\.\s*{re.escape(attribute)}\s*(?::[^=\n]*)?(?:[-+*/@%&|^]|//|\*\*)?=(?!=)", text)) == 1


def _tensor_fields(value: Value) -> bool:
    """An object of a class of the file whose construction says which tensors it holds."""
    return isinstance(value.info, ClassInfo) and bool(value.fields) and any(field.kind == Kind.TENSOR for _, field in value.fields or ())


def _may_hold_own_tensors(value: Value) -> bool:
    """An object of a plain class of the file whose tensors the analysis reads from its
    construction (its fields) or from its class (the class-level view, for one without fields)."""
    if value.fields is not None:
        return _tensor_fields(value)
    return value.kind == Kind.UNKNOWN and isinstance(value.info, ClassInfo) and not value.info.is_module and not value.info.is_dataset


def _forget_tensor_fields(arg: cst.Arg, value: Value, state: State) -> None:
    """The caller's object after code that may store new tensors in it: its tensor fields are
    no longer known (its other fields stay). Kept as unknown, not dropped: a field the object
    does not carry reads the class-level view (what every construction hands in, as
    ``__init__`` keeps it), which such code makes stale for this object."""
    key = dotted_name(arg.value)
    if key is None or key not in state:
        return
    fields = tuple((name, UNKNOWN if field.kind == Kind.TENSOR else field) for name, field in value.fields or ())
    state[key] = replace(state[key], fields=fields or None)


@functools.lru_cache(maxsize=1024)
def _stores_attribute_of(name: str) -> "re.Pattern[str]":
    """``name.attr = ...`` / ``name.attr += ...`` (not ``==``)."""
    return re.compile(rf"\b{re.escape(name)}\s*\.\s*\w+\s*(?:[-+*/@]?=)(?!=)")
