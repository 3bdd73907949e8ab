"""The order of an optimizer's construction and its model's move, shared by DL407 (the orders
that crash at the first ``step()``) and DL409 (the order PyTorch's docs advise against, harmless
with ``Module.to``'s default behaviour). ``OptimizerOrder`` follows the file once and hands each
case to its rule's ``sink``; each rule reports the cases that are its own.

What PyTorch does (torch 2.13): ``Module._apply`` (``.to()``, ``.cuda()``) keeps each Parameter
object and moves its data, so an optimizer built before the move updates the moved parameters,
and an optimizer that creates its state lazily in ``step()`` creates it on their new device.
Two orders leave state behind on the CPU, and the first step mixes it with GPU gradients
("Expected all tensors to be on the same device"): state restored with ``load_state_dict``
before the move (it is cast to the parameters' device of that moment), and an optimizer that
creates its state in ``__init__`` (torch_api.EAGER_STATE_OPTIMIZERS: Adagrad) built before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Union

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import helpers, walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.helpers import argument_parameters
from devicelint.analysis.names import OwnScopeVisitor, dotted_name, is_static_or_class_method, own_scope_calls
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.values import Kind, Value, parameters_owner
from devicelint.rules.base import Rule


@dataclass(frozen=True)
class StateLoad:
    """``opt.load_state_dict(...)`` before the model was moved."""

    call: cst.Call
    #: the function that loads it: the optimizer's own (the load is a related location of its
    #: finding) or a helper or method it is handed to (the load is a line to change of its own)
    function: Optional[cst.FunctionDef]
    same_function: bool


@dataclass(frozen=True)
class BuiltBeforeMove:
    """An optimizer built from a model's parameters before the model is moved."""

    optimizer: cst.Call
    #: the model's spelling where the optimizer is built
    owner: str
    #: "this optimizer is built from ... before ... (line N)": the case, for a message to go on
    described: str
    #: the call that moves the model (or the call of the function or method that moves it)
    move: cst.Call
    move_note: str
    #: its state restored before the move, if it is
    state_load: Optional[StateLoad]
    #: the optimizer's class where it creates its state in ``__init__`` (``Adagrad``)
    eager_state: Optional[str]


@dataclass(frozen=True)
class LoadedInHelper:
    """The state of ``optimizer`` is restored at ``load``, in a helper or method, before
    ``owner`` is moved at ``move``."""

    load: cst.Call
    optimizer: cst.Call
    owner: str
    move: cst.Call


OrderCase = Union[BuiltBeforeMove, LoadedInHelper]


class OptimizerOrder:
    """Follows, in one walk of the file, optimizers built from a model's parameters and the
    moves of that model: ``model.cuda()`` / ``model.to(...)`` after the optimizer in the same
    function (or at module level), in a function it is handed to, or - for an optimizer that a
    class's ``__init__`` builds over ``self.network`` - in a method of that class called on its
    object (``trainer.cuda()``). A class of the file counts as moving the model when its
    ``__init__``, or a base class's ``__init__`` it hands the model to through
    ``super().__init__(...)``, moves it (``Trainer(model, optimizer)``). A builder handed the
    ``torch.optim`` package and the parameters (``config.init_obj("optimizer", torch.optim,
    params)``) builds an optimizer. Restored state is followed into ``opt.load_state_dict(...)``
    here, a function of the file the optimizer is handed to, or a method of an object that keeps
    it (``Checkpoint(net, opt).load()``); a function that moves the restored state itself
    (``for state in opt.state.values(): ... v.to(device)``) takes care of the order, and the
    optimizer is not handed on at all."""

    def __init__(self, ctx, sink: Callable[[OrderCase], None]) -> None:  # type: ignore[no-untyped-def]
        self.ctx = ctx
        self._sink = sink
        #: (function node, module expression) -> the optimizers' constructors (one per branch)
        self._optimized: dict[tuple[int, str], list[cst.Call]] = {}
        #: per function node: the `.parameters()` / `.named_parameters()` calls it makes
        self._parameters_taken: dict[int, set[int]] = {}
        #: `__init__` nodes that built an optimizer over one of `self`'s modules -> (their
        #: class, the name of `self` there)
        self._constructors: dict[int, tuple[ClassInfo, str]] = {}
        #: optimizer constructor -> the attribute of `self` that `__init__` keeps it in
        self._kept_in: dict[int, str] = {}
        #: calls of a method of a class of the file on one of its objects: (class, method, call)
        self._object_calls: list[tuple[ClassInfo, str, cst.Call]] = []
        #: (function node, name) -> the constructors of the optimizer the name holds (one per branch)
        self._optimizer_names: dict[tuple[int, str], tuple[cst.Call, ...]] = {}
        #: optimizer constructor -> the `load_state_dict` call that restored its state before the
        #: model was moved (in this function, a helper it was handed to, or a method of an object
        #: that keeps it)
        self._state_loads: dict[int, tuple[cst.Call, Optional[cst.FunctionDef]]] = {}
        #: optimizer constructor -> its class, where that creates its state in `__init__`
        self._eager_state: dict[int, str] = {}
        #: (function node, name of an object of a class of the file) -> (its class, attribute of
        #: the object -> the constructor of the optimizer kept there)
        self._holders: dict[tuple[int, str], tuple[ClassInfo, dict[str, tuple[cst.Call, ...]]]] = {}
        #: construction call of such an object -> what it keeps, until the name it is bound to is known
        self._pending_holders: dict[int, tuple[ClassInfo, dict[str, tuple[cst.Call, ...]]]] = {}
        #: (function node, name) -> (the module, the method of its class) whose call's result
        #: the name holds: parameter groups if the method returns them (`groups =
        #: model.set_train_params(lr)`), asked only when an optimizer is built from the name
        self._parameter_groups: dict[tuple[int, str], tuple[str, cst.FunctionDef]] = {}
        #: method-call nodes returning parameter groups of their receiver -> the receiver's spelling
        self._group_calls: dict[int, tuple[str, cst.FunctionDef]] = {}
        #: per method node: does it return its own object's parameters (asked lazily, once)
        self._returns_parameters: dict[int, bool] = {}
        #: optimizers built from such groups
        self._from_groups: set[int] = set()
        #: optimizers whose loaded state the code moves itself
        self._state_moved: set[int] = set()
        #: parallel wrapper constructions (`DataParallel(net)`) -> the model they wrap
        self._wrapped: dict[int, str] = {}
        #: optimizer constructor -> the model whose submodules functions of the file took its
        #: parameter groups from (None: not such groups), asked once
        self._helper_groups: dict[int, Optional[str]] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        name = dotted_name(target)
        if name is not None:
            scope = id(self.ctx.current_function.node)
            # the name now holds another model: a later move is not of the optimized one
            optimized = self._optimized.pop((scope, name), None)
            wrapped = self._wrapped.get(id(value_node))
            if wrapped is not None and (wrapped != name or optimized is not None):
                # `model = nn.DataParallel(model)`: the wrapper holds the same module, whose
                # parameters the optimizer has; moving the wrapper moves them
                carried = optimized if wrapped == name else self._optimized.pop((scope, wrapped), None)
                if carried:
                    self._optimized[(scope, name)] = carried
            bound_before = self._optimizer_names.pop((scope, name), ())
            self._holders.pop((scope, name), None)
            self._parameter_groups.pop((scope, name), None)
            if value.kind == Kind.OPTIMIZER and name.count(".") == 1:
                self._kept_in[id(value_node)] = name.split(".", 1)[1]
            if value.kind == Kind.OPTIMIZER and isinstance(value_node, cst.Call):
                # an optimizer bound to the name on another branch (`if name == "adadelta":
                # self.optimizer = Adadelta(...) else: self.optimizer = Adam(...)`) is one it
                # may hold at a later `load_state_dict`
                others = tuple(constructor for constructor in bound_before if constructor is not value_node)
                self._optimizer_names[(scope, name)] = (*others, value_node)
            if id(value_node) in self._pending_holders:
                self._holders[(scope, name)] = self._pending_holders.pop(id(value_node))
            if id(value_node) in self._group_calls:
                self._parameter_groups[(scope, name)] = self._group_calls[id(value_node)]

    def on_call(self, event: CallEvent) -> None:
        scope = id(self.ctx.current_function.node)
        if event.result.kind == Kind.PARAMETERS and event.method in ("parameters", "named_parameters"):
            self._parameters_taken.setdefault(scope, set()).add(id(event.node))
        if event.result.kind == Kind.OPTIMIZER and event.args:
            if event.qualname in api.EAGER_STATE_OPTIMIZERS:
                self._eager_state[id(event.node)] = event.qualname.rsplit(".", 1)[-1]
            # `Adam(model.parameters())`, or parameter groups of one module's parameters
            # (`[{"params": [p for n, p in model.named_parameters() if ...]}, ...]`)
            parameters = event.result.info if isinstance(event.result.info, Value) and event.result.info.kind == Kind.PARAMETERS else None
            if parameters is not None and parameters.origin is not None and id(parameters.origin.node) in self._parameters_taken.get(scope, ()):
                owner = parameters_owner(parameters)
                model = parameters.info if isinstance(parameters.info, Value) else None
                already_placed = model is not None and model.device is not None and model.device.may_be_accelerator
                if owner is not None and not already_placed:
                    self._optimized.setdefault((scope, owner), []).append(event.node)
                    self._note_constructor(scope, owner)
                    if event.args[0][1].kind != Kind.PARAMETERS:
                        self._from_groups.add(id(event.node))  # `[{"params": [p], "lr": lr}, ...]`
            elif self._groups_owner(scope, event.args[0][0].value) is not None:
                # `Adam(model.set_train_params(...))`, or through a name holding them (their
                # parameters were taken in the method, from `self`'s submodules)
                owner = self._groups_owner(scope, event.args[0][0].value)
                assert owner is not None
                self._optimized.setdefault((scope, owner), []).append(event.node)
                self._from_groups.add(id(event.node))
            elif self._helper_groups_owner(event) is not None:
                # `Adam([{"params": get_conv_weights(net.backbone)}, ...])`: groups that
                # functions of the file take from submodules of one model
                owner = self._helper_groups_owner(event)
                assert owner is not None
                self._optimized.setdefault((scope, owner), []).append(event.node)
                self._from_groups.add(id(event.node))
            elif event.callee.kind == Kind.FUNCTION and isinstance(event.result.info, Value) and event.result.info.kind == Kind.PARAMETERS:
                # `build_optimizer(model, lr)`: a helper (of this file or another module of the
                # project) that builds it from the parameters of a model handed to it
                for arg, value in event.args:
                    owner = dotted_name(arg.value)
                    placed = value.device is not None and value.device.may_be_accelerator
                    if owner is not None and value.kind == Kind.MODULE and not placed:
                        self._optimized.setdefault((scope, owner), []).append(event.node)
            return
        if event.qualname in api.PARALLEL_WRAPPERS and event.args and event.args[0][0].keyword is None:
            wrapped = dotted_name(event.args[0][0].value)
            if wrapped is not None:
                self._wrapped[id(event.node)] = wrapped
        self._note_state_load(scope, event)
        if event.method is not None and event.receiver is not None and isinstance(event.receiver.info, ClassInfo):
            self._object_calls.append((event.receiver.info, event.method, event.node))
            self._note_parameter_groups(event, event.receiver.info)
        if event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._handed_to_mover(scope, event, event.callee.info)
            return
        if event.callee.kind == Kind.CLASS and isinstance(event.callee.info, ClassInfo):
            self._note_holder(scope, event, event.callee.info)
            self._handed_to_mover(scope, event, None, event.callee.info)
            return
        if event.method not in ("cuda", "to") or event.receiver is None or event.receiver.kind != Kind.MODULE:
            return
        if event.result.device is None or not event.result.device.may_be_accelerator:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        # `DataParallel(net).cuda()` moves `net` with its wrapper
        owner = dotted_name(func.value) or self._wrapped.get(id(func.value))
        for optimizer in self._optimized.pop((scope, owner or ""), ()):
            # the line to change is the optimizer's: the case sits there, and points at the move
            taken = f"parameter groups of `{owner}`" if id(optimizer) in self._from_groups else f"`{owner}.parameters()`"
            self._hand_on(
                optimizer, owner or "", f"this optimizer is built from {taken} before `{owner}` is moved (line {self.ctx.line(event.node)})",
                event.node, f"`{owner}` is moved here",
            )

    def _hand_on(
        self, optimizer: cst.Call, owner: str, described: str, move: cst.Call, move_note: str, built_in: Optional[cst.FunctionDef] = None
    ) -> None:
        """Give the sink the optimizer built before ``move`` (in ``built_in``, where that is not
        the function being analysed), with what makes the order crash (state restored before the
        move, state created in its constructor), unless the code moves the restored state itself."""
        if id(optimizer) in self._state_moved:
            return
        state_load = self._state_load(optimizer, owner, move, built_in if built_in is not None else self.ctx.current_function.node)
        self._sink(BuiltBeforeMove(optimizer, owner, described, move, move_note, state_load, self._eager_state.get(id(optimizer))))

    def _helper_groups_owner(self, event: CallEvent) -> Optional[str]:
        """The model whose parameters an optimizer is built from, where its argument is a literal
        list of parameter groups, each ``{"params": f(model.sub, ...), ...}`` with ``f`` a
        function of the file that walks the module it is handed (``.modules()``,
        ``.parameters()``, ...; lightweight-human-pose-estimation's ``get_parameters_conv``):
        the same model, not yet placed, in every group."""
        if id(event.node) in self._helper_groups:
            return self._helper_groups[id(event.node)]
        self._helper_groups[id(event.node)] = None
        groups = event.args[0][0].value
        if event.args[0][0].keyword is not None or not isinstance(groups, (cst.List, cst.Tuple)) or not groups.elements:
            return None
        owners: set[str] = set()
        for element in groups.elements:
            group = element.value
            params = next(
                (item.value for item in group.elements if isinstance(group, cst.Dict) and isinstance(item, cst.DictElement)
                 and isinstance(item.key, cst.SimpleString) and item.key.evaluated_value == "params"),
                None,
            ) if isinstance(group, cst.Dict) else None
            if not isinstance(params, cst.Call) or not isinstance(params.func, cst.Name):
                return None
            helper = self.ctx.analyzer.lookup(params.func.value, event.state)
            if helper.kind != Kind.FUNCTION or not isinstance(helper.info, cst.FunctionDef):
                return None
            text = self.ctx.analyzer.body_text(helper.info)
            args = tuple((arg, Value(Kind.UNKNOWN)) for arg in params.args)
            walked = None
            for (arg, _), parameter in zip(args, argument_parameters(helper.info, args, skip_first=False)):
                spelled = dotted_name(arg.value)
                if parameter is None or spelled is None:
                    continue
                if re.search(rf"\b{re.escape(parameter)}\s*\.\s*(modules|named_modules|children|parameters|named_parameters)\s*\(", text):
                    walked = spelled.split(".", 1)[0]
                    break
            if walked is None:
                return None
            owners.add(walked)
        if len(owners) != 1:
            return None
        owner = owners.pop()
        model = self.ctx.analyzer.lookup(owner, event.state)
        if model.kind != Kind.MODULE or model.device is not None and model.device.may_be_accelerator:
            return None
        self._helper_groups[id(event.node)] = owner
        return owner

    def _groups_owner(self, scope: int, argument: cst.BaseExpression) -> Optional[str]:
        """The module whose parameter groups ``argument`` is: a call of a method of its class
        that returns them, or a name such a call was assigned to here."""
        if isinstance(argument, cst.Name):
            call = self._parameter_groups.get((scope, argument.value))
        else:
            call = self._group_calls.get(id(argument))
        if call is None:
            return None
        owner, method = call
        if id(method) not in self._returns_parameters:
            positional = [*method.params.posonly_params, *method.params.params]
            self._returns_parameters[id(method)] = bool(positional) and _returns_own_parameters(method, positional[0].name.value)
        return owner if self._returns_parameters[id(method)] else None

    def _state_load(self, optimizer: cst.Call, owner: str, move: cst.Call, built_in: Optional[cst.FunctionDef]) -> Optional[StateLoad]:
        """The optimizer's state was restored before ``owner`` was moved: `load_state_dict`
        puts each state tensor on the device its parameter has at that moment (the CPU), and
        moving the model later does not move the state, so the first step mixes devices. A load
        in this function is a related location of the optimizer's case (one line order to
        change); a load in a helper or a method is a line to change of its own, handed to the
        sink as well."""
        entry = self._state_loads.pop(id(optimizer), None)
        if entry is None:
            return None
        load, function = entry
        same_function = function is built_in
        if not same_function:
            self._sink(LoadedInHelper(load, optimizer, owner, move))
        return StateLoad(load, function, same_function)

    def _note_state_load(self, scope: int, event: CallEvent) -> None:
        """Remember where an optimizer built here has its state restored: ``opt.load_state_dict(...)``,
        a function of the file handed ``opt`` that calls ``load_state_dict`` on its parameter, or a
        method of an object that keeps ``opt`` in an attribute and calls it there."""
        if not self._optimizer_names:
            return  # no optimizer built yet: nothing to load
        func = event.node.func
        if event.method == "load_state_dict" and isinstance(func, cst.Attribute):
            receiver = dotted_name(func.value)
            constructors = self._optimizer_names.get((scope, receiver or ""), ())
            if constructors:
                self._note_load(constructors, event.node, self.ctx.current_function.node, receiver or "")
            return
        if event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            function = event.callee.info
            for (arg, _), parameter in zip(event.args, argument_parameters(function, event.args, skip_first=False)):
                constructors = self._optimizer_names.get((scope, dotted_name(arg.value) or ""), ())
                load = _load_state_dict_call(function, parameter) if constructors and parameter is not None else None
                if load is not None and parameter is not None:
                    self._note_load(constructors, load, function, parameter)
            return
        if event.method is None or not isinstance(func, cst.Attribute):
            return
        holder = self._holders.get((scope, dotted_name(func.value) or ""))
        if holder is None:
            return
        class_info, kept = holder
        found = class_info.find_method(event.method)
        if found is None or is_static_or_class_method(found[0]):
            return
        positional = [*found[0].params.posonly_params, *found[0].params.params]
        if not positional:
            return
        for attribute, constructors in kept.items():
            receiver = f"{positional[0].name.value}.{attribute}"
            load = _load_state_dict_call(found[0], receiver)
            if load is not None:
                self._note_load(constructors, load, found[0], receiver)

    def _note_load(self, constructors: tuple[cst.Call, ...], load: cst.Call, function: Optional[cst.FunctionDef], receiver: str) -> None:
        """``load`` restores the state of the optimizer built at one of ``constructors``. Where
        the function that loads it also moves the state itself (``for state in
        opt.state.values(): ... v.to(device)``, the usual fix), the optimizer's device is taken
        care of: neither the load nor the construction is handed on."""
        text = self.ctx.analyzer.body_text(function) if function is not None else ""
        moved = re.search(rf"\b{re.escape(receiver)}\s*\.\s*state\s*\.\s*(values|items)\s*\(", text) is not None
        for constructor in constructors:
            if moved:
                self._state_moved.add(id(constructor))
            else:
                self._state_loads.setdefault(id(constructor), (load, function))

    def _note_holder(self, scope: int, event: CallEvent, built: ClassInfo) -> None:
        """``Checkpoint(net, optimizer)`` whose ``__init__`` keeps the optimizer in ``self.<attr>``:
        remember the attribute, so a later ``checkpoint.load()`` that restores it is seen."""
        if not self._optimizer_names:
            return
        found = built.find_method("__init__")
        if found is None:
            return
        constructor_function = found[0]
        positional = [*constructor_function.params.posonly_params, *constructor_function.params.params]
        if not positional:
            return
        self_name = positional[0].name.value
        text = self.ctx.analyzer.body_text(constructor_function)
        kept: dict[str, tuple[cst.Call, ...]] = {}
        for (arg, _), parameter in zip(event.args, argument_parameters(constructor_function, event.args, skip_first=True)):
            constructors = self._optimizer_names.get((scope, dotted_name(arg.value) or ""), ())
            if not constructors or parameter is None:
                continue
            stored = re.search(rf"\b{re.escape(self_name)}\s*\.\s*(\w+)\s*=\s*{re.escape(parameter)}\s*$", text, re.MULTILINE)
            if stored is not None:
                kept[stored.group(1)] = constructors
        if kept:
            self._pending_holders[id(event.node)] = (built, kept)

    def _note_parameter_groups(self, event: CallEvent, class_info: ClassInfo) -> None:
        """``model.set_train_params(lr)``: a call of a method of the model's class, which may
        return parameter groups of its own submodules (``[{"params": self.encoder.parameters(),
        ...}, ...]``); the method's body is read only if an optimizer is built from the result."""
        if event.receiver is None or event.receiver.kind != Kind.MODULE or event.method is None:
            return
        func = event.node.func
        owner = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        found = class_info.find_method(event.method) if owner is not None else None
        if owner is not None and found is not None and not is_static_or_class_method(found[0]):
            self._group_calls[id(event.node)] = (owner, found[0])

    def _handed_to_mover(self, scope: int, event: CallEvent, function: Optional[cst.FunctionDef], built: Optional[ClassInfo] = None) -> None:
        """``train(model, loader, optimizer)`` where ``train`` moves ``model`` (``model.cuda()``)
        after the optimizer was built here: the same bug, with the move one call away. With
        ``built``, the call constructs an object of that class of the file, whose ``__init__``
        (or a base's, through ``super().__init__(...)``) moves the model: ``Trainer(model, ...)``."""
        if built is not None:
            found = built.find_method("__init__")
            if found is None:
                return
            function, defined_in = found
        assert function is not None
        names = argument_parameters(function, event.args, skip_first=built is not None)
        for (arg, value), parameter in zip(event.args, names):
            owner = dotted_name(arg.value)
            if parameter is None or owner is None or value.kind != Kind.MODULE:
                continue
            optimizers = self._optimized.get((scope, owner))
            if not optimizers:
                continue
            mover = self._mover_of(function, defined_in, parameter) if built is not None else (function if self._moves(function, parameter) else None)
            if mover is None:
                continue
            del self._optimized[(scope, owner)]
            called = built.name if built is not None else function.name.value
            for optimizer in optimizers:
                self._hand_on(
                    optimizer, owner, f"this optimizer is built from `{owner}.parameters()` before `{called}()` "
                    f"moves `{owner}` (called at line {self.ctx.line(event.node)})",
                    event.node, f"`{called}()` moves `{owner}`",
                )

    def _moves(self, function: cst.FunctionDef, parameter: str) -> bool:
        """Does ``function`` move its parameter ``parameter`` to an accelerator (not `.cpu()`,
        not merely hand it on)?"""
        return re.search(rf"\b{re.escape(parameter)}\s*\.\s*(cuda|to)\s*\(", self.ctx.analyzer.body_text(function)) is not None

    def _mover_of(self, constructor: cst.FunctionDef, defined_in: ClassInfo, parameter: str, depth: int = 0) -> Optional[cst.FunctionDef]:
        """The ``__init__`` that moves the constructor parameter ``parameter``: this one, or the
        base class's one it hands the parameter to through ``super().__init__(...)`` (at most a
        few levels up)."""
        if self._moves(constructor, parameter):
            return constructor
        if depth >= 3:
            return None
        for call in _base_init_calls(constructor):
            found = next(filter(None, (base.find_method("__init__") for base in defined_in.bases)), None)
            if found is None:
                return None
            base_init, base_class = found
            explicit_self = not (isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call))
            forwarded = [(arg, Value(Kind.UNKNOWN)) for arg in call.args]
            for (arg, _), name in zip(forwarded, argument_parameters(base_init, tuple(forwarded), skip_first=not explicit_self)):
                if name is not None and isinstance(arg.value, cst.Name) and arg.value.value == parameter:
                    return self._mover_of(base_init, base_class, name, depth + 1)
        return None

    def _note_constructor(self, scope: int, owner: str) -> None:
        """Remember an `__init__` that builds an optimizer over `self.<module>`."""
        context = self.ctx.current_function
        function = context.node
        if function is None or context.class_info is None or function.name.value != "__init__":
            return
        positional = [*function.params.posonly_params, *function.params.params]
        if positional and owner.startswith(positional[0].name.value + "."):
            self._constructors[scope] = (context.class_info, positional[0].name.value)

    def finish(self) -> None:
        """``model = Trainer(cfg)`` whose ``__init__`` builds the optimizer over
        ``self.network``, then ``model.cuda()`` where that method of the class moves
        ``self.network``: the object is built before any of its methods runs, so the move always
        comes after the optimizer."""
        handed_on: set[int] = set()
        for class_info, method, call in self._object_calls:
            constructor = class_info.find_method("__init__")
            found = class_info.find_method(method)
            if constructor is None or found is None or id(constructor[0]) not in self._constructors:
                continue
            mover = found[0]
            positional = [*mover.params.posonly_params, *mover.params.params]
            if not positional or is_static_or_class_method(mover):
                continue
            self_name = positional[0].name.value
            text = self.ctx.analyzer.body_text(mover)
            scope = id(constructor[0])
            init_self = self._constructors[scope][1]
            for (where, owner), optimizers in self._optimized.items():
                for optimizer in optimizers:
                    if where == scope and id(optimizer) not in handed_on:
                        self._hand_on_if_moved_later(optimizer, owner, constructor[0], init_self, class_info, method, call, self_name, text, handed_on)

    def _hand_on_if_moved_later(
        self, optimizer: cst.Call, owner: str, constructor: cst.FunctionDef, init_self: str, class_info: ClassInfo, method: str,
        call: cst.Call, self_name: str, text: str, handed_on: set[int],
    ) -> None:
        """Hand on ``optimizer`` (built over ``owner`` in ``class_info``'s ``__init__``,
        ``constructor``) if the method called at ``call``, whose body is ``text``, moves
        ``owner`` and keeps the optimizer."""
        attribute = owner[len(init_self) + 1:]
        kept_in = self._kept_in.get(id(optimizer))
        if kept_in is None or "." in attribute:
            return  # an optimizer `__init__` does not keep is not used afterwards
        moved = rf"\b{re.escape(self_name)}\s*\.\s*{re.escape(attribute)}\s*\.\s*(cuda|to)\s*\("
        rebuilt = rf"\b{re.escape(self_name)}\s*\.\s*{re.escape(kept_in)}\s*=(?!=)"
        if not re.search(moved, text) or re.search(rebuilt, text):
            return  # not moved there, or the method builds the optimizer again after the move
        handed_on.add(id(optimizer))
        self._hand_on(
            optimizer, owner, f"this optimizer is built from `{owner}`'s parameters in `{class_info.name}.__init__`, and "
            f"`{method}()` moves `{owner}` afterwards (called at line {self.ctx.line(call)})",
            call, f"`{method}()` moves `{owner}`", built_in=constructor,
        )


def _base_init_calls(constructor: cst.FunctionDef) -> list[cst.Call]:
    """``super().__init__(...)`` / ``Base.__init__(self, ...)`` statements at the top level of a
    constructor's body."""
    calls = []
    for statement in helpers.body_statements(constructor):
        if not isinstance(statement, helpers.SIMPLE_LINES):
            continue
        for small in statement.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__":
                calls.append(call)
    return calls


def _load_state_dict_call(function: cst.FunctionDef, receiver: str) -> Optional[cst.Call]:
    """The first ``<receiver>.load_state_dict(...)`` call in ``function``."""
    return first_method_call(function, receiver, "load_state_dict")


def first_method_call(function: cst.FunctionDef, receiver: str, method: str) -> Optional[cst.Call]:
    """The first ``<receiver>.<method>(...)`` call in ``function`` (``receiver`` a name or a
    dotted attribute chain), outside nested functions, classes and lambdas."""
    return next(
        (
            call for call in own_scope_calls(function.body)
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == method and dotted_name(call.func.value) == receiver
        ),
        None,
    )


class OptimizerOrderRule(Rule):
    """The event plumbing DL407 and DL409 share: one OptimizerOrder per file follows the
    optimizers, the moves and the state loads, and hands each case to the rule's ``_report``,
    which keeps the cases it describes."""

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._order = OptimizerOrder(ctx, self._report)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        self._order.on_assign(statement, target, value_node, value)

    def on_call(self, event: CallEvent) -> None:
        self._order.on_call(event)

    def finish(self) -> None:
        self._order.finish()

    def _report(self, case: OrderCase) -> None:
        raise NotImplementedError


def _returns_own_parameters(method: cst.FunctionDef, self_name: str) -> bool:
    """Does ``method`` return something built from ``self``'s (or a submodule's) parameters?"""
    finder = _OwnParametersReturned(self_name)
    walk.visit(method.body, finder)
    return finder.found


class _OwnParametersReturned(OwnScopeVisitor):
    def __init__(self, self_name: str) -> None:
        self.self_name = self_name
        self.found = False
        self._returns_open = 0

    def visit_Return(self, node: cst.Return) -> bool:
        self._returns_open += 1
        return not self.found

    def leave_Return(self, original_node: cst.Return) -> None:
        self._returns_open -= 1

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if self._returns_open and isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
            owner = dotted_name(func.value) or ""
            self.found = owner == self.self_name or owner.startswith(self.self_name + ".")
        return not self.found

