"""Abstract values of the device-flow analysis: kind x device x origin."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

import libcst as cst

from devicelint.analysis.names import dotted_name


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"
    CRITERION = "criterion"
    OPTIMIZER = "optimizer"
    LOADER = "loader"
    DATASET = "dataset"
    #: one item drawn from a loader or dataset: a tensor or a (nested) collection of tensors
    BATCH = "batch"
    DEVICE = "device"
    #: a ``torch.Generator``: its ``device`` is where it can draw random numbers
    GENERATOR = "generator"
    #: a tuple/list/dict whose element values are known (``items``)
    CONTAINER = "container"
    #: a reference to something imported or a dotted path under it (``qualname``)
    REF = "ref"
    #: a class defined in the analysed file (``info`` is its ClassInfo)
    CLASS = "class"
    FUNCTION = "function"
    STR = "str"
    NUMBER = "number"
    NDARRAY = "ndarray"
    #: the iterable of a module's parameters (``info`` is the module's Value)
    PARAMETERS = "parameters"
    UNKNOWN = "unknown"


#: kinds whose value carries a device
PLACED_KINDS = frozenset({Kind.TENSOR, Kind.MODULE, Kind.CRITERION, Kind.BATCH, Kind.LOADER, Kind.DATASET})

_CUDA_INDEX = re.compile(r"^(cuda|xpu|mps|hpu|npu)(?::(\d+))?$")


@dataclass(frozen=True)
class Device:
    """Where a value lives, in one domain shared by every rule.

    ``kind`` is one of:

    * ``cpu`` - pinned to the host whatever device the run uses (a factory without
      ``device=``, ``torch.from_numpy``, a DataLoader batch, ``.cpu()``);
    * ``meta``;
    * ``accel`` - a concrete accelerator (``"cuda:1"``, ``.cuda()``) or a device chosen from
      ``cuda`` (``"cuda" if torch.cuda.is_available() else "cpu"``): the GPU on any GPU run;
    * ``follows`` - symbolic: on the device of an anchor that can be an accelerator - a module
      (any ``nn.Module`` can be moved; frameworks put Lightning and transformers models on the
      accelerator themselves), or a device expression that the code uses as a device
      (``x.to(device)``, ``device=args.device``). ``label`` names the anchor.

    Unknown is ``None`` on the Value. ``index`` is known only for literals such as
    ``"cuda:1"``; two accelerator devices conflict only when both indices are known and differ.
    ``label`` is how the source spells the device or anchor and is used in messages only.
    """

    kind: str
    label: str
    index: Optional[int] = None
    #: ``follows`` only: the anchor is a tensor argument whose device the caller chose (in a
    #: free function) - evidence enough for a factory that meets it, not for numpy calls
    argument: bool = False
    #: the value is here only on some arms of one if/elif chain, and on the host on the others
    #: (see PathPlacement); like a label it does not take part in comparisons
    only_on: Optional["PathPlacement"] = field(default=None, compare=False)
    #: ``accel``/``follows`` inside a method of a module that ``nn.DataParallel`` replicates over
    #: several GPUs: a device the code names itself (``.cuda(self.device_ids[0])``,
    #: ``.to("cuda:0")``), one GPU for every replica, while each replica's inputs and weights sit
    #: on the replica's own GPU (``MODEL_DEVICE``); the wrapping call, for messages
    one_for_all_replicas: Optional[cst.Call] = field(default=None, compare=False)
    #: ``accel``/``follows`` where paths merged, one of which left the value on the host (``if
    #: args.use_cuda: x = x.cuda()``): on a GPU run it is taken to be here (see join_devices),
    #: but a run that takes the other path has it on the host
    also_on_host: bool = field(default=False, compare=False)

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def is_accel(self) -> bool:
        """A concrete (or cuda-chosen) accelerator."""
        return self.kind == "accel"

    @property
    def is_symbolic(self) -> bool:
        return self.kind == "follows"

    @property
    def may_be_accelerator(self) -> bool:
        """On a GPU run this can be the GPU: a concrete accelerator or a symbolic anchor."""
        return self.kind in ("accel", "follows")

    def conflicts_with(self, other: "Device") -> bool:
        for fixed, replica in ((self, other), (other, self)):
            if fixed.one_for_all_replicas is not None and replica.one_for_all_replicas is None and replica == MODEL_DEVICE:
                # the replica on every GPU but the named one mixes the two
                return True
        if self.kind == "follows" or other.kind == "follows":
            # a symbolic device can be any accelerator: it is known to differ only from the host
            return self.kind == "cpu" or other.kind == "cpu"
        if self.kind != other.kind:
            return True
        if self.kind == "accel" and self.index is not None and other.index is not None:
            return self.index != other.index
        return False

    def describe(self) -> str:
        if self.kind == "cpu":
            return "the CPU"
        if self.kind == "meta":
            return "the meta device"
        if self.kind == "follows" and self.label.startswith("the "):
            return self.label
        if self.argument:
            return f"the device of `{self.label}`"
        return f"`{self.label}`"


@dataclass(frozen=True)
class PathPlacement:
    """Where paths meet, a value that one path put on the accelerator is taken to be there (see
    join_devices). Where the arms of one if/elif chain moved *different* values from the host
    (``if args.gpu: images = images.cuda()`` / ``elif ...: target = target.cuda()``), the
    moved values' devices carry this record of the arms that put them there, so that an
    operation that later meets two of them, or one of them and a value on the accelerator on
    every path, can tell the arm that runs it with one operand left on the host.

    Arms are numbered in source order; the arm after the last ``elif`` without an ``else`` (no
    test true) counts as one. Arms that leave the chain (``return``, ``raise``, ``continue``,
    ``break``) or cannot run are not arms here."""

    #: the chain's first ``if`` (compared by identity: records of different chains differ)
    chain: cst.If
    #: the arms that left the value on the accelerator (on the others it is on the host)
    placed: frozenset[int]
    #: the arms that moved some value of the chain from the host to the accelerator: those a
    #: GPU run takes
    moving: frozenset[int]
    #: each arm's ``if``/``elif``/``else`` node (None for the arm with no test true), for messages
    arms: tuple[Optional[cst.CSTNode], ...] = field(compare=False)


def follows(anchor: str, argument: bool = False) -> Device:
    """The symbolic device of ``anchor`` (``"the model's device"``, ``"device"``, ``"x.device"``);
    ``argument`` for a tensor argument of a free function, placed by its caller."""
    return Device("follows", anchor, argument=argument)


#: where a module's own tensors live, seen from inside its methods
MODEL_DEVICE = follows("the model's device")


CPU = Device("cpu", "cpu")
META = Device("meta", "meta")


def device_from_string(text: str, label: Optional[str] = None) -> Optional[Device]:
    """Parse a device string literal such as ``"cuda:1"``, ``"cpu"``, ``"mps"``."""
    text = text.strip()
    if text == "cpu" or text.startswith("cpu:"):
        return CPU
    if text == "meta":
        return META
    match = _CUDA_INDEX.match(text)
    if match:
        index = int(match.group(2)) if match.group(2) is not None else None
        return Device("accel", label or repr(text).replace("'", '"'), index)
    return None


def join_devices(first: Optional[Device], second: Optional[Device]) -> Optional[Device]:
    """Where a value lives after paths that placed it differently meet. The host joined with a
    device that can be the accelerator is that device: on a GPU run the path that moved the
    value may be taken, and whatever needs it on the host (numpy) or next to host tensors
    fails there."""
    if first is None or second is None:
        return None
    if first.is_cpu and second.may_be_accelerator:
        return second if second.also_on_host else replace(second, also_on_host=True)
    if second.is_cpu and first.may_be_accelerator:
        return first if first.also_on_host else replace(first, also_on_host=True)
    if first.kind != second.kind or first.conflicts_with(second):
        return None
    if first.kind == "follows" and (first.label != second.label or first.argument != second.argument):
        return None
    if first.index != second.index:
        return Device(first.kind, first.label, None)
    if first.only_on != second.only_on:
        # where it was on the host depends on the path taken before the merge: no longer known
        return replace(first, only_on=None)
    return first


class Provenance(enum.Enum):
    """How a value came to be where it is (``Origin.provenance``). The analysis and the rules
    test this; ``Origin.how`` is only the message that says it to the user."""

    #: made by a tensor factory, a constructor, a module or optimizer class
    CREATED = "created"
    #: moved by ``.to()``/``.cuda()``, to a device or to one the analysis does not know
    MOVED = "moved"
    #: moved to the host by ``.cpu()``/``.to("cpu")``
    MOVED_TO_HOST = "moved to the host"
    #: a device the program chose (``torch.device(...)``, ``"cuda" if ... else "cpu"``)
    CHOSEN = "chosen"
    #: a batch drawn from a DataLoader
    BATCH = "batch"
    #: a dataset, or an item drawn from one
    DATASET = "dataset"
    #: a DataLoader
    LOADER = "loader"
    #: anything else: loaded, returned, read, handed in, drawn from another value...
    OTHER = "other"


@dataclass(frozen=True)
class Origin:
    """The node that gave a value its device, how it did (``provenance``), and the message
    that says so ("created by `torch.zeros`")."""

    node: cst.CSTNode
    how: str
    #: the value is input data: drawn from a DataLoader or dataset, or converted from numpy
    from_data: bool = False
    #: the value is an object of unknown kind that a constructor built without being told a
    #: device (see devicelint.analysis.constructions): a module on the host, once shown to be one
    construction: bool = False
    #: the value is what a transformers tokenizer returned for ``return_tensors="pt"`` (``node``
    #: is that call): host tensors, which the caller moves by appending ``.to(device)`` there
    tokenized: bool = False
    #: where paths merge, the other places a host tensor came from (``n_idx = torch.zeros(a)``
    #: on one branch, ``torch.zeros(b)`` on the other): each needs the same fix
    alternatives: tuple["Origin", ...] = ()
    provenance: Provenance = Provenance.OTHER
    #: the helper function whose own factory made the value (``how`` then names it)
    helper: Optional[str] = None

    @property
    def created(self) -> bool:
        return self.provenance is Provenance.CREATED

    @property
    def moved(self) -> bool:
        """Moved by the program, to any device (the host included)."""
        return self.provenance in (Provenance.MOVED, Provenance.MOVED_TO_HOST)


class Role(enum.Enum):
    """What a value is beyond its kind, where the analysis and the rules need to tell
    (``Value.role``). Like ``info``, a role does not take part in comparisons, and a join keeps
    it only where both sides have the same one."""

    #: a tensor made by ``nn.Parameter(...)``
    PARAMETER = "parameter"
    #: what a function returns that is a tuple or list on some paths and a tensor on others
    #: (``init_hidden`` giving ``(h, c)`` for an LSTM and ``h`` for a GRU)
    SEQUENCE_ON_SOME_PATHS = "a sequence on some paths"
    #: a tensor cast by ``.type(torch.LongTensor)`` / ``.type(torch.cuda.FloatTensor)``: moved
    #: by a legacy type, which DL313 reports
    LEGACY_TYPE_CAST = "legacy type cast"
    #: a tensor registered by ``register_buffer``
    BUFFER = "buffer"
    #: a module wrapped by ``DataParallel`` or the like
    PARALLEL_WRAPPER = "parallel wrapper"
    #: what a module call returns: a tensor, or a tuple of outputs not all of which are tensors
    MODEL_OUTPUT = "model output"
    #: an object of unknown kind taken for a module because a bare ``x.to(d)`` moved it
    INFERRED_MODULE = "inferred module"
    #: an empty ``io.BytesIO()``: whatever is loaded from it was saved by this very process
    IN_PROCESS_BUFFER = "in-process buffer"
    #: the value of ``torch.cuda.Stream()``: a new stream, not the current one
    NEW_STREAM = "new stream"
    #: a batch (or dataset item) that is a list or tuple of tensors, not one tensor: default
    #: collation turns tuple items into a list; on a dataset, its items are tuples or lists
    SEQUENCE_BATCH = "sequence batch"
    #: a batch (or dataset item) that is a dict of tensors; on a dataset, its items are dicts
    MAPPING_BATCH = "mapping batch"
    #: an entry of a dict batch taken by iterating it (``for key, value in batch.items()``)
    #: where the dataset fills some keys with Python strings: that entry is a list of strings
    #: (``info`` is the batch's CollatedMapping, which names those keys)
    DICT_BATCH_ENTRY_WITH_TEXT = "dict batch entry, some entries text"
    #: a number or text that is the job-wide rank of the process (``dist.get_rank()``, the
    #: ``RANK`` variable), or a device string built from it; see devicelint.analysis.ranks
    GLOBAL_RANK = "global rank"
    #: a number or text that is the rank of the process on its node (the ``LOCAL_RANK``
    #: variable, the ``--local-rank`` option ``torch.distributed.launch`` passes), or a device
    #: built from it: each process of the job has its own; see devicelint.analysis.ranks
    LOCAL_RANK = "local rank"
    #: a device value that is the CPU on some paths and an accelerator on others (``return
    #: torch.device("cuda")`` under ``if torch.cuda.is_available():``, else ``torch.device("cpu")``):
    #: the program picks it when it runs, so it names the accelerator only on a GPU machine
    RUN_TIME_CHOICE = "device chosen at run time"
    #: a PyTorch Geometric graph (``Data``, ``HeteroData``, a collated ``Batch``) or one of its
    #: stores (``data["author"]``), drawn from a dataset or loader: its fields (``data.x``,
    #: ``data["author"].y_index``) are tensors where it is, its API members (``num_nodes``,
    #: ``x_dict``) are not; see devicelint.analysis.graphs
    GRAPH_DATA = "graph data"
    #: a transformers tokenizer (``AutoTokenizer.from_pretrained(...)``): calling it, or its
    #: ``encode``, with ``return_tensors="pt"`` gives host tensors (see torch_api)
    TOKENIZER = "tokenizer"
    #: a transformers ``BatchEncoding``: a dict of tensors whose entries are attributes too
    #: (``batch.input_ids``); its ``.to(device)`` moves every entry and returns the batch
    TOKENIZED_BATCH = "tokenized batch"
    #: ``None``, as a parameter's default that every call of the function leaves it at
    #: (``device=None``): ``device if device is not None else ...`` takes the other arm
    NONE_DEFAULT = "None by default"
    #: the ``None`` literal: where a path that leaves a name (or attribute) at ``None`` meets
    #: one that binds it to a tensor, the name holds a TensorOrNone (``self.weight = None``,
    #: then ``if weight is not None: self.weight = torch.tensor(weight)``)
    NONE_LITERAL = "None"
    #: an object of a plain class of the file that a function returns with modules it set on
    #: it (``instance.model = Net()``; ``fields`` holds them, see flow._with_modules_set_on)
    MODULES_SET_ON_OBJECT = "modules set on a returned object"
    #: a torchvision transform that turns an image into a tensor (``transforms.ToTensor()``, or
    #: a ``transforms.Compose`` whose list holds one): calling it gives a host tensor made from
    #: the data
    IMAGE_TO_TENSOR = "image-to-tensor transform"
    #: an AllenNLP batch iterator (``BucketIterator(...)``): calling it on instances gives a
    #: loader of host batches (see torch_api.ALLENNLP_ITERATORS_PACKAGE)
    BATCH_ITERATOR = "batch iterator"
    #: a sentence-transformers ``SentenceTransformer`` model: ``encode(..., convert_to_tensor=True)``
    #: gives its embeddings where it is (see torch_api.SENTENCE_TRANSFORMER_CLASSES)
    SENTENCE_ENCODER = "sentence encoder"
    #: a batch of a torchtext legacy iterator (``batch.src``, ``batch.label``): each field is
    #: an attribute holding a tensor, or a (tensor, lengths) pair (see
    #: torch_api.TORCHTEXT_ITERATORS)
    FIELD_BATCH = "field batch"
    #: a ``torch.distributions`` object (``Categorical(logits=x)``, ``Normal(mu, sigma)``),
    #: placed where its parameter tensors are: its samples, log-probabilities and entropies
    #: are tensors there
    DISTRIBUTION = "distribution"


#: the roles of a process's rank (and of devices built from it)
RANK_ROLES = frozenset({Role.GLOBAL_RANK, Role.LOCAL_RANK})


@dataclass(frozen=True)
class Value:
    kind: Kind
    device: Optional[Device] = None
    origin: Optional[Origin] = None
    qualname: Optional[str] = None
    #: True for a 0-dim tensor, False when known to have at least one dimension, None if unknown
    scalar: Optional[bool] = None
    #: kind-specific payload: ClassInfo, LoaderInfo, a tuple of item Values, a literal ...
    info: Any = field(default=None, compare=False)
    literal: Any = None
    #: what the value is beyond its kind (a parameter, a model's output ...); see Role
    role: Optional[Role] = field(default=None, compare=False)
    #: an object of a dataclass of the file: the values its construction gave its fields
    #: (``Frame(rotations=torch.eye(3), ...)``), by name; also what the code stored at a
    #: constant key of a dict or config (``cfg["device"] = dev``), under ``item_field(key)``;
    #: like ``info``, not compared, and a join keeps them only where both sides carry the very
    #: same ones
    fields: Optional[tuple[tuple[str, "Value"], ...]] = field(default=None, compare=False)

    def field_value(self, name: str) -> Optional["Value"]:
        """What the object's field ``name`` holds, where its construction says."""
        for field_name, value in self.fields or ():
            if field_name == name:
                return value
        return None

    def with_item(self, key: str, stored: "Value") -> "Value":
        """The collection after ``collection[key] = stored``: that entry reads back as stored."""
        name = item_field(key)
        kept = tuple(pair for pair in self.fields or () if pair[0] != name)
        return replace(self, fields=(*kept, (name, stored)))

    @property
    def has_items(self) -> bool:
        """Does the value remember entries stored at constant keys (see with_item)?"""
        return any(name.startswith("[") for name, _ in self.fields or ())

    def without_items(self) -> "Value":
        """The collection once code that may change it has had it: no stored entry is known."""
        kept = tuple(pair for pair in self.fields or () if not pair[0].startswith("["))
        return replace(self, fields=kept or None)

    def with_device(self, device: Optional[Device], origin: Optional[Origin]) -> "Value":
        return replace(self, device=device, origin=origin if device is not None else self.origin)

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.BATCH)

    @property
    def is_bare(self) -> bool:
        """Nothing is known of the value beyond its kind and placement: no ``info`` payload and
        no ``role`` (for a value of unknown kind: an object the analysis cannot tell apart)."""
        return self.info is None and self.role is None


def item_field(key: str) -> str:
    """The name under which a value's fields keep what ``collection[key] = ...`` stored
    (``["device"]``): never an attribute's name, so a field and an entry never meet."""
    return f"[{key!r}]"


def item_key(name: str) -> Optional[str]:
    """The key of a field that :func:`item_field` named (``['x']`` gives ``x``), else None
    (an attribute's name; a key whose spelling needs escapes is not taken back)."""
    key = name[2:-2]
    return key if len(name) >= 4 and item_field(key) == name else None


UNKNOWN = Value(Kind.UNKNOWN)
#: the literal ``None``
NONE_VALUE = Value(Kind.NUMBER, literal=None, role=Role.NONE_LITERAL)
#: kinds of values that are known objects, never None
NEVER_NONE_KINDS = frozenset({Kind.TENSOR, Kind.MODULE, Kind.CRITERION, Kind.OPTIMIZER, Kind.LOADER, Kind.DATASET, Kind.GENERATOR, Kind.DEVICE})


@dataclass(frozen=True)
class TensorOrNone:
    """Payload of a value of unknown kind that is ``None`` on some paths and this tensor on the
    others (``compute_weights() if use_weights else None``). It is not taken for a tensor
    where it is used: only a test that rules out ``None`` (``if w is not None:``) gives the
    tensor, and so does a loss's ``weight=``, which holds a tensor only where one is given."""

    tensor: Value


@dataclass(frozen=True)
class NoneOnOneArm:
    """Payload of a value of unknown kind that a conditional expression chooses: a string or
    device on one arm and ``None`` on the other (``"cpu" if device == "cpu" else None``). Where
    it is handed on as an option whose ``None`` means something of its own (``map_location``:
    leave every tensor where it was saved), the arm that gives ``None`` is worth naming."""

    chosen: Value
    #: the conditional expression, for messages: its test, and the arm that is ``None``
    choice: cst.IfExp

    @property
    def none_arm(self) -> cst.BaseExpression:
        return self.choice.orelse if is_none_literal(self.choice.orelse) else self.choice.body

    @property
    def none_when_test_holds(self) -> bool:
        """``None if test else x``: None where the test holds; ``x if test else None``: where it fails."""
        return self.none_arm is self.choice.body


def is_none_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def none_on_one_arm(value: Value) -> Optional[NoneOnOneArm]:
    """The conditional expression that made ``value`` None on one of its arms, if any."""
    return value.info if value.kind == Kind.UNKNOWN and isinstance(value.info, NoneOnOneArm) else None


def tensor_where_given(value: Value) -> Value:
    """For an argument that takes a tensor or None (``out.backward(gradient=g)``, a loss's
    ``weight=``): the tensor a TensorOrNone value holds where it is one, else the value."""
    found = _tensor_or_none(value)
    return found if found is not None else value


def _tensor_or_none(value: Value) -> Optional[Value]:
    """The tensor of a TensorOrNone value, the value itself for a tensor; else None."""
    if value.kind == Kind.TENSOR:
        return value
    if value.kind == Kind.UNKNOWN and isinstance(value.info, TensorOrNone):
        return value.info.tensor
    return None


def join(first: Value, second: Value) -> Value:
    """Least upper bound at a control-flow merge: facts that disagree become unknown."""
    if first is second or first == second and first.info is second.info and first.role is second.role and first.fields is second.fields:
        return first
    if isinstance(first.info, TensorOrNone) or isinstance(second.info, TensorOrNone):
        # `if w is not None:` narrowed `w` on one path only: still a tensor or None after it
        tensors = _tensor_or_none(first), _tensor_or_none(second)
        if tensors[0] is None and first.role is Role.NONE_LITERAL or tensors[1] is None and second.role is Role.NONE_LITERAL:
            return first if tensors[0] is not None else second
        if tensors[0] is None or tensors[1] is None:
            return UNKNOWN
        return Value(Kind.UNKNOWN, info=TensorOrNone(join(*tensors)))
    for none, tensor in ((first, second), (second, first)):
        if none.role is Role.NONE_LITERAL and tensor.kind == Kind.TENSOR:
            # `self.weight = None`, then `self.weight = torch.tensor(w)` on one path
            return Value(Kind.UNKNOWN, info=TensorOrNone(tensor))
    if first.kind != second.kind:
        for number, tensor in ((first, second), (second, first)):
            if (
                number.kind == Kind.NUMBER
                and isinstance(number.literal, (int, float))
                and not isinstance(number.literal, bool)
                and tensor.kind == Kind.TENSOR
                and number.role is None
            ):
                # `total = 0` then `total += loss` in a loop: after any iteration a tensor; and
                # `nn.Parameter(torch.zeros(n)) if bias else 0.0` stays the Parameter it may be
                return Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=tensor.scalar, role=tensor.role)
        for placed, tensor in ((first, second), (second, first)):
            if placed.kind == Kind.UNKNOWN and placed.is_bare and placed.device is not None and tensor.kind == Kind.TENSOR:
                # `x = x.to("cuda")` of unknown kind, then `x = x + step` in a loop: still an
                # object on the device both paths agree on
                device = join_devices(placed.device, tensor.device)
                return Value(Kind.UNKNOWN, device, placed.origin if device is not None else None)
        return UNKNOWN
    if first.kind in (Kind.STR, Kind.NUMBER):
        if first.role is not None and first.role is second.role:
            return Value(first.kind, origin=first.origin, role=first.role)
        return Value(first.kind)
    if first.kind in (Kind.REF, Kind.CLASS, Kind.FUNCTION) and (
        first.qualname != second.qualname or first.info is not second.info or first.role is not second.role
    ):
        return UNKNOWN
    device = _join_placements(first, second)
    origin = None
    if device is not None:
        origin = second.origin if device is second.device and device is not first.device else first.origin
        if device.is_cpu and first.kind == Kind.TENSOR:
            origin = merged_host_origin(origin, second.origin if origin is first.origin else first.origin)
        elif device.also_on_host and first.kind == Kind.TENSOR:
            origin = _host_origin_kept(origin, first, second)
    scalar = first.scalar if first.scalar == second.scalar else None
    info = first.info if first.info is second.info else None
    if first.kind == Kind.CRITERION and info is None and (first.info is None or second.info is None):
        # a weighted loss on one path, an unweighted one on the other: only the weighted one
        # has an identity (its CriterionInfo), and moving the joined value moves it
        info = first.info if second.info is None else second.info
    if info is None and _same_parameters_drawn(first.info, second.info):
        # a parameter group (or one parameter) of the same `model.named_parameters()` call on
        # both paths (loop iterations evaluate it anew)
        info = first.info
    if first.kind == Kind.CONTAINER and info is None:
        info = _join_items(first.info, second.info)
    role = first.role if first.role is second.role else None
    if role is None and first.kind == Kind.DEVICE:
        for ranked, other in ((first, second), (second, first)):
            if ranked.role in RANK_ROLES and other.role is None and other.device is not None and other.device.is_cpu:
                # `cuda:<rank>` on a GPU run, the CPU otherwise: on a GPU, each process's own GPU
                role = ranked.role
    if role is None and first.kind == Kind.DEVICE and _host_or_accelerator(first.device, second.device):
        role = Role.RUN_TIME_CHOICE
    qualname = first.qualname if first.qualname == second.qualname else None
    fields = first.fields if first.fields is second.fields else None
    return Value(first.kind, device, origin, qualname, scalar, info, role=role, fields=fields)


def _host_origin_kept(origin: Optional[Origin], first: Value, second: Value) -> Optional[Origin]:
    """A tensor made on the host on one path and placed where an accelerator can be on the
    other (``kernel = gaussian(..., device)`` on one branch, ``torch.ones(...)`` on the other):
    the joined value's origin, with the host side's places among its alternatives, so that
    what meets the tensor on the accelerator can still name where the host one was made."""
    host = next((side for side in (first, second) if side.device is not None and side.device.is_cpu), None)
    if host is None or host.origin is None:
        return origin
    placed = second if host is first else first
    if placed.origin is None or placed.origin is host.origin:
        return origin
    # the placed side's origin first: where the value is on a GPU run (see join_devices)
    return merged_host_origin(placed.origin, host.origin)


def _host_or_accelerator(first: Optional[Device], second: Optional[Device]) -> bool:
    """One side is the host and the other can be the accelerator."""
    if first is None or second is None:
        return False
    return (first.is_cpu and second.may_be_accelerator) or (second.is_cpu and first.may_be_accelerator)


#: how many places a joined host tensor remembers it came from
_MOST_ALTERNATIVES = 3


def merged_host_origin(kept: Optional[Origin], other: Optional[Origin]) -> Optional[Origin]:
    """The origin of a host tensor made in different places on the paths that merge: the kept
    one, with the other's places as alternatives (see Origin.alternatives)."""
    if kept is None or other is None or kept.node is other.node:
        return kept
    known = {id(kept.node), *(id(alternative.node) for alternative in kept.alternatives)}
    added = tuple(
        candidate for candidate in (replace(other, alternatives=()), *other.alternatives) if id(candidate.node) not in known
    )
    if not added or len(kept.alternatives) >= _MOST_ALTERNATIVES:
        return kept
    return replace(kept, alternatives=(kept.alternatives + added)[:_MOST_ALTERNATIVES])


def _join_placements(first: Value, second: Value) -> Optional[Device]:
    """The device after a merge (see join_devices), with two refinements for values:

    * one path left the device unknown and the other put it where an accelerator can be
      (``if torch.cuda.is_available(): model = model.cuda()``): on a GPU run that path is
      taken, so the value is there;
    * one path explicitly brought it back to the host (``if use_cuda: out = out.cpu()``): the
      program wants it on the host from here on, whatever the other path did.
    """
    for host, other in ((first, second), (second, first)):
        if (
            host.device is not None
            and host.device.is_cpu
            and host.origin is not None
            and host.origin.provenance is Provenance.MOVED_TO_HOST
            and other.device is not None
            and other.device.may_be_accelerator
        ):
            return host.device
    device = join_devices(first.device, second.device)
    if device is None:
        for unknown, placed in ((first, second), (second, first)):
            if unknown.device is None and placed.device is not None and placed.device.may_be_accelerator:
                return placed.device
    return device


@dataclass(frozen=True)
class BoundCall:
    """Payload of a function value made by ``functools.partial(fn, *args, **kwargs)`` of a
    function of the file (or a lambda): a call of it calls ``fn`` with these arguments first
    (the call's keywords replace the bound ones)."""

    function: Value
    args: tuple  # tuple[tuple[cst.Arg, Value], ...]


@dataclass(frozen=True)
class Homogeneous:
    """Container payload: every element has this value (comprehensions, list(...), iterators,
    lists built by ``append``)."""

    element: Value
    #: an element some path put in that ``element`` (the join of all) no longer shows: a
    #: tensor that may be on an accelerator, appended next to elements of unknown kind
    #: (``final = [x]``, then ``final.append(layer(final[-1]))``); numpy fails on the list
    #: if any element is such a tensor
    some: Optional[Value] = None
    #: the ``append``/``extend`` call that last put in an element that may be on an
    #: accelerator (where a `.cpu()` or `.item()` would keep the list on the host)
    put_by: Optional[cst.CSTNode] = field(default=None, compare=False)
    #: entries of the list that live apart at once: some a host tensor, others a tensor that
    #: may be on an accelerator (see HostBesideAccelerator)
    apart: Optional["HostBesideAccelerator"] = field(default=None, compare=False)
    #: a dict's keys, where known (``model.state_dict()``: names): iterating the dict gives
    #: them, not its values (``for key in weights: weights[key]``)
    key: Optional[Value] = None


@dataclass(frozen=True)
class HostBesideAccelerator:
    """A list whose entries live apart at once, not on alternative paths: a placeholder made
    on the host (``[torch.zeros(0, 6)] * n``, ``stats.append((correct, *torch.zeros((3, 0))))``)
    next to entries that may be on an accelerator (``output[i] = x[keep]``). A CPU tensor with
    a dimension - empty or not - and a GPU tensor in one ``torch.cat``/``torch.stack`` fail
    ("Expected all tensors to be on the same device"); only a 0-dim CPU tensor is let through,
    and only by elementwise operations."""

    #: None: the list's elements themselves; ``j``: position ``j`` of its tuple elements
    #: (rows that ``zip(*rows)`` turns into columns)
    position: Optional[int]
    host: Value
    accelerator: Value
    #: the call or store that put the accelerator entry (or the host one) beside the other
    put_by: Optional[cst.CSTNode] = field(default=None, compare=False)


@dataclass(frozen=True)
class ParamGroup:
    """Container payload of a dict that is one of an optimizer's parameter groups
    (``{"params": model.parameters(), "weight_decay": 0.0}``): ``parameters`` is the PARAMETERS
    value under ``"params"``."""

    parameters: Value


@dataclass(frozen=True)
class OneParameter:
    """Tensor payload of one parameter drawn from a module's parameters (``for p in
    model.parameters()``, ``for name, p in model.named_parameters()``): ``parameters`` is the
    PARAMETERS value it was drawn from. A parameter group made of such parameters (``{"params":
    [p], "lr": ...}``) optimizes some of that module's parameters."""

    parameters: Value


def _same_parameters_drawn(first: object, second: object) -> bool:
    """Two ParamGroup (or two OneParameter) payloads of parameters taken by one call."""
    if not (isinstance(first, ParamGroup) and isinstance(second, ParamGroup) or isinstance(first, OneParameter) and isinstance(second, OneParameter)):
        return False
    return same_parameters(first.parameters, second.parameters)


def same_parameters(first: Value, second: Value) -> bool:
    """Two PARAMETERS values of the same call (``model.named_parameters()``, evaluated again in
    each iteration of a loop), or the same value."""
    if first is second:
        return True
    return first.origin is not None and second.origin is not None and first.origin.node is second.origin.node


def drawn_parameters(value: Value) -> Optional[Value]:
    """The PARAMETERS value the parameters in ``value`` were drawn from: one parameter (see
    OneParameter), or a list or tuple of them, all from the same module's parameters."""
    if value.kind == Kind.TENSOR and isinstance(value.info, OneParameter):
        return value.info.parameters
    if value.kind != Kind.CONTAINER:
        return None
    items = (value.info.element,) if isinstance(value.info, Homogeneous) else value.info if isinstance(value.info, tuple) else ()
    found: Optional[Value] = None
    for item in items:
        if item.kind != Kind.TENSOR or not isinstance(item.info, OneParameter):
            return None
        if found is not None and not same_parameters(item.info.parameters, found):
            return None
        found = item.info.parameters
    return found


def optimized_parameters(value: Value) -> Optional[Value]:
    """The PARAMETERS value an optimizer built from ``value`` optimizes: ``model.parameters()``
    itself, or a list of parameter groups (``[{"params": ...}, {"params": ...}]``) whose
    parameters all come from one module. None when ``value`` is neither."""
    if value.kind == Kind.PARAMETERS:
        return value
    if value.kind != Kind.CONTAINER:
        return None
    if isinstance(value.info, ParamGroup):
        return value.info.parameters
    groups = (value.info.element,) if isinstance(value.info, Homogeneous) else value.info if isinstance(value.info, tuple) else ()
    found: Optional[Value] = None
    for group in groups:
        if group.kind != Kind.CONTAINER or not isinstance(group.info, ParamGroup):
            return None
        parameters = group.info.parameters
        if found is not None and parameters.info is not found.info and (parameters_owner(parameters) is None or parameters_owner(parameters) != parameters_owner(found)):
            return None  # groups of different modules: no one model is the optimized one
        found = parameters
    return found


def parameters_owner(parameters: Value) -> Optional[str]:
    """How the code spells the module a PARAMETERS value was taken from (``self.network`` for
    ``self.network.named_parameters()``), where it is a name or a dotted attribute chain."""
    node = parameters.origin.node if parameters.origin is not None else None
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    return dotted_name(node.func.value)


@dataclass(frozen=True)
class CollatedItems:
    """Batch payload: what default collation made of each position of a dataset's tuple items.
    ``positions[i]`` is Role.SEQUENCE_BATCH where the item holds a tuple or list there (collated
    into a list of batched tensors), Role.MAPPING_BATCH for a dict (collated into a dict), None
    for a tensor or number (one batched tensor)."""

    positions: tuple[Optional[Role], ...]


@dataclass(frozen=True)
class CollatedMapping:
    """Batch payload of a dict batch: the keys whose item values are Python strings, which
    default collation gathers into a list of strings (no ``.to()``), in source order."""

    text_keys: tuple[str, ...]


def collated_item(batch: Value, position: int) -> Optional[Value]:
    """Position ``position`` of a default-collated batch (``data, target = batch``,
    ``batch[0]``), where the dataset's items are known: a batch of its own where the items hold
    a tuple, list or dict there, else a tensor. None where the item shape is not known."""
    info = batch.info
    if batch.kind != Kind.BATCH or not isinstance(info, CollatedItems) or not -len(info.positions) <= position < len(info.positions):
        return None
    role = info.positions[position]
    if role is None:
        return Value(Kind.TENSOR, batch.device, batch.origin, scalar=batch.scalar)
    return Value(Kind.BATCH, batch.device, batch.origin, scalar=False, role=role)


def container_items(value: Value) -> tuple[Value, ...]:
    """What a value holds, for rules that judge each tensor in it: the known items of a list or
    tuple, or the element every item of a list is (built by ``append``, a comprehension); the
    value itself for anything else."""
    if value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous):
        return (value.info.element,)
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
        return tuple(item for item in value.info if isinstance(item, Value))
    return (value,)


def homogeneous_element(container: Value) -> Optional[Value]:
    """What every element of a list is, where known: the join of its known items, or the
    element of a Homogeneous payload; None for an empty or unknown list."""
    info = container.info
    if isinstance(info, Homogeneous):
        return info.element
    if isinstance(info, tuple) and info:
        element = info[0]
        for item in info[1:]:
            element = join(element, item)
        return element
    return None


def appended(container: Value, element: Value, call: Optional[cst.CSTNode] = None) -> Value:
    """The list after ``append(element)`` (the ``call``): its elements are what they were, or
    ``element``."""
    known = homogeneous_element(container)
    if known is None and not (isinstance(container.info, tuple) and not container.info):
        return Value(Kind.CONTAINER)  # elements of unknown kind were there before
    joined = element if known is None else join(known, element)
    some = container.info.some if isinstance(container.info, Homogeneous) else None
    put_by = container.info.put_by if isinstance(container.info, Homogeneous) else None
    if _may_hold_accelerator_tensor(element):
        put_by = call
        if not _may_hold_accelerator_tensor(joined):
            some = element
    apart = container.info.apart if isinstance(container.info, Homogeneous) else None
    if known is not None and (apart is None or apart.host.scalar is not False):
        found = host_beside_accelerator(known, element, call)
        if found is not None and (apart is None or found.host.scalar is False):
            apart = found  # one with a dimension says more (see HostBesideAccelerator)
        elif found is not None:
            apart = _merged_apart(apart, found)
    return Value(
        Kind.CONTAINER, container.device, container.origin,
        info=Homogeneous(joined, None if _may_hold_accelerator_tensor(joined) else some, put_by, apart),
    )


def _merged_apart(first: Optional[HostBesideAccelerator], second: Optional[HostBesideAccelerator]) -> Optional[HostBesideAccelerator]:
    """Host entries apart from accelerator ones on paths that merge (the GPU branch and the
    other each append their own host zero): the first, its host tensor also made where the
    second's was (see Origin.alternatives), so that each place is reported."""
    if first is None or second is None:
        return first if first is not None else second
    if first.position != second.position or first.host.device != second.host.device:
        return first
    origin = merged_host_origin(first.host.origin, second.host.origin)
    return first if origin is first.host.origin else replace(first, host=replace(first.host, origin=origin))


def may_hold_accelerator_tensor(value: Value) -> bool:
    """A tensor that may be on an accelerator, or a container that may hold one."""
    return _may_hold_accelerator_tensor(value)


def _may_hold_accelerator_tensor(value: Value) -> bool:
    """A tensor that may be on an accelerator, or a list that may hold one (a row of metrics
    appended to a history: ``history.append([errors[k] for k in names])``)."""
    if _maybe_on_accelerator(value):
        return True
    if value.kind != Kind.CONTAINER:
        return False
    if isinstance(value.info, Homogeneous):
        return _may_hold_accelerator_tensor(value.info.element) or value.info.some is not None and _may_hold_accelerator_tensor(value.info.some)
    return isinstance(value.info, tuple) and any(_may_hold_accelerator_tensor(item) for item in value.info)


def mapping_of(entries: Iterable[tuple[Value, cst.CSTNode]]) -> Value:
    """A dict built from its values and the expressions that give them (``{"loss": loss.item(),
    "acc": acc}``, ``OrderedDict([("acc", acc)])``): every value is what they all are where
    known, and one that may be on an accelerator is remembered with the expression that put it
    there, as ``append`` does (numpy fails on a list of the dict's values, a metrics history)."""
    mapping = Value(Kind.CONTAINER, info=())
    for value, node in entries:
        mapping = appended(mapping, value, node)
    if mapping.info == ():
        return mapping  # `{}`: empty, to be filled by stores (see filled_mapping)
    if not isinstance(mapping.info, Homogeneous):
        return Value(Kind.CONTAINER)
    # values of one dict are looked up one by one, never concatenated as a list is; iterating
    # it gives its keys, which are not followed
    return Value(Kind.CONTAINER, info=replace(mapping.info, apart=None, key=UNKNOWN))


def filled_mapping(container: Value, stored: Value, store: cst.CSTNode) -> Optional[Value]:
    """The dict after ``container[key] = stored`` (the ``store``), where ``container`` is a
    dict display (``{}`` filled in a loop: ``masks[name] = torch.full(...)``, ``outputs[k] =
    head(x)``): its values are what they were, or ``stored``, as if the display had held it.
    None for other containers (a list, a batch, a dict of unknown values): the caller forgets
    their elements."""
    info = container.info
    if not (info == () or isinstance(info, Homogeneous) and info.key is not None and info.apart is None):
        return None
    filled = appended(container, stored, store)
    if not isinstance(filled.info, Homogeneous):
        return None
    return Value(Kind.CONTAINER, container.device, container.origin, info=replace(filled.info, apart=None, key=UNKNOWN))


def host_beside_accelerator(present: Value, added: Value, call: Optional[cst.CSTNode]) -> Optional[HostBesideAccelerator]:
    """``added`` is put into a list whose entries are ``present`` (both stay in it): a host
    tensor on one side and a tensor that may be on an accelerator on the other, in the entries
    themselves or at one position of tuple entries of one length. A host tensor with a
    dimension is preferred; one of unknown or no dimension is kept too (``torch.stack`` and
    ``torch.cat`` reject even a 0-dim CPU tensor beside a GPU one), and only the
    concatenating functions take it as evidence."""
    pairs: list[tuple[Optional[int], Value, Value]] = [(None, present, added)]
    if isinstance(present.info, tuple) and isinstance(added.info, tuple) and len(present.info) == len(added.info):
        pairs = [(position, a, b) for position, (a, b) in enumerate(zip(present.info, added.info))]
    any_rank: Optional[HostBesideAccelerator] = None
    for position, first, second in pairs:
        for host, other in ((first, second), (second, first)):
            if _on_host(host) and _maybe_on_accelerator(other):
                if host.scalar is False:
                    return HostBesideAccelerator(position, host, other, call)
                any_rank = any_rank or HostBesideAccelerator(position, host, other, call)
    return any_rank


def _on_host(value: Value) -> bool:
    return value.kind == Kind.TENSOR and value.device is not None and value.device.is_cpu


def _maybe_on_accelerator(value: Value) -> bool:
    return value.kind == Kind.TENSOR and value.device is not None and value.device.may_be_accelerator


def _join_items(first: Any, second: Any) -> Any:
    if isinstance(first, tuple) and isinstance(second, tuple) and len(first) == len(second):
        return tuple(join(a, b) for a, b in zip(first, second))
    if isinstance(first, Homogeneous) and isinstance(second, Homogeneous):
        return Homogeneous(
            join(first.element, second.element),
            first.some if first.some is not None else second.some,
            first.put_by if first.put_by is not None else second.put_by,
            _merged_apart(first.apart, second.apart),
            first.key if first.key == second.key else None,
        )
    for items, filled in ((first, second), (second, first)):
        if isinstance(items, tuple) and items and isinstance(filled, Homogeneous):
            # `final = [x]` on one path, `final.append(y)` done on the other (a loop that ran):
            # its elements are the display's and the appended ones
            element = filled.element
            for item in items:
                element = join(element, item)
            return Homogeneous(element, filled.some, filled.put_by, filled.apart)
    # a list still empty on one path and filled by `append` on the other (a loop that ran):
    # its elements are the appended ones
    if first == () and isinstance(second, Homogeneous):
        return second
    if second == () and isinstance(first, Homogeneous):
        return first
    return None


def conflicting_on_an_arm(first: Value, second: Value) -> Optional[tuple[Value, Value, Optional[cst.CSTNode]]]:
    """Two tensors an if/elif chain left on one device on every arm but one that moved
    something to the accelerator, where one of them stayed on the host (see PathPlacement):
    (the one on the host there, the other, the arm's ``if``/``elif``/``else`` node or None for
    the arm with no test true). None where no such arm is known.

    The other (a tensor, or a module called on the first) must be on the accelerator on that
    arm: moved there by the same arm, or placed without regard to the chain (a moved model, its
    output). The one on the host must be known to
    have a dimension (a 0-dim CPU tensor mixes with anything)."""
    for host, other in ((first, second), (second, first)):
        placement = host.device.only_on if host.device is not None else None
        if placement is None or host.scalar is not False or other.kind not in (Kind.TENSOR, Kind.BATCH, Kind.MODULE):
            continue
        if other.device is None or not other.device.may_be_accelerator:
            continue
        other_placement = other.device.only_on
        if other_placement is not None and other_placement.chain is not placement.chain:
            continue  # placed on some paths of another chain: how the two chains correlate is not known
        for arm in sorted(placement.moving - placement.placed):
            if other_placement is None or arm in other_placement.placed:
                return host, other, placement.arms[arm]
    return None


def conflicting(first: Value, second: Value, any_rank: bool = False, written: Optional[Value] = None) -> bool:
    """Are two tensors known to live on devices that PyTorch will refuse to mix?

    Both devices must be known; a 0-dim CPU tensor mixes with anything (PyTorch allows it), so
    a CPU operand must be known to have at least one dimension - unless ``any_rank``: the
    tensors one ``torch.cat``/``torch.stack`` joins must share a device whatever their rank, so
    there a CPU operand of unknown rank counts where the code put it on the host itself
    (``.cpu()``) or it is the program's data (a batch, numpy's).

    ``written`` is the operand an in-place operation writes (``total += x``, ``total.add_(x)``):
    PyTorch lets a 0-dim CPU tensor be an *input* beside GPU tensors, never the *output*, so
    a 0-dim host tensor written with a value on the accelerator takes no exception.
    """
    if first.device is None or second.device is None or not first.device.conflicts_with(second.device):
        return False
    for side in (first, second):
        if side is written:
            continue
        if side.device is not None and side.device.is_cpu and side.scalar is not False:
            if not (any_rank and side.scalar is None and _put_on_host(side)):
                return False
    return True


def _put_on_host(value: Value) -> bool:
    """The program's data, or a tensor the code itself moved to the host (``x.cpu()``)."""
    return value.origin is not None and (value.origin.from_data or value.origin.provenance is Provenance.MOVED_TO_HOST)
