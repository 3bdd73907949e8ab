"""Facts the analysis gathers about one file, kept in the Values and handed to the rules.

Payloads of ``Value.info`` (ClassInfo, CriterionInfo, CriterionBuilder, LoaderInfo, StreamContext;
Homogeneous and TensorOrNone live with the values they join),
where the interpreter is (FunctionContext, LoopInfo) and whole-file facts (FileFacts).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Union

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.names import OwnScopeVisitor, dotted_name
from devicelint.analysis.values import CollatedItems, CollatedMapping, Role, Value


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
    #: tensors the class body binds (``MEAN = torch.tensor([...])``): class attributes, which an
    #: object reads as ``self.MEAN`` where it sets none of its own, and which ``Module.to()``
    #: leaves where they were made
    class_attributes: dict[str, Value] = field(default_factory=dict)
    owns_parameters: Optional[bool] = None
    #: ``__init__`` has been analysed, so ``attributes`` is final
    init_analysed: bool = False
    #: ``self.*`` names written by methods other than ``__init__`` (computed once)
    written_elsewhere: Optional[frozenset[str]] = None
    #: per such name, the methods (not ``__init__``) that write it (computed with it)
    writers: dict[str, tuple[cst.FunctionDef, ...]] = field(default_factory=dict)
    #: ``self.*`` modules that methods other than ``__init__`` move in place without assigning
    #: them (``self.encoder.to(self.device)`` in ``prepare()``), with those methods (computed
    #: with ``written_elsewhere``)
    movers: dict[str, tuple[cst.FunctionDef, ...]] = field(default_factory=dict)
    #: methods only ``__init__`` calls, on its own object: they run as part of it (computed once)
    init_only_helpers: Optional[frozenset[str]] = None
    places_itself: Optional[bool] = None
    #: a call of the module re-places its own tensors (see Summaries.replaces_own_tensors_on_call);
    #: None until computed
    replaces_own_on_call: Optional[bool] = None
    #: names the class registers with ``self.register_buffer(name, ...)``
    buffers: set[str] = field(default_factory=set)
    #: a Dataset class: per position of its tuple items, what default collation makes of it
    #: (see values.CollatedItems); None where its ``__getitem__`` does not say
    item_positions: Optional[tuple[Optional[Role], ...]] = None
    #: a ``@dataclass`` of the file without bases or an ``__init__`` of its own: the names of
    #: its fields in the order its generated ``__init__`` takes them; None for other classes
    dataclass_fields: Optional[tuple[str, ...]] = None
    #: a ``multiprocessing.Process`` subclass (directly or through a class of the file): its
    #: ``run()`` runs in a child process
    is_process: bool = False
    #: a ``torch.optim.Optimizer`` subclass: its methods work on the parameters it was given,
    #: which are wherever the model is
    is_optimizer: bool = False
    #: a ``DistributedDataParallel`` subclass (mmcv's ``MMDistributedDataParallel``), directly or
    #: through a class of the file: building one runs DDP's constructor
    is_distributed_wrapper: bool = False
    #: a Dataset class whose items are dicts: the keys its ``__getitem__`` fills with Python
    #: strings (default collation makes each a list of strings); None until computed
    item_text_keys: Optional[tuple[str, ...]] = None
    #: a subclass of a diffusers pipeline (see torch_api.is_diffusers_pipeline)
    diffusers_pipeline: bool = False
    #: a subclass of ``dict`` (``collections.OrderedDict``, ``UserDict``), directly or through a
    #: class of the file: its objects are mappings of what they are built from
    is_mapping: bool = False
    #: per attribute its own ``__init__`` keeps a parameter in as it came in (``self.encoder =
    #: encoder``), that parameter; None until computed (see Summaries.kept_arguments)
    kept_arguments: Optional[dict[str, str]] = None
    #: per attribute the class body declares with a bare annotation (``_train_inputs:
    #: Optional[Tuple[torch.Tensor, ...]]``), the value that annotation says (see
    #: Summaries.declared_attributes); None until computed
    declared: Optional[dict[str, Value]] = None
    #: how many calls of the class the file's text makes, -1 where it also names the class
    #: without calling it (handed on as a class, an annotation); None until computed
    calls_in_text: Optional[int] = None

    def find_method(self, name: str) -> Optional[tuple[cst.FunctionDef, "ClassInfo"]]:
        """The method ``name`` and the class defining it, looked up through the bases the
        analysis knows (in this file or another module of the project)."""
        method = self.methods.get(name)
        if method is not None:
            return method, self
        for base in self.bases:
            found = base.find_method(name)
            if found is not None:
                return found
        return None

    def ancestors(self) -> list["ClassInfo"]:
        """Its bases the analysis knows, and theirs, nearest first."""
        found: list[ClassInfo] = []
        for base in self.bases:
            found.append(base)
            found.extend(base.ancestors())
        return found

    def registers_buffer(self, name: str) -> bool:
        """Is ``name`` a buffer of this class or of a base in the file? Assigning a tensor to
        it updates the buffer (``nn.Module.__setattr__``)."""
        return name in self.buffers or any(base.registers_buffer(name) for base in self.bases)


@dataclass(eq=False)
class CriterionInfo:
    """Identity shared by a criterion Value across its moves, for DL104."""

    node: cst.Call
    weight: Value
    moved: bool = False
    escaped: bool = False
    registered: bool = False


@dataclass(frozen=True)
class CriterionBuilder:
    """Payload of a FUNCTION value that builds a torch.nn loss from the keywords it is called
    with: ``lambda **kwargs: nn.CrossEntropyLoss(**kwargs, ignore_index=-100)``. Which loss it
    builds is not kept - lambdas that build different losses join into one builder - only that
    calling it with ``weight=w`` builds a criterion that holds ``w``. Use the one instance,
    CRITERION_BUILDER: joins keep a payload only where both sides hold the very same one."""


CRITERION_BUILDER = CriterionBuilder()


@dataclass(eq=False)
class LoaderInfo:
    node: cst.Call
    pin_memory: bool
    #: Role.SEQUENCE_BATCH / MAPPING_BATCH where default collation is known to make each batch
    #: a list / dict (the dataset's items are tuples / dicts), else None
    batch_role: Optional[Role] = None
    #: per position of the dataset's tuple items, what default collation makes of it (a
    #: values.CollatedItems, the payload of each batch), where known
    #: (for a dict batch: values.CollatedMapping, the keys that collate into lists of strings)
    batch_items: Optional[Union[CollatedItems, CollatedMapping]] = None
    #: what each batch is where ``collate_fn=`` is a function of the file that returns a tuple,
    #: list or dict (its return value, which iterating the loader gives), else None
    collated: Optional[Value] = None


@dataclass(frozen=True)
class StreamContext:
    """What ``torch.cuda.stream(s)`` returns: entering it makes ``s`` the current stream."""

    #: how the source spells the stream (``s``, ``self.copy_stream``): its identity in messages
    label: str
    #: ``s`` is known to be a stream this program created (``torch.cuda.Stream()``)
    side_stream: bool


@dataclass(eq=False)
class FunctionContext:
    node: Optional[cst.FunctionDef]
    class_info: Optional[ClassInfo]

    @property
    def name(self) -> str:
        return self.node.name.value if self.node is not None else "<module>"


class SiteCall(NamedTuple):
    """A call a reporting pass made of a function of the file, which may get a pass of that
    function on its values (see Summaries._specialise_by_call_site)."""

    call: cst.Call
    #: what the call binds to each parameter
    handed: dict[str, Value]
    #: the function making the call had its own analysis start from calls that disagree
    mixed: bool
    #: the module ``forward`` whose own analysis made the call, on what it assumed of its
    #: inputs (on the model's device); None for any other pass
    assumed_in: Optional[cst.FunctionDef]
    #: the function that makes the call (None: the module's top level) and its class
    caller: Optional[cst.FunctionDef] = None
    caller_class: Optional[ClassInfo] = None


@dataclass(eq=False)
class LoopInfo:
    node: cst.CSTNode
    _assigned: Optional[frozenset[str]] = None
    #: what a ``for`` loop iterates over (a loader, a list ...); None for ``while`` loops
    iterable: Optional[Value] = None
    #: states of the current iteration's paths that left it early (an ``if`` arm ending in
    #: ``continue`` or ``break``): they skip the rest of the body and meet the others at its end
    jumped: list[dict[str, Value]] = field(default_factory=list)

    @property
    def assigned(self) -> frozenset[str]:
        """Names and dotted names written (or mutated in place) anywhere in the loop."""
        if self._assigned is None:
            collector = _AssignedNames()
            walk.visit(self.node, collector)
            self._assigned = frozenset(collector.names)
        return self._assigned


class _AssignedNames(OwnScopeVisitor):
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


@dataclass(eq=False)
class ModuleConstruction:
    """An object of a module class of the file (or a base of it in the project) built by a call
    a reporting pass met: what that call handed to each parameter of the ``__init__`` it runs,
    and where the object is placed afterwards, as far as the file shows."""

    node: cst.Call
    #: the ``__init__`` the call runs (the class's own or a base's)
    init: cst.FunctionDef
    #: per parameter of ``init``, the value the call binds to it (parameters left to their
    #: defaults are absent)
    bound: dict[str, Value]
    #: the call that moves the object to a device that may be an accelerator
    #: (``AppendFeatures(t).to(device)``, ``m.cuda()``), once met
    moved_by: Optional[cst.Call] = None
    #: the module class whose ``__init__`` (or a method only it calls) builds the object: a
    #: submodule, which moves with that model; None where it is built elsewhere
    submodule_of: Optional[ClassInfo] = None
    #: the class the call builds an object of
    class_info: Optional[ClassInfo] = None
    #: calls of the class's own methods made on the object before ``moved_by`` (code outside the
    #: class finishing the build: ``detector.load_anchors(arr)``, then ``detector.to(device)``),
    #: with the method each one runs and what it binds to that method's parameters (None where
    #: the call does not fit them); what they store on the object is made where the object is
    #: then, the host
    set_up_by: list[tuple[cst.Call, cst.FunctionDef, Optional[dict[str, Value]]]] = field(default_factory=list)


@dataclass(frozen=True)
class RebuiltModule:
    """``model = Net(args)`` where ``model`` held a module moved to a device that can be the
    accelerator (``model = Net(args).to(args.device)`` earlier): the program rebuilds its model
    and leaves the new one on the host. Where it then meets inputs on that device, the move
    it forgot belongs here, as it was on the module it replaces."""

    #: the name the new module is bound to
    name: str
    #: the construction (the whole right-hand side of the assignment)
    construction: cst.CSTNode
    #: what the name held before: the moved module
    replaced: Value


@dataclass
class FileFacts:
    """Whole-file facts that some rules weigh at the end."""

    #: calls that move something to an accelerator, in analysis order
    accelerator_moves: list[cst.Call] = field(default_factory=list)
    criteria: list[CriterionInfo] = field(default_factory=list)
    #: the program picks its device when it runs (`torch.cuda.is_available()`, a device count,
    #: `torch.device(args.device)`): it is meant for machines with and without that GPU
    chooses_device_at_run_time: bool = False
    #: the file's text names an accelerator or a device at all (``cuda``, ``device``, ``.to(``,
    #: ``accelerator=``): False for a program that can only ever run on the CPU
    mentions_accelerator: bool = True
    #: module level or a free function builds a module class of this file: the file is a
    #: program that runs its own model, not (only) a library of model classes
    program_builds_own_model: bool = False
    #: classes of the file whose objects ``nn.DataParallel`` wraps with several ``device_ids``
    #: (as the analysis met the wrapping calls), each with the wrapping call
    replicated_classes: dict[ClassInfo, cst.Call] = field(default_factory=dict)
    #: objects of module classes of the file built by calls the analysis met (reporting
    #: passes), by the constructing call
    module_constructions: dict[cst.Call, ModuleConstruction] = field(default_factory=dict)
    #: ``nn.Sequential(Normalize(mean, std), net)``: the constructions of module classes of the
    #: file that a torch container module is built from, by the container's call (a move of the
    #: container moves them, see ModuleConstruction.moved_by)
    container_members: dict[cst.Call, list[ModuleConstruction]] = field(default_factory=dict)
    #: modules built on the host in place of a moved one, by their construction (see RebuiltModule)
    rebuilt_modules: dict[cst.CSTNode, RebuiltModule] = field(default_factory=dict)

    def snapshot(self) -> dict[str, object]:
        """The facts as they are now (containers copied), for ``restore``: a pass of one call
        site (see Summaries._specialise_by_call_site) leaves them as the joined passes found."""
        taken: dict[str, object] = {name: copy.copy(value) for name, value in vars(self).items()}
        # a construction met again records its move and arguments in place
        taken["module_constructions"] = {node: copy.copy(built) for node, built in self.module_constructions.items()}
        return taken

    def restore(self, snapshot: dict[str, object]) -> None:
        for name, value in snapshot.items():
            setattr(self, name, value)
