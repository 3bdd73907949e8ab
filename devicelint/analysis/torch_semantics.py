"""What library code does to values: the semantics of torch (and of the few Python builtins the
interpreter follows) for the device-flow analysis.

Factories and the devices they allocate on, ``torch.device``, loaders and datasets, ``nn``
classes (criteria, containers, layers with parameters), tensor functions and methods, module
methods, and moves (``.to``/``.cuda``/``.cpu``): each answers which Value a call gives. Tables of
torch names live in devicelint.analysis.torch_api; this module is the logic over them.

``TorchSemantics`` is a mixin of devicelint.analysis.flow.FlowAnalyzer: its methods use the
interpreter's ``eval``/``lookup``/``element_of``/``_label``, its ``_escape`` and
``_call_own_method`` (devicelint.analysis.summaries), and its ``facts``, ``factory_calls`` and
``current_function``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, Optional

import libcst as cst

from devicelint.analysis import graphs, helpers, ranks, walk
from devicelint.analysis import torch_api as api
from devicelint.analysis.facts import ClassInfo, CriterionInfo, LoaderInfo, StreamContext
from devicelint.analysis.names import dotted_name, keyword_arg, looks_like_dtype_name, parameter_names, positional_args
from devicelint.analysis.state import DEFAULT_DEVICE_KEY, State
from devicelint.analysis.values import (
    CPU,
    item_field,
    item_key,
    PLACED_KINDS,
    RANK_ROLES,
    CollatedItems,
    CollatedMapping,
    Homogeneous,
    UNKNOWN,
    Device,
    Kind,
    Origin,
    Provenance,
    Role,
    TensorOrNone,
    Value,
    NONE_VALUE,
    appended,
    filled_mapping,
    join,
    device_from_string,
    follows,
    merged_host_origin,
    optimized_parameters,
)

#: Python builtins the interpreter follows: a name that no import or assignment binds
BUILTIN_REFS = frozenset(
    "enumerate zip range list tuple sorted reversed iter next len print isinstance map filter dict set getattr setattr".split()
)

#: dtype casts that tensors and modules both have (``x.float()``, ``model.half()``)
_DTYPE_CAST_METHODS = frozenset({"float", "half", "double", "bfloat16"})
_SAME_MODULE_METHODS = _DTYPE_CAST_METHODS | frozenset("train eval requires_grad_ share_memory zero_grad".split())
_MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})
#: methods that can turn a tensor with dimensions into a 0-dim one
_RANK_REDUCING_METHODS = api.FULL_REDUCTIONS | frozenset(
    "squeeze select argmax argmin dot item view reshape flatten unbind split chunk topk sort".split()
)
#: reductions that drop the one dimension their ``dim`` names (the rest stay)
_REDUCING_ALONG_DIM = frozenset("argmax argmin sum mean prod amax amin std var logsumexp all any nansum nanmean".split())
#: methods of nn.Module that optimizers, pipelines, datasets and tensors do not have
MODULE_ONLY_METHODS = frozenset(
    "eval train parameters named_parameters modules named_modules children named_children buffers".split()
)
#: methods of nn.Module (``get_submodule``) and of transformers models that return one of the
#: model's submodules
_SUBMODULE_GETTERS = frozenset(
    {"get_submodule", "get_input_embeddings", "get_output_embeddings", "get_encoder", "get_decoder", "get_base_model"}
)
#: methods of nn.Module the analysis models itself, even where a class of the file defines them
_BUILT_IN_MODULE_METHODS = _SAME_MODULE_METHODS | _MODULE_PARAMETER_METHODS | {"forward", "register_buffer", "__init__"}
#: class methods of transformers/diffusers models that build an object of the class they are called on
_LOADING_CONSTRUCTORS = frozenset({"from_pretrained", "from_config", "from_single_file"})
#: annotations that make a parameter a tensor
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: annotations that make a parameter a module
MODULE_ANNOTATIONS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: inside an nn.Module's method, inputs are tensors (numpy arrays there are rare): these
#: members, shared with numpy, say so too
MODULE_INPUT_MEMBERS = r"(shape\b|dtype\b|reshape\s*\(|view\s*\(|transpose\s*\(|flatten\s*\(|(size|dim|unsqueeze|permute|expand|contiguous|detach|numel|masked_fill_?|new_\w+|softmax|type_as)\s*\()"
#: members of torch tensors that numpy arrays, Python numbers and nn.Modules lack
TENSOR_ONLY_MEMBERS = (
    r"(size|dim|unsqueeze|permute|expand|expand_as|view_as|new_zeros|new_ones|new_empty|new_full|"
    r"new_tensor|contiguous|masked_fill_?|index_select|scatter_?|scatter_add_?|gather|detach|numel|"
    r"is_cuda|get_device|type_as|narrow|repeat_interleave|masked_select|bmm|softmax|log_softmax|"
    r"long|int|bool|add_|sub_|mul_|div_|copy_|clamp_|fill_|zero_|index_add_|index_copy_|index_fill_|"
    r"masked_scatter_|sigmoid_?)\s*\("
)
#: methods only torch tensors have (not numpy arrays, modules or numbers) that return a tensor
_TENSOR_ONLY_METHODS = frozenset(
    "unsqueeze permute contiguous detach masked_fill masked_fill_ index_select gather type_as narrow "
    "repeat_interleave masked_select softmax log_softmax new_zeros new_ones new_empty new_full new_tensor "
    "expand_as view_as".split()
)
#: tensor methods that Python's own objects have too (``str.split``, ``list.sort``)
_ALSO_BUILTIN_METHODS = frozenset({"split", "sort"})
#: tensor methods whose result has at least one dimension whatever the receiver's (given arguments)
_AT_LEAST_ONE_DIMENSION = frozenset({"unsqueeze", "view", "reshape", "repeat", "expand", "unfold", "tile"})
#: methods whose result has a dimension whatever their arguments: a 0-dim tensor flattens to a
#: 1-dim one
_ALWAYS_DIMENSIONED = frozenset({"flatten", "ravel"})
#: torch functions whose result has a dimension whatever their operands' (``F.one_hot`` adds one)
_ALWAYS_DIMENSIONED_FUNCTIONS = frozenset({"torch.flatten", "torch.ravel", "torch.nn.functional.one_hot"})
#: tensor methods (and their ``torch.`` function forms) that return a tuple of views of their
#: receiver: every part is where the receiver is; the splitting ones keep its dimensions (a part
#: of a 1-dim tensor is 1-dim, never a 0-dim scalar), ``unbind`` drops the one it splits along
_SPLITTING_METHODS = frozenset({"split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "unbind"})
#: tensor methods (and ``torch.`` forms) that return ``(values, indices)``, both where the
#: receiver is and with its dimensions (a sorted 1-dim tensor is 1-dim)
_VALUES_AND_INDICES_METHODS = frozenset({"sort", "topk", "cummax", "cummin"})
#: the target of a move that leaves the device as it is (``.to(torch.float16)``, ``.pin_memory()``)
_UNCHANGED = object()


class TorchSemantics:
    """Which Value a call of library code gives (mixed into FlowAnalyzer)."""

    # ------------------------------------------------------------------ factories and what they made

    def device_less_factory(self, value: Value) -> Optional[tuple[cst.Call, str, Optional[cst.FunctionDef]]]:
        """The torch factory call without ``device=`` that made this host tensor: the call, its
        qualified name and the function it ran in (None at module level). None for any other
        value, also for a factory that got its device from a default-device scope."""
        if value.kind != Kind.TENSOR or value.device is None or not value.device.is_cpu or value.origin is None:
            return None
        return self._device_less_factory_of(value.origin)

    def device_less_factories(self, value: Value, on_host_paths: bool = False) -> list[tuple[cst.Call, str, Optional[cst.FunctionDef]]]:
        """As device_less_factory, for every place the host tensor may come from where paths
        merged (``torch.zeros(a)`` on one branch, ``torch.zeros(b)`` on the other): the primary
        one first, if it is a factory. With ``on_host_paths``, for a tensor placed where an
        accelerator can be on some paths and made on the host on others (see
        Device.also_on_host): the device-less factory calls of those other paths."""
        if value.kind != Kind.TENSOR or value.device is None or value.origin is None:
            return []
        if not (value.device.also_on_host if on_host_paths else value.device.is_cpu):
            return []
        found = (self._device_less_factory_of(origin) for origin in (value.origin, *value.origin.alternatives))
        return [made for made in found if made is not None]

    def _device_less_factory_of(self, origin: Origin) -> Optional[tuple[cst.Call, str, Optional[cst.FunctionDef]]]:
        if not isinstance(origin.node, cst.Call):
            return None
        made = self.factory_calls.get(id(origin.node))
        if made is None or keyword_arg(origin.node, "device") is not None:
            return None
        if any(arg.star == "**" for arg in origin.node.args):
            return None  # `torch.zeros(n, **opts)` with `opts["device"]` the host: chosen, not left out
        return origin.node, made[0], made[1]

    def _default_device(self, state: State) -> Optional[Value]:
        """The default device factories use here (``torch.set_default_device``, ``with torch.device``)."""
        default = self.lookup(DEFAULT_DEVICE_KEY, state)
        return default if default.kind == Kind.DEVICE else None

    def factory_name(self, call: cst.CSTNode) -> Optional[str]:
        """The qualified name of the torch factory a call was evaluated as (``torch.tensor``);
        None for a call that is not a factory or that the analysis never evaluated."""
        made = self.factory_calls.get(id(call))
        return made[0] if made is not None else None

    def made_while_building_module(self, call: cst.CSTNode) -> bool:
        """Was a torch factory call evaluated while an ``nn.Module``'s ``__init__`` ran - in it,
        or in a helper it called (``self.table = sinusoid_table(n, d)``)? What it made there is
        the module's own tensor, kept as an attribute (DL103's), not one a function makes next
        to its inputs (a helper that a method calls too is judged there by DL202 no more)."""
        return id(call) in self.factories_building_modules

    def factory_home(self, call: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The function a torch factory call was evaluated in (None at module level or for a
        call that is not a factory)."""
        made = self.factory_calls.get(id(call))
        return made[1] if made is not None else None

    # ------------------------------------------------------------------ module calls and calls of qualified names

    def _call_module(self, callee: Value, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if callee.role is Role.INFERRED_MODULE:
            return Value(Kind.UNKNOWN, callee.device, callee.origin)  # not known to be a tensor
        device = callee.device
        origin = callee.origin
        if device is None:
            for _, value in args:
                if value.kind in (Kind.TENSOR, Kind.BATCH) and value.device is not None:
                    device, origin = value.device, value.origin
                    break
        return Value(Kind.TENSOR, device, origin, scalar=True if callee.kind == Kind.CRITERION else None, role=Role.MODEL_OUTPUT)

    def _apply_qualified(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        if qualname == "functools.partial":
            return self._partial(args)
        if qualname in api.FACTORIES:
            return self._factory(node, qualname, args, state)
        if qualname in api.CUDA_TYPED_CONSTRUCTORS:
            # always on the current CUDA device (DL306 reports the legacy spelling itself)
            positional = [pair for pair in args if pair[0].keyword is None and not pair[0].star]
            return Value(Kind.TENSOR, Device("accel", "cuda"), Origin(node, f"created on the GPU by `{spelled(node)}`", provenance=Provenance.CREATED), scalar=False if positional else None)
        if qualname in api.CPU_PRODUCERS:
            return Value(Kind.TENSOR, CPU, Origin(node, f"created from numpy by `{spelled(node)}`", from_data=True, provenance=Provenance.CREATED), scalar=None)
        if qualname in api.DEVICE_PROBES:
            self.facts.chooses_device_at_run_time = True
        if qualname == api.TORCH_DEVICE:
            if args and args[0][1].kind not in (Kind.STR, Kind.NUMBER):
                self.facts.chooses_device_at_run_time = True
            return self._torch_device(node, args)
        if qualname in api.GENERATOR_CONSTRUCTORS:
            return self._generator(node, args, state)
        if qualname == "torch.manual_seed":
            # it returns the default generator, which draws on the CPU
            return Value(Kind.GENERATOR, CPU, Origin(node, f"returned by `{spelled(node)}`"))
        if qualname in api.STREAM_CONSTRUCTORS:
            return Value(Kind.UNKNOWN, role=Role.NEW_STREAM)
        if qualname in api.STREAM_CONTEXTS and args:
            stream_node, stream = args[0][0].value, args[0][1]
            return Value(Kind.UNKNOWN, info=StreamContext(self._label(stream_node), stream.role is Role.NEW_STREAM))
        if qualname == "torch.set_default_device":
            if args:
                state[DEFAULT_DEVICE_KEY] = Value(Kind.DEVICE, self.device_of(args[0][0].value, args[0][1]))
            return UNKNOWN
        if qualname == "torch.set_default_tensor_type":
            # `torch.set_default_tensor_type(torch.cuda.FloatTensor)` (or its name as a string):
            # factories make their tensors with that type's backend, on the GPU, as under
            # `torch.set_default_device("cuda")`; a CPU type (`torch.FloatTensor`) sets the host back
            first = args[0][0].value if args and args[0][0].keyword is None and not args[0][0].star else None
            spelled_type = (
                first.evaluated_value if type(first) is cst.SimpleString
                else self.qualname_of(first, state) if first is not None else None
            )
            if isinstance(spelled_type, str) and spelled_type.startswith("torch.cuda.") and spelled_type.endswith("Tensor"):
                state[DEFAULT_DEVICE_KEY] = Value(Kind.DEVICE, Device("accel", "cuda"))
            elif isinstance(spelled_type, str) and spelled_type.startswith("torch.") and spelled_type.count(".") == 1 and spelled_type.endswith("Tensor"):
                state.pop(DEFAULT_DEVICE_KEY, None)
            return UNKNOWN
        if qualname.startswith("torch.") and qualname.endswith("_like") and args:
            first = args[0][1]
            device_arg = keyword_arg(node, "device")
            if device_arg is not None:
                return Value(Kind.TENSOR, self.device_of(device_arg.value, self.eval(device_arg.value, state)), Origin(node, "created", provenance=Provenance.CREATED))
            if (
                first.kind == Kind.TENSOR
                and first.device is not None
                and first.device.is_cpu
                and first.origin is not None
                and self.factory_name(first.origin.node) is not None
            ):
                # a new tensor on the device of a host tensor some factory made: this call is a
                # factory too, and the one that could be given `device=`
                self.factory_calls[id(node)] = (qualname, self.current_function.node)
                return Value(Kind.TENSOR, first.device, Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED), scalar=first.scalar)
            return Value(Kind.TENSOR, first.device, first.origin, scalar=first.scalar)
        if qualname == "torch.nn.Parameter" or qualname == "torch.nn.parameter.Parameter":
            data = args[0][1] if args else UNKNOWN
            return Value(Kind.TENSOR, data.device, data.origin, scalar=data.scalar, role=Role.PARAMETER)
        if qualname in api.PARALLEL_WRAPPERS or (qualname.startswith("torch.") and qualname.endswith("DataParallel")):
            wrapped = args[0][1] if args else UNKNOWN
            if isinstance(wrapped.info, ClassInfo) and _several_device_ids(node, args):
                self.facts.replicated_classes.setdefault(wrapped.info, node)
            return Value(Kind.MODULE, wrapped.device, wrapped.origin, role=Role.PARALLEL_WRAPPER)
        if qualname in api.DATALOADER_NAMES:
            return self._data_loader(node, args, state)
        if qualname in api.TENSOR_DATASET_NAMES:
            device: Optional[Device] = CPU
            for _, value in args:
                device = value.device if value.kind == Kind.TENSOR and device is not None and (device == value.device or device is CPU and value.device is CPU) else None
            # its items are tuples (one element per tensor), so default collation makes lists
            return Value(Kind.DATASET, device, Origin(node, "dataset", from_data=True, provenance=Provenance.DATASET), role=Role.SEQUENCE_BATCH)
        if qualname in api.LEROBOT_DATASET_NAMES:
            # dict items of CPU tensors, with the task's text under "task"
            mapping = CollatedMapping(api.LEROBOT_TEXT_KEYS)
            return Value(Kind.DATASET, CPU, Origin(node, "dataset", from_data=True, provenance=Provenance.DATASET), info=mapping, role=Role.MAPPING_BATCH)
        if graphs.is_graph_dataset(qualname):
            return graphs.graph_dataset(Origin(node, "dataset", from_data=True, provenance=Provenance.DATASET))
        if qualname in graphs.LOADER_NAMES:
            loader = self._data_loader(node, args, state)
            assert isinstance(loader.info, LoaderInfo)
            loader.info.batch_role = Role.GRAPH_DATA  # it collates graphs into a Batch
            return loader
        if qualname.startswith("torchvision.datasets."):
            # torchvision's datasets yield `(sample, target)` tuples
            tuples = qualname.rsplit(".", 1)[-1][:1].isupper()
            return Value(Kind.DATASET, CPU, Origin(node, "dataset", from_data=True, provenance=Provenance.DATASET), role=Role.SEQUENCE_BATCH if tuples else None)
        if qualname.startswith(api.OPTIMIZER_PREFIX) and qualname.rsplit(".", 1)[-1][:1].isupper() and "lr_scheduler" not in qualname:
            optimized = optimized_parameters(args[0][1]) if args else None
            return Value(Kind.OPTIMIZER, origin=Origin(node, "created", provenance=Provenance.CREATED), info=optimized or (args[0][1] if args else None))
        if not qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1][:1].isupper() and _builds_optimizer(node, args):
            # `BertAdam(groups, lr=...)`, `FusedAdam(model.parameters(), lr=...)`: an optimizer
            # of another package
            return Value(Kind.OPTIMIZER, origin=Origin(node, "created", provenance=Provenance.CREATED), info=optimized_parameters(args[0][1]))
        if qualname == "torch.compile" or qualname == "torch.jit.script" or qualname in api.VARIABLE_WRAPPERS:
            return args[0][1] if args else UNKNOWN
        if qualname in api.PASS_THROUGH_ITERABLES:
            return args[0][1] if args else UNKNOWN
        if qualname in api.SAME_DEVICE_COPIES and len(args) == 1 and args[0][1].kind in (Kind.MODULE, Kind.TENSOR):
            copied = args[0][1]
            # a copy of a module of a class the analysis read is a module of that class (its
            # forward is the same); other facts about the object are not the copy's
            info = copied.info if isinstance(copied.info, ClassInfo) else None
            return Value(copied.kind, copied.device, copied.origin, scalar=copied.scalar, role=copied.role, info=info)
        if qualname in api.BROADCASTING_CONVERTERS and args and not any(arg.star or arg.keyword is not None for arg, _ in args):
            return _broadcast_all(args)
        if qualname in BUILTIN_REFS:
            return self._builtin(qualname, args, node, state)
        if qualname.startswith(api.DISTRIBUTIONS_PACKAGE) and qualname.rsplit(".", 1)[-1][:1].isupper():
            return _distribution(node, args)
        if qualname in api.GRADIENT_NORM_CLIPPERS and args and args[0][0].keyword is None:
            # the total norm, a 0-dim tensor where the clipped parameters' gradients are
            clipped = args[0][1]
            owner = clipped.info if clipped.kind == Kind.PARAMETERS and isinstance(clipped.info, Value) else None
            if owner is not None and owner.kind in (Kind.MODULE, Kind.CRITERION) and owner.device is not None:
                return Value(Kind.TENSOR, owner.device, owner.origin, scalar=True)
            return UNKNOWN
        if qualname == "collections.OrderedDict":
            return self._mapping_of_pairs(node, args)
        if qualname in api.ATTRIBUTE_BAGS and all(arg.keyword is not None and not arg.star for arg, _ in args):
            # `SimpleNamespace(model=unet, device=device)`: its attributes are what it is given
            return Value(Kind.UNKNOWN, origin=Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED), fields=tuple((arg.keyword.value, value) for arg, value in args if arg.keyword is not None))
        if qualname == "io.BytesIO" and not args:
            # an empty buffer: whatever is loaded from it was saved by this very process
            return Value(Kind.UNKNOWN, role=Role.IN_PROCESS_BUFFER)
        if qualname in api.SEQUENCE_PADDERS and args and args[0][0].keyword is None:
            element = self.element_of(args[0][1])
            if element.is_tensor_like or element.kind == Kind.UNKNOWN:
                return Value(Kind.TENSOR, element.device, element.origin, scalar=False)
        if qualname in api.DEFAULT_COLLATES and args and args[0][0].keyword is None:
            # a list of tensor samples is stacked where they are (other samples: a structure)
            element = self.element_of(args[0][1])
            if element.kind == Kind.TENSOR:
                return Value(Kind.TENSOR, element.device, element.origin, scalar=False)
        if qualname.startswith("torch.nn.") and not qualname.startswith(("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.")):
            leaf = qualname.rsplit(".", 1)[-1]
            if leaf[:1].isupper():
                return self._nn_class(node, qualname, leaf, args, state)
        if qualname in api.IMAGE_TO_TENSOR_TRANSFORMS or qualname in api.TRANSFORM_COMPOSERS and _composes_image_to_tensor(args):
            return Value(Kind.UNKNOWN, origin=Origin(node, f"built by `{spelled(node)}`"), role=Role.IMAGE_TO_TENSOR)
        if qualname in api.IMAGE_TO_TENSOR_FUNCTIONS or qualname in api.IMAGE_FILE_READERS:
            return image_tensor(node)
        if qualname in api.AUDIO_FILE_READERS:
            waveform = Value(Kind.TENSOR, CPU, Origin(node, f"read from a file by `{spelled(node)}`", from_data=True, provenance=Provenance.CREATED), scalar=False)
            return Value(Kind.CONTAINER, info=(waveform, Value(Kind.NUMBER)))
        if qualname.startswith(api.TORCHVISION_FUNCTIONAL_PACKAGES) and args and args[0][0].keyword is None and not args[0][0].star:
            image = args[0][1]
            if image.kind == Kind.TENSOR and qualname.rsplit(".", 1)[-1] not in api.TORCHVISION_FUNCTIONAL_NOT_IMAGES:
                return Value(Kind.TENSOR, image.device, image.origin, scalar=False)
        if api.is_tokenizer_constructor(qualname):
            return Value(Kind.UNKNOWN, origin=Origin(node, f"loaded by `{spelled(node)}`"), role=Role.TOKENIZER)
        if api.is_allennlp_iterator_constructor(qualname):
            # a callable object: what matters is what calling it gives (a function's kind also
            # lets a helper it is handed see it)
            return Value(Kind.FUNCTION, origin=Origin(node, f"built by `{spelled(node)}`"), role=Role.BATCH_ITERATOR)
        if qualname in api.ALLENNLP_ARCHIVE_LOADERS:
            return self._allennlp_archive(node, args, state)
        torchtext = api.torchtext_iterator(qualname) if qualname.startswith("torchtext.") else None
        if torchtext is not None:
            return self._torchtext_iterator(node, args, torchtext[1])
        if qualname in api.SENTENCE_TRANSFORMER_CLASSES:
            return self._sentence_transformer(node, args)
        if qualname in api.SENTENCE_TRANSFORMER_SIMILARITIES:
            tensors = [value for arg, value in args[:2] if value.kind == Kind.TENSOR and not arg.star]
            if len(tensors) == 2 and tensors[0].device is not None and tensors[0].device == tensors[1].device:
                return Value(Kind.TENSOR, tensors[0].device, tensors[0].origin, scalar=False)
            return UNKNOWN
        if is_model_factory(qualname):
            return Value(Kind.MODULE, CPU, Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED))
        if qualname.endswith(".from_pretrained"):
            if qualname.startswith("diffusers.") and "Pipeline" in qualname:
                return UNKNOWN  # a diffusers pipeline is not an nn.Module: its call returns images
            return Value(Kind.MODULE, None, Origin(node, "loaded"))
        if qualname in api.NUMPY_ARRAY_CONSTRUCTORS:
            dtype = keyword_arg(node, "dtype")
            if dtype is not None and isinstance(dtype.value, cst.Name) and dtype.value.value == "object":
                return UNKNOWN  # an array of object references stores tensors as they are
            return Value(Kind.NDARRAY, origin=Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED))
        if qualname in api.NON_TENSOR_FUNCTIONS:
            self._escape(args, state)
            return UNKNOWN
        if qualname in api.READ_ONLY_CALLS:
            return UNKNOWN
        if qualname.startswith(("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.sparse.")) or (
            qualname.startswith("torch.") and qualname.count(".") == 1
        ):
            return self._tensor_function(node, qualname, self._first_operand_is_tensor(qualname, args, state))
        self._escape(args, state)
        return UNKNOWN

    def _tensor_operands(self, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> tuple[tuple[cst.Arg, Value], ...]:
        """``torch.cat([x, h])``: every operand of a mixing function is a tensor, so a parameter
        of unknown kind used there is one - on the model's device in a module's method, where
        the caller put it in a free function. The state learns it from here on."""
        changed = False
        result = []
        for arg, value in args:
            if arg.keyword is None and isinstance(arg.value, (cst.List, cst.Tuple)) and value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
                items = []
                for element, item in zip(arg.value.elements, value.info):
                    narrowed = self._as_tensor_parameter(element.value, item, state)
                    changed = changed or narrowed is not item
                    items.append(narrowed)
                value = Value(Kind.CONTAINER, value.device, value.origin, info=tuple(items))
            elif arg.keyword is None:
                narrowed = self._as_tensor_parameter(arg.value, value, state)
                changed = changed or narrowed is not value
                value = narrowed
            result.append((arg, value))
        return tuple(result) if changed else args

    def _as_tensor_parameter(self, node: cst.BaseExpression, value: Value, state: State) -> Value:
        if value.kind != Kind.UNKNOWN or not value.is_bare or value.device is not None:
            return value
        cast = _cast_receiver(node)
        if cast is not None:
            # `F.cross_entropy(logits.float(), target)`: a module has `.float()` too, but is no
            # operand of a torch function - the parameter cast there is a tensor, and so is the
            # cast, on its device
            receiver = self._as_tensor_parameter(cast, self.lookup(cast.value, state), state)
            return Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=receiver.scalar) if receiver.kind == Kind.TENSOR else value
        if not isinstance(node, cst.Name):
            return value
        narrowed = self.tensor_parameter_value(node.value)
        if narrowed is None:
            return value
        state[node.value] = narrowed
        return narrowed

    def _first_operand_is_tensor(self, qualname: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> tuple[tuple[cst.Arg, Value], ...]:
        """``F.one_hot(labels)``, ``torch.exp(x)``: a torch function computing from a tensor
        takes it first, so a parameter of unknown kind given there is a tensor (see
        ``_tensor_operands`` for the functions that mix all their operands)."""
        if qualname in api.MIXING_FUNCTIONS or not args or args[0][0].keyword is not None or args[0][0].star:
            return args
        arg, value = args[0]
        if value.kind == Kind.UNKNOWN and value.device is not None and value.info is None:
            # `torch.max(outputs, 1)` on what a moved model of unknown class returned: it was a
            # tensor, on that model's device
            narrowed = Value(Kind.TENSOR, value.device, value.origin)
            key = dotted_name(arg.value) if isinstance(arg.value, (cst.Name, cst.Attribute)) else None
            if key is not None:
                state[key] = narrowed
        else:
            narrowed = self._as_tensor_parameter(arg.value, value, state)
        return args if narrowed is value else ((arg, narrowed), *args[1:])

    def _factory(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        device_arg = keyword_arg(node, "device")
        origin = Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED)
        self.factory_calls[id(node)] = (qualname, self.current_function.node)
        if any(context.class_info is not None and context.class_info.is_module and context.name == "__init__" for context in self.function_stack):
            self.factories_building_modules.add(id(node))
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        if qualname in ("torch.tensor", "torch.as_tensor") and positional and positional[0][1].kind == Kind.TENSOR and device_arg is None:
            source = positional[0][1]
            return Value(Kind.TENSOR, source.device, source.origin, scalar=source.scalar)
        if device_arg is not None:
            device = self.device_of(device_arg.value, self.eval(device_arg.value, state))
            origin = Origin(node, f"created on {device.describe() if device else 'a device'} by `{spelled(node)}`", provenance=Provenance.CREATED)
        elif any(arg.star == "**" for arg, _ in args):
            # `torch.zeros(n, **factory_kwargs)`: the device may be among them (timm's `**dd`);
            # where the mapping is known to hold one (`opts = {"device": dev, ...}`), it is that
            device = None
            for arg, value in args:
                given = value.field_value(item_field("device")) if arg.star == "**" and value.fields else None
                if given is not None:
                    read = cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(cst.SimpleString('"device"')))])
                    device = self.device_of(read, given)
                    if device is not None:
                        origin = Origin(node, f"created on {device.describe()} by `{spelled(node)}`", provenance=Provenance.CREATED)
        else:
            default = self._default_device(state)
            device = CPU if default is None else default.device
            if device is CPU and self._reads_data(qualname, positional, state):
                origin = Origin(node, f"created from data by `{spelled(node)}`", from_data=True, provenance=Provenance.CREATED)
        return Value(Kind.TENSOR, device, origin, scalar=_factory_scalar(qualname, positional, node))

    def _reads_data(self, qualname: str, positional: list[tuple[cst.Arg, Value]], state: State) -> bool:
        """``torch.tensor(image)`` / ``torch.as_tensor(array)`` of a numpy array or of what the
        function was handed (a parameter that is no tensor): the program's data, turned into a
        host tensor as ``torch.from_numpy`` does - not a constant the code writes out."""
        if qualname not in ("torch.tensor", "torch.as_tensor") or not positional:
            return False
        node, value = positional[0][0].value, positional[0][1]
        if value.kind == Kind.NDARRAY:
            return True
        function = self.current_function.node
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)) and value.kind == Kind.CONTAINER:
            # `torch.tensor([[vocab[w] for w in row] for row in rows])`: rows of what the
            # function was handed, looked up or converted one by one (not in a module's
            # methods, whose inputs are tensors: their entries read one by one are DL202's)
            class_info = self.current_function.class_info
            if class_info is not None and class_info.is_module:
                return False
            node = node.for_in.iter
            value = self.lookup(node.value, state) if isinstance(node, cst.Name) else UNKNOWN
            if value.device is not None or value.is_tensor_like:
                return False  # the entries of a tensor read on the host: DL202's
        if (
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and function is not None
            and value.kind in (Kind.UNKNOWN, Kind.CONTAINER) and value.device is None
        ):
            # `torch.tensor(tokenizer.encode(text))`: what the function was handed (`text`),
            # converted by a call (not in a module's methods, whose inputs are tensors)
            class_info = self.current_function.class_info
            if class_info is not None and class_info.is_module:
                return False
            handed = [arg.value for arg in node.args if not arg.star and isinstance(arg.value, cst.Name)]
            names = parameter_names(function)
            return any(
                name.value in names and self.lookup(name.value, state).kind in (Kind.UNKNOWN, Kind.STR, Kind.CONTAINER)
                and not self.lookup(name.value, state).is_tensor_like and self.lookup(name.value, state).device is None
                for name in handed
            )
        if not isinstance(node, cst.Name) or function is None or value.kind not in (Kind.UNKNOWN, Kind.CONTAINER):
            return False
        if node.value in self.data_elements and value.device is None and not value.is_tensor_like:
            # `[torch.tensor(tokens) for tokens in batch]`: each element of what the function
            # was handed (not in a module's methods, whose inputs are tensors)
            class_info = self.current_function.class_info
            return class_info is None or not class_info.is_module
        return node.value in parameter_names(function)

    def _torch_device(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if not args:
            return Value(Kind.DEVICE)
        first_node, first = args[0][0].value, args[0][1]
        device = self.device_of(first_node, first)
        if device is not None and device.is_accel and len(args) > 1 and isinstance(args[1][1].literal, int):
            device = Device("accel", device.label, args[1][1].literal)
        # `torch.device(f"cuda:{local_rank}")`, `torch.device("cuda", rank)`, `torch.device(rank)`:
        # the GPU of the process's rank (see devicelint.analysis.ranks)
        rank = next((value.role for _, value in args[:2] if value.role in RANK_ROLES), None)
        if rank is not None and device is None and first.kind == Kind.STR:
            device = Device("accel", self._label(first_node))  # "cuda:<rank>": an accelerator by its text
        return Value(Kind.DEVICE, device, Origin(node, "chosen", provenance=Provenance.CHOSEN), role=rank)

    def _generator(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """``torch.Generator()`` draws on the CPU; ``torch.Generator("cuda")`` / ``device=d`` on that device."""
        device_arg = keyword_arg(node, "device")
        if device_arg is None:
            positional = [arg for arg, _ in args if arg.keyword is None and not arg.star]
            device_arg = positional[0] if positional else None
        if device_arg is None:
            device: Optional[Device] = None if any(arg.star for arg, _ in args) else CPU
        else:
            device = self.device_of(device_arg.value, self.eval(device_arg.value, state))
        return Value(Kind.GENERATOR, device, Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED))

    def _data_loader(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        dataset = UNKNOWN
        for arg, value in args:
            if arg.keyword is None and not arg.star or arg.keyword is not None and arg.keyword.value == "dataset":
                dataset = value
                break
        device: Optional[Device] = CPU
        if dataset.kind == Kind.DATASET:
            device = dataset.device
        elif dataset.kind == Kind.TENSOR or dataset.kind == Kind.UNKNOWN and not dataset.is_bare:
            device = None
        if keyword_arg(node, "collate_fn") is not None or any(arg.star for arg, _ in args):
            device = None
        pin = keyword_arg(node, "pin_memory")
        pinned = pin is not None and not (isinstance(pin.value, cst.Name) and pin.value.value == "False")
        batch_role = None
        batch_items = None
        if dataset.kind == Kind.DATASET and keyword_arg(node, "collate_fn") is None and not any(arg.star for arg, _ in args):
            batch_role = dataset.role  # default collation keeps the item's shape: tuples -> lists, dicts -> dicts
            if batch_role is Role.SEQUENCE_BATCH and isinstance(dataset.info, ClassInfo) and dataset.info.item_positions is not None:
                # ... also inside: `((a, b), label)` items collate into `[[A, B], labels]`
                batch_items = CollatedItems(dataset.info.item_positions)
            elif batch_role is Role.MAPPING_BATCH and isinstance(dataset.info, ClassInfo) and dataset.info.item_text_keys:
                # `inputs["date"] = folder.split("/")[0]`: that entry of each batch is a list of strings
                batch_items = CollatedMapping(dataset.info.item_text_keys)
            elif batch_role is Role.MAPPING_BATCH and isinstance(dataset.info, CollatedMapping):
                batch_items = dataset.info  # a library's dataset whose items are known to hold text
        collated = self._collated_by_own_function(node, args, state)
        return Value(Kind.LOADER, device, Origin(node, "loader", provenance=Provenance.LOADER), info=LoaderInfo(node, pinned, batch_role, batch_items, collated))

    def _collated_by_own_function(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Optional[Value]:
        """What each batch is where ``collate_fn=`` names a function of the file: the loader
        calls it on the list of drawn items, so a batch is what it returns (``return images,
        bboxes`` with ``bboxes`` a list of tensors gives a tuple whose second entry is a list).
        Only a tuple, list or dict it returns on every path is taken: its shape is the fact
        the batch's users need; and so is a tensor (``return torch.tensor(padded)``), which
        is a batch drawn from the loader where it is used, not a factory's tensor handed back
        to its caller (building batches on the host is what a collate function is for)."""
        collate = keyword_arg(node, "collate_fn")
        if collate is None:
            return None
        function = next((value for arg, value in args if arg is collate), None)
        items = cst.Arg(value=cst.Name("items"))
        if function is not None and function.kind == Kind.FUNCTION and isinstance(function.info, cst.FunctionDef):
            returned = self._summarise(function.info, None, None, False, ((items, UNKNOWN),), state)
        else:
            # `collate_fn=self._batch_collate_fn`: a method of the object, bound to it
            caller = self.function_stack[-1].node
            own = self._own_callee(caller, collate.value) if caller is not None else None
            if own is None or not own[1] or not isinstance(collate.value, cst.Attribute):
                return None
            method = own[0]
            owner = next((info for info in self.file_classes() if method in info.methods.values()), None)
            receiver = self.lookup(dotted_name(collate.value.value) or "", state)
            returned = self._summarise(method, owner, receiver, True, ((items, UNKNOWN),), state)
        if returned.kind == Kind.TENSOR:
            drawn = Origin(node, f"a batch made by `{dotted_name(collate.value) or 'collate_fn'}()`", from_data=True)
            if returned.device is not None and not returned.device.is_cpu:
                drawn = returned.origin  # moved by the collate function itself: where it moved it
            return Value(Kind.TENSOR, returned.device, drawn if returned.device is not None else None, scalar=returned.scalar)
        return returned if returned.kind == Kind.CONTAINER else None

    def criterion(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """A torch.nn loss built by ``node`` (``nn.CrossEntropyLoss(weight=w)``, or a builder of
        one called - see CriterionBuilder): it keeps the tensor given as ``weight=`` or
        ``pos_weight=`` where that tensor is."""
        origin = Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED)
        weight = UNKNOWN
        weight_arg = None
        for name in ("weight", "pos_weight"):
            weight_arg = keyword_arg(node, name)
            if weight_arg is not None:
                weight = next((value for arg, value in args if arg is weight_arg), UNKNOWN)
                break
        if weight.kind == Kind.UNKNOWN and isinstance(weight.info, TensorOrNone):
            # `weight=w` with `w` None on some paths: without a weight the loss holds no tensor,
            # with one it holds that tensor
            weight = weight.info.tensor
        info = None
        device = None
        if weight.kind == Kind.TENSOR:
            device = weight.device
            info = CriterionInfo(node, weight)
            self.facts.criteria.append(info)
        elif weight.kind == Kind.UNKNOWN and weight.is_bare and weight_arg is not None and not _is_none(weight_arg.value):
            # `CrossEntropyLoss(weight=w)` with `w` out of sight: the loss class takes a
            # tensor or None there, and the code passes one - a class-weight buffer the
            # criterion keeps (DL105: not moved from a plain list); its device is unknown
            info = CriterionInfo(node, weight)
            self.facts.criteria.append(info)
        return Value(Kind.CRITERION, device, weight.origin if device is not None else origin, info=info)

    def _nn_class(self, node: cst.Call, qualname: str, leaf: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        origin = Origin(node, f"created by `{spelled(node)}`", provenance=Provenance.CREATED)
        device_arg = keyword_arg(node, "device")
        explicit = self.device_of(device_arg.value, self.eval(device_arg.value, state)) if device_arg is not None else None
        if is_loss_class(qualname):
            return self.criterion(node, args)
        if qualname in api.MODULE_CONTAINERS:
            device = None
            members: list[Value] = []
            for _, value in args:
                candidates = [value] if value.kind == Kind.MODULE else list(value.info) if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) else []
                if value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous):
                    members.append(value.info.element)  # `nn.ModuleList([Block(d) for _ in range(n)])`
                members.extend(candidates)
                for candidate in candidates:
                    if candidate.kind == Kind.MODULE and candidate.device is not None:
                        device = candidate.device if device is None or device == candidate.device else None
            built = [self.facts.module_constructions.get(member.origin.node) for member in members if member.origin is not None]  # type: ignore[arg-type]
            if any(built):
                self.facts.container_members[node] = [construction for construction in built if construction is not None]
            return Value(Kind.MODULE, device, origin, info=_members_of_one_class(qualname, members))
        if qualname in api.PARAMETERISED_LAYERS:
            if device_arg is not None:
                return Value(Kind.MODULE, explicit, origin)
            default = self._default_device(state)
            return Value(Kind.MODULE, CPU if default is None else default.device, origin)
        return Value(Kind.MODULE, explicit, origin)

    def _tensor_function(self, node: cst.Call, qualname: str, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        if qualname.startswith("torch.") and qualname[6:] in _VALUES_AND_INDICES_METHODS and args and args[0][0].keyword is None and not args[0][0].star and args[0][1].kind == Kind.TENSOR:
            return _values_and_indices(args[0][1])  # `torch.sort(t)` is `t.sort()`
        if qualname.startswith("torch.") and qualname[6:] in _SPLITTING_METHODS and args and args[0][0].keyword is None and not args[0][0].star and args[0][1].kind == Kind.TENSOR:
            return _parts_of(args[0][1], qualname[6:])  # `torch.split(t, 1)` is `t.split(1)`
        tensors = [value for _, value in args if value.kind in (Kind.TENSOR, Kind.BATCH)]
        # `torch.cat(means)` of the outputs a moved model returned (`mean, std = model(batch)`,
        # then `means.append(mean)`): what it joins can only be tensors, on their device
        joined = _placed_as_tensor if qualname in api.CONCATENATING else _is_tensor
        for _, value in args:
            if value.kind == Kind.CONTAINER and isinstance(value.info, tuple):
                tensors.extend(_as_tensor(item) for item in value.info if joined(item))
            elif value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous) and joined(value.info.element):
                tensors.append(_as_tensor(value.info.element))  # torch.cat(outputs) of a list built by append
        if not tensors:
            return Value(Kind.TENSOR) if qualname.startswith("torch.nn.functional.") else UNKNOWN
        result = tensors[0]
        for other in tensors[1:]:
            result = propagate(result, other)
        result = _host_data_result(node, qualname, result, tensors)
        if qualname == "torch.meshgrid" and all(
            not arg.star and (arg.keyword is None and (value.kind == Kind.TENSOR or value.kind == Kind.CONTAINER and isinstance(value.info, tuple)) or arg.keyword is not None and arg.keyword.value == "indexing")
            for arg, value in args
        ):
            # one grid per input, each with as many dimensions as there are inputs (at least one)
            grids = tuple(
                Value(Kind.TENSOR, result.device, tensor.origin if tensor.device == result.device else result.origin, scalar=False)
                for tensor in tensors
            )
            return Value(Kind.CONTAINER, info=grids)
        leaf = qualname.rsplit(".", 1)[-1]
        positional = positional_args(node)
        scalar: Optional[bool] = None
        if qualname in api.FUNCTIONAL_LOSSES:
            reduction = keyword_arg(node, "reduction")
            scalar = True if reduction is None else None
        elif leaf in api.FULL_REDUCTIONS and len(positional) == 1 and len(node.args) == 1:
            scalar = True
        elif qualname in _ALWAYS_DIMENSIONED_FUNCTIONS:
            scalar = False
        elif result.scalar is False and qualname in api.MIXING_FUNCTIONS or qualname in api.CONCATENATING:
            # joining tensors gives one with a dimension (torch.stack of 0-dim tensors is 1-dim,
            # torch.cat refuses 0-dim ones)
            scalar = False
        elif (
            qualname.count(".") == 1 and leaf in api.SAME_DEVICE_METHODS and leaf not in _RANK_REDUCING_METHODS
            and positional and args[0][0] is positional[0] and args[0][1].kind == Kind.TENSOR and args[0][1].scalar is False
        ):
            # `torch.floor(mask)` is `mask.floor()`: a function form of a tensor method keeps
            # its first operand's dimensions, as the method does
            scalar = False
        return Value(Kind.TENSOR, result.device, result.origin, scalar=scalar)

    def tokenized(self, node: cst.Call, method: str, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """What a transformers tokenizer's ``method`` returns (``__call__`` for calling it):
        with ``return_tensors="pt"``, host tensors - one tensor of ids from ``encode``, a
        BatchEncoding from the others; without it, lists, which nothing here tracks."""
        if method not in api.TOKENIZER_TENSOR_METHODS:
            return UNKNOWN
        asked = [value for arg, value in args if arg.keyword is not None and arg.keyword.value == "return_tensors"]
        if not asked or asked[0].literal != "pt":
            return UNKNOWN
        origin = Origin(node, f"tokenized into host tensors by `{spelled(node)}`", from_data=True, tokenized=True)
        if method == "encode":
            return Value(Kind.TENSOR, CPU, origin, scalar=False)
        return Value(Kind.BATCH, CPU, origin, scalar=False, role=Role.TOKENIZED_BATCH)

    def tensors_asked_of(self, node: cst.Call, method: Optional[str], args: tuple[tuple[cst.Arg, Value], ...], result: Value) -> Value:
        """A call given ``return_tensors="pt"`` - transformers' tokenizers, processors and feature
        extractors, and the project classes written to its convention - turns the text, images or
        audio it is handed into PyTorch tensors on the host: data, as a tokenizer's are (see
        ``tokenized``), whoever is called. Where the analysis knows no more of the result (an
        object of unknown class called, a class of the file whose method builds host tensors),
        that is what it is; a result known to be elsewhere (moved by the callee) is kept."""
        if result.origin is not None and result.origin.tokenized:
            return result
        if result.kind not in (Kind.UNKNOWN, Kind.CONTAINER, Kind.TENSOR, Kind.BATCH) or result.device is not None and not result.device.is_cpu:
            return result
        asked = next((value for arg, value in args if arg.keyword is not None and arg.keyword.value == "return_tensors"), None)
        if isinstance(result.info, ClassInfo):
            if result.kind == Kind.BATCH and result.info.is_mapping and asked is not None and asked.literal == "pt" and result.device is not None:
                # a dict of host tensors of a class of the file (an encoding written to the
                # convention): the text handed in, made into tensors, is the program's data
                origin = Origin(node, f"made into host tensors by `{spelled(node)}`", from_data=True, tokenized=True)
                return Value(Kind.BATCH, CPU, origin, scalar=False, info=result.info)
            if result.kind == Kind.UNKNOWN and result.fields is not None and asked is not None and asked.literal == "pt":
                # an object of a class of the file (an encoding written to the convention) that
                # holds the host tensors its construction was handed: the text handed in, made
                # into tensors there, is the program's data
                origin = Origin(node, f"made into host tensors by `{spelled(node)}`", from_data=True, tokenized=True)
                return replace(result, fields=tuple(
                    (name, Value(Kind.TENSOR, CPU, origin, scalar=False) if held.kind == Kind.TENSOR and held.device is not None and held.device.is_cpu else held)
                    for name, held in result.fields
                ))
            return result  # an object of a class of the file: its fields are what its methods made
        if asked is None or asked.literal != "pt":
            return result
        origin = Origin(node, f"made into host tensors by `{spelled(node)}`", from_data=True, tokenized=True)
        if method == "encode":
            return Value(Kind.TENSOR, CPU, origin, scalar=False)
        return Value(Kind.BATCH, CPU, origin, scalar=False, role=Role.TOKENIZED_BATCH)

    def iterated_batches(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """What calling an AllenNLP batch iterator returns (``iterator(instances, num_epochs=1)``):
        a loader of dict batches built on the host, unless the call hands it a ``cuda_device``
        (keyword, or the fourth positional argument of AllenNLP 0.x) or spreads arguments."""
        positional = [arg for arg, _ in args if arg.keyword is None and not arg.star]
        placed = any(arg.star or arg.keyword is not None and arg.keyword.value == "cuda_device" for arg, _ in args) or len(positional) > 3
        return Value(Kind.LOADER, None if placed else CPU, Origin(node, "loader", provenance=Provenance.LOADER), info=LoaderInfo(node, False, Role.MAPPING_BATCH))

    def _torchtext_iterator(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], splits: bool) -> Value:
        """``data.BucketIterator(dataset, batch_size=...)``: a loader of batches made on the CPU
        where no device is given (or None, or an int, which torchtext drops; see
        torch_api.TORCHTEXT_ITERATORS), else where the device says (left unknown);
        ``BucketIterator.splits((train, valid), ...)``: one such loader per dataset."""
        if any(arg.star for arg, _ in args):
            device: Optional[Device] = None
        else:
            position, keyword = api.TORCHTEXT_ITERATOR_DEVICE
            positional = [value for arg, value in args if arg.keyword is None]
            given = next((value for arg, value in args if arg.keyword is not None and arg.keyword.value == keyword), None)
            if given is None and not splits and len(positional) > position:
                given = positional[position]
            dropped = given is None or given.kind == Kind.NUMBER and (given.literal is None or isinstance(given.literal, int))
            device = CPU if dropped else None
        loader = Value(Kind.LOADER, device, Origin(node, "loader", provenance=Provenance.LOADER), info=LoaderInfo(node, False, Role.FIELD_BATCH))
        if not splits:
            return loader
        datasets = args[0][1] if args and args[0][0].keyword is None else UNKNOWN
        if datasets.kind == Kind.CONTAINER and isinstance(datasets.info, tuple):
            return Value(Kind.CONTAINER, info=tuple(loader for _ in datasets.info))
        return Value(Kind.CONTAINER, info=Homogeneous(loader))

    def _sentence_transformer(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
        """``SentenceTransformer(name)``: a model that places itself on the accelerator where one
        is available (see torch_api.SENTENCE_TRANSFORMER_CLASSES); given a device, there (or
        unknown where it cannot be told); unknown where the arguments are spread."""
        position, keyword = api.SENTENCE_TRANSFORMER_DEVICE
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        given = [(arg, value) for arg, value in args if arg.keyword is not None and arg.keyword.value == keyword]
        if len(positional) > position:
            given.append(positional[position])
        if any(arg.star for arg, _ in args):
            return UNKNOWN
        if given:
            arg, value = given[0]
            device = None if value.kind == Kind.NUMBER and value.literal is None else self.device_of(arg.value, value)
            if device is None and not (value.kind == Kind.NUMBER and value.literal is None):
                return Value(Kind.MODULE, None, Origin(node, f"loaded by `{spelled(node)}`", provenance=Provenance.CREATED), role=Role.SENTENCE_ENCODER)
            if device is not None:
                return Value(Kind.MODULE, device, Origin(node, f"loaded by `{spelled(node)}` onto that device", provenance=Provenance.MOVED), role=Role.SENTENCE_ENCODER)
        origin = Origin(node, f"placed on the GPU where one is available by `{spelled(node)}`", provenance=Provenance.CHOSEN)
        return Value(Kind.MODULE, Device("accel", "cuda"), origin, role=Role.SENTENCE_ENCODER)

    def _allennlp_archive(self, node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """``load_archive(path, cuda_device)``: an archive whose ``.model`` is loaded onto that
        device - the CPU where it is left out or a negative number, else wherever the
        configuration chose (``args.cuda_device``)."""
        position, keyword = api.ALLENNLP_ARCHIVE_DEVICE
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        chosen = next(((arg, value) for arg, value in args if arg.keyword is not None and arg.keyword.value == keyword), None)
        if chosen is None and len(positional) > position:
            chosen = positional[position]
        if chosen is None and any(arg.star for arg, _ in args):
            return UNKNOWN
        if chosen is None or _negative_number(chosen[0].value, chosen[1]):
            device: Optional[Device] = CPU
            how = "loaded onto the CPU"
        else:
            device = self.device_of(chosen[0].value, chosen[1])
            how = f"loaded onto `{self._label(chosen[0].value)}`"
        model = Value(Kind.MODULE, device, Origin(node, f"{how} by `{spelled(node)}`"))
        return Value(Kind.UNKNOWN, origin=Origin(node, f"loaded by `{spelled(node)}`"), fields=(("model", model),))

    # ------------------------------------------------------------------ methods of tensors, modules and containers

    def _type_string_of(self, node: cst.BaseExpression, state: State) -> Optional[Value]:
        """The tensor ``x`` of a legacy type query ``x.type()`` (no argument) that ``node`` is,
        where ``x`` is a name or attribute the analysis knows as a tensor; else None."""
        if not (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "type"):
            return None
        key = dotted_name(node.func.value)
        known = self._lookup_dotted(key, state) if key is not None else None
        return known if known is not None and known.kind == Kind.TENSOR else None

    def _note_set_up_call(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...]) -> None:
        """``detector.load_anchors(arr)`` on a module of a class of the file that a construction
        built and nothing has moved yet, by code outside that class: a step of its build (see
        ModuleConstruction.set_up_by)."""
        if receiver.kind not in (Kind.MODULE, Kind.CRITERION) or receiver.origin is None or not isinstance(receiver.info, ClassInfo):
            return
        built = self.facts.module_constructions.get(receiver.origin.node)  # type: ignore[arg-type]
        if built is None or built.moved_by is not None or self.current_function.class_info is receiver.info:
            return
        found = receiver.info.find_method(method)
        if found is None or any(call is node for call, _, _ in built.set_up_by):  # a loop body runs more than once
            return
        site = helpers.bind_arguments(found[0], args, True)
        built.set_up_by.append((node, found[0], site[1] if site is not None else None))

    def _runs_own_move_method(self, receiver: Value, method: str) -> bool:
        """Is ``obj.to(...)`` a call of a method the linted file defines on a plain class (not
        a module, whose moves the analysis models itself, and not a diffusers pipeline, whose
        library ``to()`` returns the pipeline - see _apply_method - nor a class of another
        module of the project, whose ``to()`` may be a library's own)?"""
        info = receiver.info
        if not isinstance(info, ClassInfo) or info.is_module or info.diffusers_pipeline or receiver.kind == Kind.CLASS:
            return False
        found = info.find_method(method)
        return found is not None and self.foreign_home(found[0]) is None

    def _apply_method(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        kind = receiver.kind
        if method in api.MOVE_METHODS and self._runs_own_move_method(receiver, method) and not kept_batch(receiver):
            # a plain class of the file with a `to()` of its own (a pipeline that moves its
            # models and keeps the device, a dataclass of tensors rebuilt from moved fields):
            # that method is what runs
            own = self._call_own_method(node, receiver, method, args, state)
            if own is not None:
                return own
        if method in api.MOVE_METHODS:
            return self._move(node, receiver, method, args, state)
        if kind == Kind.NDARRAY and method in _ARRAY_KEEPING_METHODS:
            # `mask.astype(int)`, `order.reshape(2, -1)`: numpy arrays again, in host memory
            return Value(Kind.NDARRAY, origin=receiver.origin)
        if kind == Kind.NDARRAY and method == "nonzero":
            # `mask.nonzero()[0]`: a tuple of index arrays, one per dimension
            return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.NDARRAY, origin=receiver.origin)))
        if receiver.role is Role.TOKENIZER:
            return self.tokenized(node, method, args)
        if receiver.role is Role.DISTRIBUTION:
            if method in api.DISTRIBUTION_TENSOR_METHODS and receiver.device is not None:
                return Value(Kind.TENSOR, receiver.device, Origin(node, f"drawn from {receiver.origin.how}" if receiver.origin else "drawn"))
            return UNKNOWN
        # `train`, `to`, `forward` ... are nn.Module's own only on modules: a trainer class's
        # `train(dataset)` is a method of the file like any other
        if isinstance(receiver.info, ClassInfo) and (method not in _BUILT_IN_MODULE_METHODS or not receiver.info.is_module):
            self._note_set_up_call(node, receiver, method, args)
            own = self._call_own_method(node, receiver, method, args, state)
            if own is not None:
                return own
        if kind == Kind.CLASS and method in _LOADING_CONSTRUCTORS and isinstance(receiver.info, ClassInfo) and receiver.info.is_module:
            # `Head.from_pretrained(...)` on a module class of the project (the loader is the
            # framework's): an object of that very class, so its `forward` is known; where the
            # weights land depends on the loader's arguments, as for any `from_pretrained`
            return Value(Kind.MODULE, None, Origin(node, "loaded"), info=receiver.info)
        if kind == Kind.CLASS and method in _LOADING_CONSTRUCTORS and isinstance(receiver.info, ClassInfo) and receiver.info.diffusers_pipeline:
            # `MyPipeline.from_pretrained(...)`: diffusers builds an object of that very class,
            # so calling it runs its `__call__`
            return Value(Kind.UNKNOWN, None, Origin(node, "loaded"), info=receiver.info)
        if kind == Kind.TENSOR or kind == Kind.BATCH:
            if method in api.HOST_RESULT_METHODS:
                return Value(Kind.NDARRAY) if method == "numpy" else UNKNOWN
            if kind == Kind.BATCH and method in ("items", "values", "keys", "get", "pop"):
                element = Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=receiver.scalar)
                if isinstance(receiver.info, CollatedMapping) and method in ("items", "values"):
                    # every entry in turn, the lists of strings too: not known to be a tensor
                    element = Value(Kind.UNKNOWN, receiver.device, receiver.origin, info=receiver.info, role=Role.DICT_BATCH_ENTRY_WITH_TEXT)
                if method == "items":
                    return Value(Kind.CONTAINER, info=Homogeneous(Value(Kind.CONTAINER, info=(Value(Kind.STR), element))))
                if method == "values":
                    return Value(Kind.CONTAINER, info=Homogeneous(element))
                return element if method in ("get", "pop") else UNKNOWN
            if kind == Kind.TENSOR and method == "type" and len(args) == 1 and args[0][0].keyword is None:
                # `.type(torch.LongTensor)` converts and moves to the host; `.type(torch.cuda.
                # FloatTensor)` to the current GPU (a dtype or another tensor's type: below)
                given = args[0][1]
                if given.kind == Kind.REF and isinstance(given.qualname, str) and given.qualname.startswith("torch.") and given.qualname[6:] in api.DTYPE_NAMES:
                    return Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=receiver.scalar)  # a dtype only
                typed = _legacy_type_device(given)
                if typed is not None:
                    return Value(
                        Kind.TENSOR, typed, Origin(node, f"converted by `.type({self._label(args[0][0].value)})`"),
                        scalar=receiver.scalar, role=Role.LEGACY_TYPE_CAST,
                    )
                followed = self._type_string_of(args[0][0].value, state)
                if followed is not None:
                    # `t.type(x.type())`: x's dtype and device *type*, so a tensor already where
                    # `x` is stays there, and one elsewhere lands on x's kind of device (DL313
                    # speaks of the index it may miss); as `type_as(x)` otherwise
                    device = receiver.device if receiver.device == followed.device else followed.device
                    origin = receiver.origin if device is receiver.device else followed.origin
                    return Value(Kind.TENSOR, device, origin, scalar=receiver.scalar)
            if kind == Kind.TENSOR and method == "type_as" and args:
                other = args[0][1]  # converts to the other tensor's dtype and device
                return Value(Kind.TENSOR, other.device, other.origin, scalar=receiver.scalar) if other.kind == Kind.TENSOR else UNKNOWN
            if kind == Kind.TENSOR and method in _SPLITTING_METHODS:
                return _parts_of(receiver, method)
            if kind == Kind.TENSOR and method in _VALUES_AND_INDICES_METHODS:
                return _values_and_indices(receiver)
            if kind == Kind.TENSOR and method in api.SAME_DEVICE_METHODS:
                scalar: Optional[bool] = None
                if method in api.FULL_REDUCTIONS and not node.args:
                    scalar = True
                elif method.startswith("new_") or method in _AT_LEAST_ONE_DIMENSION and node.args or method in _ALWAYS_DIMENSIONED:
                    scalar = False
                elif receiver.scalar is False and method not in _RANK_REDUCING_METHODS:
                    scalar = False
                elif method in _REDUCING_ALONG_DIM and _reduced_past_first_dimension(node):
                    scalar = False  # `t.argmax(dim=1)`: `t` had two dimensions at least, one is left
                return Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=scalar)
            return UNKNOWN
        if kind == Kind.GENERATOR:
            # `torch.Generator("cpu").manual_seed(0)` returns the generator itself
            return receiver if method == "manual_seed" else UNKNOWN
        if kind in (Kind.MODULE, Kind.CRITERION):
            if method in _SAME_MODULE_METHODS:
                return receiver
            if method in _MODULE_PARAMETER_METHODS:
                # the origin names the module the parameters were taken from (`model.parameters()`)
                return Value(Kind.PARAMETERS, origin=Origin(node, "parameters of"), info=receiver)
            if method == "state_dict" and not args:
                # parameter and buffer names -> the tensors themselves, where the module is
                # (references, not copies: a moved model's state_dict holds its GPU tensors)
                origin = Origin(node, "state_dict of")
                weight = Value(Kind.TENSOR, receiver.device, receiver.origin if receiver.device is not None else None)
                return Value(Kind.CONTAINER, origin=origin, info=Homogeneous(weight, key=Value(Kind.STR)))
            if method == "forward":
                return self._call_module(receiver, args)
            if method in _SUBMODULE_GETTERS and not isinstance(receiver.info, ClassInfo) and receiver.role is not Role.INFERRED_MODULE:
                # `model.get_input_embeddings()`, `model.get_submodule("encoder")`: a part of it, where it is
                return Value(Kind.MODULE, receiver.device, receiver.origin)
            if method == "generate" and not isinstance(receiver.info, ClassInfo) and receiver.device is not None and receiver.role is not Role.INFERRED_MODULE:
                # a transformers model's `generate`: the token ids (or the output object whose
                # `.sequences` they are) where the model is
                return Value(Kind.TENSOR, receiver.device, receiver.origin, scalar=False, role=Role.MODEL_OUTPUT)
            if method == "encode" and receiver.role is Role.SENTENCE_ENCODER and not any(arg.star for arg, _ in args):
                # `embedder.encode(texts, convert_to_tensor=True)`: the embeddings where the
                # model is, or on the device handed to `encode` (which moves the model there)
                flag = next((value for arg, value in args if arg.keyword is not None and arg.keyword.value == "convert_to_tensor"), None)
                if flag is None or flag.literal is not True:
                    return UNKNOWN
                asked = next(((arg, value) for arg, value in args if arg.keyword is not None and arg.keyword.value == "device"), None)
                device = receiver.device if asked is None else self.device_of(asked[0].value, asked[1])
                if device is None:
                    return UNKNOWN
                return Value(Kind.TENSOR, device, Origin(node, f"encoded by `{spelled(node)}` where the model is", provenance=Provenance.OTHER), scalar=False)
            if method == "register_buffer" and len(args) >= 2 and isinstance(args[0][0].value, cst.SimpleString):
                name = args[0][1].literal
                owner_key = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
                taken = state.get(f"{owner_key}.{name}") if owner_key is not None and isinstance(name, str) else None
                if taken is not None and taken.kind != Kind.UNKNOWN and taken.role is not Role.BUFFER:
                    # `self.mask = m` then `self.register_buffer("mask", m)`: the module already
                    # has that attribute, so PyTorch refuses (KeyError: attribute 'mask' already
                    # exists; old versions left it a plain attribute): nothing is registered
                    return UNKNOWN
                if isinstance(name, str) and isinstance(receiver.info, ClassInfo):
                    receiver.info.buffers.add(name)
                if isinstance(name, str) and isinstance(node.func, cst.Attribute):
                    owner = dotted_name(node.func.value)
                    if owner is not None:
                        state[f"{owner}.{name}"] = Value(Kind.TENSOR, None, args[1][1].origin, role=Role.BUFFER)
            return UNKNOWN
        if kind == Kind.CONTAINER and method in ("append", "extend") and len(args) == 1 and isinstance(node.func, cst.Attribute):
            element = args[0][1] if method == "append" else self.element_of(args[0][1])
            key = dotted_name(node.func.value)
            # the append is remembered where a finding can point at it: in the linted file
            call = node if self.foreign_home(self.current_function.node) is None else None
            if key is not None:
                state[key] = appended(receiver, element, call)
                owner, _, attribute = key.rpartition(".")
                if owner and "." not in owner:
                    # `self.preds.append(out)` in a method: what it leaves in the list, for the
                    # class's other methods (see Summaries._stored_by_methods)
                    self._note_attribute_write(owner, attribute, state[key])
            elif isinstance(node.func.value, cst.Subscript):
                # `history[phase].append(x)`: one of the lists a dict (or list) of lists holds;
                # its lists are one abstract element, which now may hold `x` too
                outer_key = dotted_name(node.func.value.value)
                outer = state.get(outer_key) if outer_key is not None else None
                if outer is not None and outer.kind == Kind.CONTAINER and isinstance(outer.info, Homogeneous) and outer.info.element.kind == Kind.CONTAINER:
                    state[outer_key] = Value(Kind.CONTAINER, outer.device, outer.origin, info=Homogeneous(appended(outer.info.element, element, call)))
            return UNKNOWN
        if kind == Kind.CONTAINER and method in ("update", "setdefault") and isinstance(node.func, cst.Attribute):
            return self._dict_filled(node, receiver, method, args, state)
        if kind == Kind.CONTAINER and isinstance(receiver.info, Homogeneous):
            if method == "values":
                values = Homogeneous(receiver.info.element, receiver.info.some, receiver.info.put_by)
                return receiver if receiver.info.key is None else Value(Kind.CONTAINER, receiver.device, receiver.origin, info=values)
            if method == "items":
                key = receiver.info.key if receiver.info.key is not None else Value(Kind.STR)
                some = receiver.info.some
                return Value(
                    Kind.CONTAINER,
                    info=Homogeneous(
                        Value(Kind.CONTAINER, info=(key, receiver.info.element)),
                        Value(Kind.CONTAINER, info=(key, some)) if some is not None else None,
                        receiver.info.put_by,
                    ),
                )
            if method == "keys" and receiver.info.key is not None:
                return Value(Kind.CONTAINER, info=Homogeneous(receiver.info.key))
            if method in ("get", "pop"):
                return receiver.info.element
        if kind == Kind.UNKNOWN and receiver.is_bare and method in _TENSOR_ONLY_METHODS:
            # `tfms(img).unsqueeze(0)`: only a torch tensor has this method, and it returns one
            return Value(Kind.TENSOR, receiver.device, receiver.origin)
        if kind == Kind.UNKNOWN and receiver.is_bare and receiver.device is not None and method in api.SAME_DEVICE_METHODS and method not in _ALSO_BUILTIN_METHODS:
            # `output.squeeze(1)` on part of what a model returned: only torch objects are
            # placed on a device, and this tensor method leaves the result there
            return Value(Kind.UNKNOWN, receiver.device, receiver.origin)
        if kind in (Kind.UNKNOWN, Kind.DEVICE, Kind.STR, Kind.NUMBER, Kind.NDARRAY):
            self._escape(args, state)
        return UNKNOWN

    def _dict_filled(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        """``d.update({"x": x})``, ``d.update(x=x)``, ``d.setdefault("x", x)`` on a dict display:
        its values may now be the values handed, and an entry at a constant key reads back as the
        value stored there, as ``d["x"] = x`` does (see filled_mapping). What ``setdefault``
        returns: the entry it finds, else the default. A dict whose values are not followed (or
        an argument this does not read) is forgotten."""
        key = dotted_name(node.func.value)  # type: ignore[attr-defined]
        stored: list[tuple[Optional[str], Value, cst.CSTNode]] = []
        if method == "setdefault":
            if len(args) != 2 or any(arg.star or arg.keyword is not None for arg, _ in args):
                return UNKNOWN
            item = args[0][1].literal if isinstance(args[0][1].literal, str) else None
            default = args[1][1]
            found = receiver.field_value(item_field(item)) if item is not None else None
            if found is not None:
                if key is not None and state.get(key) is not None:
                    state[key] = receiver  # the entry is there: the dict is left as it was
                return found
            if receiver.info == ():
                result = default
            elif isinstance(receiver.info, Homogeneous) and receiver.info.key is not None and item is not None:
                result = join(receiver.info.element, default)
            else:
                result = UNKNOWN
            stored.append((item, default, args[1][0].value))
        else:
            for arg, value in args:
                if arg.keyword is not None and not arg.star:
                    stored.append((arg.keyword.value, value, arg.value))
                elif (
                    arg.keyword is None and arg.star != "*" and value.kind == Kind.CONTAINER
                    and isinstance(value.info, Homogeneous) and value.info.key is not None
                ):
                    # another dict: its values, and the entries it knows at constant keys
                    stored.append((None, value.info.element, arg.value))
                    if value.info.some is not None:
                        stored.append((None, value.info.some, value.info.put_by if value.info.put_by is not None else arg.value))
                    stored.extend((item_key(name), entry, arg.value) for name, entry in value.fields or () if item_key(name) is not None)
                elif arg.keyword is None and arg.star != "*" and value.kind == Kind.CONTAINER and value.info == ():
                    continue  # `d.update({})`
                else:
                    stored = []
                    if key is not None and state.get(key) is not None:
                        state[key] = Value(Kind.CONTAINER)
                    return UNKNOWN
            result = NONE_VALUE
        if key is None or state.get(key) is None:
            return result
        mapping = receiver
        for item, value, where in stored:
            filled = filled_mapping(mapping, value, where)
            if filled is None:
                state[key] = Value(Kind.CONTAINER)
                return result
            mapping = replace(filled, fields=mapping.fields)
            mapping = mapping.with_item(item, value) if item is not None else mapping.without_items()
        state[key] = mapping
        return result

    # ------------------------------------------------------------------ moves and devices

    def _move(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> Value:
        target = self._move_target(node, receiver, method, args, state)
        kind = receiver.kind
        if target is _UNCHANGED:
            return receiver if kind in (Kind.TENSOR, Kind.BATCH, Kind.MODULE, Kind.CRITERION) else UNKNOWN
        device: Optional[Device] = target  # type: ignore[assignment]
        if device is not None and device.may_be_accelerator:
            self.facts.accelerator_moves.append(node)
        if device is not None and device.is_cpu:
            origin = Origin(node, "moved to the CPU", provenance=Provenance.MOVED_TO_HOST)
        else:
            origin = Origin(node, f"moved to {device.describe()}" if device is not None else "moved", provenance=Provenance.MOVED)
        if kind in (Kind.MODULE, Kind.CRITERION):
            if isinstance(receiver.info, CriterionInfo):
                receiver.info.moved = True
            if receiver.origin is not None and device is not None and device.may_be_accelerator:
                built = self.facts.module_constructions.get(receiver.origin.node)  # type: ignore[arg-type]
                # `AppendFeatures(t).to(device)`: its plain attributes stay behind; so do those of
                # the members a container was built from (`nn.Sequential(Normalize(m, s), net)`)
                for moved_object in ([built] if built is not None else []) + self.facts.container_members.get(receiver.origin.node, []):  # type: ignore[arg-type]
                    if moved_object.moved_by is None:
                        moved_object.moved_by = node
            moved = Value(kind, device, origin, info=receiver.info, role=receiver.role)
            key = dotted_name(_module_itself(node.func.value)) if isinstance(node.func, cst.Attribute) else None
            if key is not None:
                state[key] = moved
                owner, _, attribute = key.partition(".")
                if attribute and "." not in attribute and self.emitting:
                    # `self.encoder.to(self.device)` in `prepare()`: where the object's other
                    # methods find it (see Summaries._attributes_seen_by_methods)
                    self._note_attribute_write(owner, attribute, moved)
            return moved
        if kind == Kind.TENSOR:
            scalar = receiver.scalar
            if device is not None and device.may_be_accelerator:
                device = self._named_in_a_replica(node, method, args, device, state)
            return Value(Kind.TENSOR, device, origin, scalar=scalar, info=None)
        if kind == Kind.BATCH:
            # a graph moves whole (`data.to(device)`); a list or dict batch does not move at all
            # a BatchEncoding's `.to()` returns the moved batch, which still has its entries as attributes
            kept = receiver.role if graphs.is_graph(receiver) or receiver.role is Role.TOKENIZED_BATCH else None
            moved = Value(Kind.BATCH, device, origin, scalar=receiver.scalar, role=kept)
            key = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if moves_in_place(receiver) and key is not None:
                state[key] = moved  # `inputs.to(device)` alone moves a BatchEncoding's entries
            return moved
        if kind == Kind.CONTAINER or kind == Kind.LOADER or kind == Kind.DATASET:
            return UNKNOWN
        if isinstance(receiver.info, ClassInfo) and receiver.info.diffusers_pipeline and method == "to":
            # a diffusers pipeline's `to` moves its models and returns the pipeline itself
            return Value(Kind.UNKNOWN, device, origin, info=receiver.info)
        return Value(Kind.UNKNOWN, device, origin)

    def _named_in_a_replica(
        self, node: cst.Call, method: str, args: tuple[tuple[cst.Arg, Value], ...], device: Device, state: State
    ) -> Device:
        """``device``, marked one GPU for every replica where a method of a module that
        ``nn.DataParallel`` replicates moves a tensor to a device it names itself: an ordinal or
        a device string, a module-level name, or a setting stored on ``self`` in ``__init__``
        (``.cuda(self.device_id[0])``). ``.cuda()`` and ``.to("cuda")`` name the current device,
        which DataParallel sets to each replica's own; a device taken from a tensor
        (``x.device``, ``x.get_device()``) or a local is where that tensor is."""
        class_info = self.current_function.class_info
        if class_info is None or not self.facts.replicated_classes:
            return device
        wrapping = self.replicating_call(class_info)
        if wrapping is None:
            return device
        named = _device_expression(node, method, args)
        if named is None or not self._one_device_for_all_replicas(*named, class_info, state):
            return device
        return replace(device, one_for_all_replicas=wrapping)

    def _one_device_for_all_replicas(self, node: cst.BaseExpression, value: Value, class_info: ClassInfo, state: State) -> bool:
        """The device expression ``node`` names one GPU, whichever replica runs it: an ordinal
        or ``"cuda:1"`` (literal or bound to a name), or an element of a list of devices kept
        at module level or stored by ``__init__`` (``self.device_id[0]``, ``GPU_IDS[0]``).
        Unknown settings (``self.device``) may be ``"cuda"``, the current device, which
        DataParallel sets to each replica's own."""
        if value.kind == Kind.NUMBER and isinstance(value.literal, int) and not isinstance(value.literal, bool):
            return True
        if value.kind == Kind.STR and isinstance(value.literal, str):
            device = device_from_string(value.literal)
            return device is not None and device.index is not None
        if value.kind == Kind.DEVICE:
            return value.device is not None and value.device.is_accel and value.device.index is not None
        if not isinstance(node, cst.Subscript):
            return False
        root: cst.BaseExpression = node
        while isinstance(root, (cst.Subscript, cst.Attribute)) and not (
            isinstance(root, cst.Attribute) and isinstance(root.value, cst.Name) and root.value.value == "self"
        ):
            root = root.value
        if isinstance(root, cst.Attribute):
            # a setting `__init__` stored: not a tensor or module of the replica, nor one
            # another method rewrites
            stored = class_info.attributes.get(root.attr.value)
            if stored is None or stored.kind in PLACED_KINDS:
                return False
            return root.attr.value not in self._written_elsewhere(class_info)
        if isinstance(root, cst.Name):
            return root.value not in state and root.value in self.module_state
        return False

    def replicating_call(self, class_info: ClassInfo) -> Optional[cst.Call]:
        """The ``nn.DataParallel(...)`` call that replicates the objects of ``class_info`` over
        several GPUs: one wrapping them, or a module of the file that holds one as a submodule
        (an attribute its ``__init__`` sets); None if the analysis has met none."""
        pending = list(self.facts.replicated_classes.items())
        seen: set[int] = set()
        while pending:
            holder, call = pending.pop()
            if holder is class_info:
                return call
            if id(holder) in seen:
                continue
            seen.add(id(holder))
            for value in holder.attributes.values():
                if value.kind == Kind.MODULE and isinstance(value.info, ClassInfo):
                    pending.append((value.info, call))
        return None

    def _move_target(self, node: cst.Call, receiver: Value, method: str, args: tuple[tuple[cst.Arg, Value], ...], state: State) -> object:
        if method == "cpu":
            return CPU
        if method == "pin_memory":
            return _UNCHANGED
        if method in ("cuda", "xpu", "mps"):
            if not args:
                return Device("accel", f"{method}")
            arg, value = args[0]
            if isinstance(value.literal, int):
                return Device("accel", f"{method}:{value.literal}", value.literal)
            device = self.device_of(arg.value, value)
            if device is not None:
                return device
            return Device("accel", self._label(arg.value))
        # .to(...)
        device_arg = keyword_arg(node, "device")
        if device_arg is not None:
            value = next(value for arg, value in args if arg is device_arg)
            return self.device_of(device_arg.value, value)
        positional = [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]
        if not positional:
            if any(arg.star for arg, _ in args):
                return None
            return _UNCHANGED  # .to(dtype=...), .to(memory_format=...)
        arg, value = positional[0]
        if value.kind == Kind.TENSOR:
            return value.device
        if value.kind == Kind.REF and value.qualname and value.qualname.rsplit(".", 1)[-1] in api.DTYPE_NAMES:
            return _UNCHANGED
        if value.kind == Kind.UNKNOWN and looks_like_dtype_name(arg.value):
            return _UNCHANGED
        return self.device_of(arg.value, value)

    def device_of(self, node: cst.BaseExpression, value: Value) -> Optional[Device]:
        """The device an expression denotes, labelled as the source spells it; None if unknown."""
        if value.kind == Kind.DEVICE:
            device = value.device
            if device is not None and device.is_accel and isinstance(node, (cst.Name, cst.Attribute)):
                return Device("accel", self._label(node), device.index)
            return device
        if value.kind == Kind.STR and isinstance(value.literal, str):
            return device_from_string(value.literal, self._label(node))
        if value.kind == Kind.STR and ranks.formatted_accelerator(node):
            # `f"cuda:{args.gpu}"`: a GPU whose ordinal the program computes
            return Device("accel", self._label(node))
        if value.kind == Kind.NUMBER and isinstance(value.literal, int) and not isinstance(value.literal, bool):
            return Device("accel", f"cuda:{value.literal}", value.literal)
        if value.kind == Kind.NUMBER and value.role in (Role.NONE_LITERAL, Role.NONE_DEFAULT):
            return None  # `device=None` left at its default: `.to(device=None)` moves nothing
        if value.kind == Kind.NUMBER and value.literal is None and not _is_none(node):
            return Device("accel", self._label(node))  # an int device is an accelerator ordinal
        if value.kind == Kind.TENSOR:
            return value.device
        if value.kind == Kind.UNKNOWN and value.is_bare and not _is_none(node):
            # the code uses it as a device (`x.to(device)`, `device=args.device`): whatever the
            # caller or configuration chose, which can be the accelerator; in a function outside
            # a model, a parameter's device (`device=image.device`) is the caller's choice
            return follows(self._label(node), argument=self._names_a_plain_argument(node))
        return None

    def _names_a_plain_argument(self, node: cst.BaseExpression) -> bool:
        """``image.device`` / ``image`` where ``image`` is a parameter of the function being
        analysed and that function is not a method of a module."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root is node and not isinstance(node, cst.Name):
            return False
        if not isinstance(node, cst.Attribute) or node.attr.value != "device":
            return False
        context = self.current_function
        function = context.node
        if function is None or context.class_info is not None and context.class_info.is_module:
            return False
        return root.value in parameter_names(function)

    def _device_of_value(self, node: cst.BaseExpression, value: Value) -> Optional[Device]:
        if value.kind in (Kind.STR, Kind.DEVICE):
            return self.device_of(node, value)
        return None


def moves_in_place(batch: Value) -> bool:
    """Does ``batch.to(device)`` move the batch itself, not only return a moved copy? A
    transformers BatchEncoding's ``to`` replaces its entries with moved ones and returns itself;
    so does a batch object of the file (see kept_batch) whose own ``to()`` returns ``self``."""
    if batch.kind == Kind.BATCH and batch.role is Role.TOKENIZED_BATCH:
        return True
    if not kept_batch(batch):
        return False
    assert isinstance(batch.info, ClassInfo)
    found = batch.info.find_method("to")
    return found is not None and _returns_itself(found[0])


def kept_batch(value: Value) -> bool:
    """A batch object of a plain class of the file (not a dict subclass) with a ``to()`` of its
    own, built from host data it keeps (see Summaries._kept_batch): it moves as a batch does."""
    return value.kind == Kind.BATCH and isinstance(value.info, ClassInfo) and not value.info.is_mapping and not value.info.is_module


def _returns_itself(function: cst.FunctionDef) -> bool:
    """Does every ``return`` of a method give back its own object (``return self``)?"""
    positional = [*function.params.posonly_params, *function.params.params]
    if not positional:
        return False
    owner = positional[0].name.value
    returns = list(_walk_returns(function.body))
    return bool(returns) and all(isinstance(node.value, cst.Name) and node.value.value == owner for node in returns)


def _walk_returns(node: cst.CSTNode) -> Iterator[cst.Return]:
    for child in walk.children(node):  # libcst's own `.children` rebuilds the node
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(child, cst.Return):
            yield child
        else:
            yield from _walk_returns(child)


def is_model_factory(qualname: str) -> bool:
    """``timm.create_model(...)``, ``torchvision.models.resnet18(...)``: a model with weights."""
    if qualname in api.MODEL_FACTORIES:
        return True
    if qualname.startswith(api.TORCHVISION_MODELS):
        leaf = qualname[len(api.TORCHVISION_MODELS):]
        return "." not in leaf and leaf[:1].islower() and not leaf.startswith(("get_", "list_", "_"))
    return False


def _host_data_result(node: cst.Call, qualname: str, result: Value, tensors: list[Value]) -> Value:
    """A torch function's host result built from input data and host constants (``torch.cat([prefix,
    ids])`` with ``prefix = torch.tensor([[21603, 10]])``) is input data, whichever operand comes
    first: the batch was never moved, not a factory's tensor that meets the model. Built by
    concatenation from a tokenizer's tensors, it is one more host tensor whose move belongs
    where it is made (``torch.cat(...).to(device)``), like the tokenizer call's own."""
    if result.device is None or not result.device.is_cpu or (result.origin is not None and result.origin.from_data):
        return result
    data = [tensor for tensor in tensors if tensor.device is not None and tensor.device.is_cpu and tensor.origin is not None and tensor.origin.from_data]
    if not data or any(tensor.device is None or not tensor.device.is_cpu for tensor in tensors):
        return result
    if qualname in api.CONCATENATING and any(tensor.origin is not None and tensor.origin.tokenized for tensor in data):
        origin = Origin(node, f"joined on the host from tokenized text by `{spelled(node)}`", from_data=True, tokenized=True)
    else:
        origin = data[0].origin
    return replace(result, origin=origin)


def propagate(left: Value, right: Value) -> Value:
    """The device of a result computed from two tensors (assuming the operation ran)."""
    if left.device is not None and right.device is not None and not left.device.conflicts_with(right.device):
        origin = left.origin
        if left.device.is_cpu and right.device.is_cpu and right.scalar is not True:
            # `torch.arange(n) * torch.ones(n)`: a result made from two host tensors with a
            # dimension came from both places, each needing the same fix
            origin = merged_host_origin(origin, right.origin)
        return Value(Kind.TENSOR, left.device, origin, scalar=_broadcast_scalar(left, right))
    for placed, host in ((left, right), (right, left)):
        if (
            placed.device is not None and placed.device.may_be_accelerator and host.device is not None and host.device.is_cpu
            and host.scalar is False and placed.scalar is not True and host.origin is not None
        ):
            # the program's data left on the host (a tokenized mask, a batch) meets a tensor that
            # may be on the accelerator: the operation fails there (DL201, DL203 say so), and
            # where it runs the data was moved with the rest - the result is the accelerator's.
            # A constant made on the host (with a dimension) is reported where it meets the
            # accelerator tensor (DL202), and where the program runs it was made there: the
            # result is the accelerator's too, so a second host constant it meets later (another
            # fix: `fps = torch.cat((LongTensor([0]), fps))` after `torch.cat((idx, LongTensor([n])))`)
            # is reported as well, and the first constant is not reported again downstream
            return Value(Kind.TENSOR, placed.device, placed.origin, scalar=False)
    if left.scalar is False and left.device is not None:
        return Value(Kind.TENSOR, left.device, left.origin, scalar=False)
    if right.scalar is False and right.device is not None:
        return Value(Kind.TENSOR, right.device, right.origin, scalar=False)
    # one side can be the accelerator and the other is unknown: had the other been a tensor
    # elsewhere (other than a CPU scalar) the operation would have failed, so the result is there
    for known, other in ((left, right), (right, left)):
        if known.device is not None and known.device.may_be_accelerator and other.device is None:
            return Value(Kind.TENSOR, known.device, known.origin, scalar=False if left.scalar is False or right.scalar is False else None)
    return Value(Kind.TENSOR, scalar=False if left.scalar is False or right.scalar is False else None)


def _broadcast_scalar(left: Value, right: Value) -> Optional[bool]:
    """Whether an elementwise result of two tensors is 0-dim: it is when both are (a running
    total of 0-dim losses), it is not when either has a dimension."""
    if left.scalar is False or right.scalar is False:
        return False
    return True if left.scalar is True and right.scalar is True else None


def _broadcast_all(args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
    """``broadcast_all(concentration, 1.0)``: per argument a tensor - a tensor argument stays
    where it is (broadcasting only views it), a number is made a tensor on the device of the
    first tensor argument (unknown where an argument of unknown kind, maybe a tensor, comes
    first), or on the default device when there is none."""
    first: Optional[Value] = None
    for _, value in args:
        if value.kind in (Kind.TENSOR, Kind.UNKNOWN):
            first = value if value.kind == Kind.TENSOR else Value(Kind.TENSOR)
            break
    items = []
    for _, value in args:
        if value.kind == Kind.TENSOR:
            items.append(Value(Kind.TENSOR, value.device, value.origin))
        elif value.kind == Kind.NUMBER and first is not None:
            items.append(Value(Kind.TENSOR, first.device, first.origin))
        else:
            items.append(Value(Kind.TENSOR))
    return Value(Kind.CONTAINER, info=tuple(items))


def _factory_scalar(qualname: str, positional: list[tuple[cst.Arg, Value]], node: cst.Call) -> Optional[bool]:
    if qualname in ("torch.tensor", "torch.as_tensor"):
        if not positional:
            return None
        value = positional[0][1]
        if value.kind == Kind.NUMBER:
            return True
        if value.kind == Kind.CONTAINER or _is_shape(positional[0][0].value):
            return False
        return None
    if qualname in api.LEGACY_TYPED_CONSTRUCTORS and any(arg.star == "*" for arg in node.args):
        # `torch.Tensor(*shape)`: sizes, one dimension each; none at all gives an empty tensor
        # of one dimension (`torch.Tensor()` has shape [0]), so never a 0-dim one
        return False
    if qualname in api.DATA_FACTORIES:
        return False if positional else None
    for arg, value in positional:
        if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and not value.info:
            return True
    if positional or keyword_arg(node, "size") is not None:
        return False
    return None


def _is_shape(node: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.shape[2:]`` or ``x.size()``: a shape, a sequence of ints, so
    ``torch.tensor(x.shape)`` has one dimension (``x.shape[0]`` is an int, ``x.size(0)`` too)."""
    if isinstance(node, cst.Subscript):
        if not all(isinstance(element.slice, cst.Slice) for element in node.slice):
            return False
        node = node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    return (
        isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size"
    )


def _builds_optimizer(node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> bool:
    """Is a class of another package built here an optimizer: its first argument is a model's
    parameters, given as parameter groups (a dict with ``"params"`` is the optimizers' own
    format) or directly next to a learning rate (``lr=``)? An object that takes parameters
    without a learning rate (an exponential moving average with ``decay=``) is not taken for one."""
    if not args or args[0][0].keyword is not None or args[0][0].star:
        return False
    first = args[0][1]
    if optimized_parameters(first) is None:
        return False
    return first.kind == Kind.CONTAINER or keyword_arg(node, "lr") is not None


def is_loss_class(qualname: Optional[str]) -> bool:
    """A loss class of torch.nn (``torch.nn.CrossEntropyLoss``, ``torch.nn.modules.loss.NLLLoss``)."""
    if qualname is None or not qualname.startswith("torch.nn.") or qualname.startswith(("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.")):
        return False
    leaf = qualname.rsplit(".", 1)[-1]
    return leaf[:1].isupper() and leaf.endswith("Loss")


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _distribution(node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Value:
    """``Categorical(logits=x)``, ``Normal(mu, 1.0)``, ``Independent(Normal(mu, s), 1)``: a
    distribution where its parameter tensors (or its base distribution) are - the first one
    that may be on an accelerator, else the first placed one; of unknown place otherwise."""
    found: Optional[Value] = None
    for _, value in args:
        # (a parameter of unknown kind that a move or a model put on a device is a tensor: only
        # torch objects are placed, and a distribution's parameters are tensors or numbers)
        if value.device is None or not (value.kind == Kind.TENSOR or value.role is Role.DISTRIBUTION or value.kind == Kind.UNKNOWN and value.is_bare):
            continue
        if value.device.may_be_accelerator:
            found = value
            break
        if found is None:
            found = value
    if found is None:
        return Value(Kind.UNKNOWN, role=Role.DISTRIBUTION)
    return Value(Kind.UNKNOWN, found.device, Origin(node, f"the distribution `{spelled(node)}`"), role=Role.DISTRIBUTION)


def spelled(node: cst.Call) -> str:
    """How the source names the callee (``torch.zeros``), for messages."""
    return dotted_name(node.func) or "call"


def _legacy_type_device(value: Value) -> Optional[Device]:
    """Where ``.type(T)`` puts a tensor for a legacy tensor type ``T`` (``torch.LongTensor``,
    ``torch.cuda.FloatTensor`` or their names as strings); None for anything else."""
    name = value.qualname if value.kind == Kind.REF else value.literal if value.kind == Kind.STR else None
    if not isinstance(name, str) or not name.endswith("Tensor"):
        return None
    if name in api.LEGACY_TYPED_CONSTRUCTORS and name != "torch.Tensor":
        return CPU
    if name.startswith("torch.cuda.") and name.count(".") == 2:
        return Device("accel", "cuda")
    return None


#: ``nn.Module`` methods that return the module itself: ``model.eval().cpu()`` moves ``model``
_MODULE_METHODS_RETURNING_SELF = _DTYPE_CAST_METHODS | frozenset({"eval", "train", "requires_grad_", "cpu", "cuda", "to", "type"})


def _module_itself(node: cst.BaseExpression) -> cst.BaseExpression:
    """The module a chain of its self-returning methods starts from (``model`` in
    ``model.eval()``); ``node`` itself for anything else."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MODULE_METHODS_RETURNING_SELF:
        node = node.func.value
    return node


def autocast_device_type(node: cst.Call, qualname: Optional[str]) -> Optional[tuple[str, Optional[cst.BaseExpression]]]:
    """The device type an autocast call names ("cuda" or "cpu") and the literal naming it (None
    for the deprecated ``torch.cuda.amp.autocast`` / ``torch.cpu.amp.autocast``); None when it
    is no autocast, is switched off (``enabled=False``) or names its type by a non-literal."""
    if qualname not in api.AUTOCAST_CONTEXTS and qualname not in api.CUDA_AUTOCAST_CONTEXTS and qualname not in api.CPU_AUTOCAST_CONTEXTS:
        return None
    enabled = keyword_arg(node, "enabled")
    if enabled is not None and isinstance(enabled.value, cst.Name) and enabled.value.value == "False":
        return None
    if qualname in api.CUDA_AUTOCAST_CONTEXTS:
        return "cuda", None
    if qualname in api.CPU_AUTOCAST_CONTEXTS:
        return "cpu", None
    given = keyword_arg(node, "device_type")
    positional = positional_args(node)
    type_arg = given if given is not None else (positional[0] if positional else None)
    if type_arg is None or not isinstance(type_arg.value, cst.SimpleString):
        return None
    device_type = str(type_arg.value.evaluated_value).split(":")[0]
    if device_type not in ("cuda", "cpu"):
        return None
    return device_type, type_arg.value


def optimizer_built_from_package(node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[Value]:
    """``config.init_obj("optimizer", torch.optim, params)``: a builder of unknown origin handed
    the ``torch.optim`` package itself and a model's parameters can only build an optimizer of
    that package over them (the pytorch-template idiom)."""
    if not any(value.kind == Kind.REF and value.qualname == "torch.optim" for _, value in args):
        return None
    for arg, value in args:
        if arg.star:
            continue
        parameters = optimized_parameters(value)
        if parameters is not None:
            return Value(Kind.OPTIMIZER, origin=Origin(node, "created", provenance=Provenance.CREATED), info=parameters)
    return None


def _members_of_one_class(qualname: str, members: list[Value]) -> Optional[Homogeneous]:
    """A ``ModuleList`` (or ``Sequential``) whose members are all modules of one class of the
    file: iterating or indexing it gives a module of that class (whose ``forward`` a call runs,
    see Summaries.note_module_call). None for a ``ModuleDict`` (iterated by its keys), for
    members of other or several classes, and for an empty container."""
    if qualname.endswith("ModuleDict") or not members:
        return None
    first = members[0].info
    if not isinstance(first, ClassInfo) or any(member.kind != Kind.MODULE or member.info is not first for member in members):
        return None
    return Homogeneous(Value(Kind.MODULE, info=first))


def image_tensor(node: cst.Call) -> Value:
    """What an image-to-tensor transform returns (``preprocess(img)``, ``TF.to_tensor(img)``): a
    host tensor made from the data."""
    return Value(Kind.TENSOR, CPU, Origin(node, f"made from an image by `{spelled(node)}`", from_data=True), scalar=False)


def _composes_image_to_tensor(args: tuple[tuple[cst.Arg, Value], ...]) -> bool:
    """``transforms.Compose([transforms.Resize(256), transforms.ToTensor()])``: its list holds a
    transform that turns the image into a tensor."""
    if not args or args[0][0].keyword is not None or args[0][0].star:
        return False
    transforms = args[0][1]
    return transforms.kind == Kind.CONTAINER and isinstance(transforms.info, tuple) and any(item.role is Role.IMAGE_TO_TENSOR for item in transforms.info)


def _several_device_ids(node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> bool:
    """``DataParallel(model, device_ids=[0, 1])``: ``device_ids`` is known to name two GPUs or more."""
    positional = [value for arg, value in args if arg.keyword is None and not arg.star]
    given = next((value for arg, value in args if arg.keyword is not None and arg.keyword.value == "device_ids"), None)
    if given is None and len(positional) > 1:
        given = positional[1]
    if given is None or given.kind != Kind.CONTAINER or not isinstance(given.info, tuple):
        return False
    return len(given.info) > 1


def _device_expression(node: cst.Call, method: str, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[cst.BaseExpression, Value]]:
    """The device a move names and its value: ``.cuda(d)`` / ``.to(d)`` / ``.to(device=d)``."""
    for arg, value in args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "device":
            return arg.value, value
    return None


def _negative_number(node: cst.BaseExpression, value: Value) -> bool:
    """``-1``: AllenNLP's (and several libraries') way to say "the CPU" for a device ordinal."""
    if isinstance(value.literal, int) and not isinstance(value.literal, bool):
        return value.literal < 0
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer)


def _is_tensor(value: Value) -> bool:
    return value.kind == Kind.TENSOR


def _placed_as_tensor(value: Value) -> bool:
    """A tensor, or a value of unknown kind known to be on a device (a model's output):
    what ``torch.cat`` joins can only be a tensor."""
    return value.kind == Kind.TENSOR or value.kind == Kind.UNKNOWN and value.is_bare and value.device is not None


def _as_tensor(value: Value) -> Value:
    return value if value.kind == Kind.TENSOR else Value(Kind.TENSOR, value.device, value.origin)


def _cast_receiver(node: cst.BaseExpression) -> Optional[cst.Name]:
    """``logits.float()`` -> ``logits``: a name cast to another float type, without arguments."""
    if not (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)):
        return None
    if node.func.attr.value not in _DTYPE_CAST_METHODS or not isinstance(node.func.value, cst.Name):
        return None
    return node.func.value


def _reduced_past_first_dimension(node: cst.Call) -> bool:
    """``t.argmax(dim=1)``, ``t.sum(2)``: a reduction along a dimension numbered 1 or more (an
    integer literal), which ``t`` has only with two dimensions at least: the result keeps one."""
    for position, arg in enumerate(node.args):
        if arg.star:
            return False
        if arg.keyword is not None and arg.keyword.value == "dim" or arg.keyword is None and position == 0:
            value = arg.value
            return isinstance(value, cst.Integer) and int(value.value, 0) >= 1
    return False


def _parts_of(tensor: Value, method: str) -> Value:
    """What ``tensor.split(1)`` (``chunk``, ``tensor_split``, ``unbind``, and the ``torch.``
    forms) returns: a tuple of tensors on ``tensor``'s device. Splitting keeps the number of
    dimensions, so the parts of a tensor with a dimension have one too (iterating over them
    yields those parts, not the 0-dim elements iterating over the tensor itself would);
    ``unbind`` removes one, so its parts' rank is not known."""
    scalar = False if tensor.scalar is False and method != "unbind" else None
    part = Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=scalar)
    return Value(Kind.CONTAINER, info=Homogeneous(part))


def _values_and_indices(tensor: Value) -> Value:
    """What ``tensor.sort()`` (``topk``, ``cummax``, ``cummin``) returns: a pair (values,
    indices), both on ``tensor``'s device with its number of dimensions (``.values`` and
    ``.indices`` read them; see expressions' attribute reads)."""
    scalar = False if tensor.scalar is False else None
    values = Value(Kind.TENSOR, tensor.device, tensor.origin, scalar=scalar)
    return Value(Kind.CONTAINER, info=(values, values))


#: methods of a numpy array that answer a numpy array
_ARRAY_KEEPING_METHODS = frozenset({
    "astype", "reshape", "copy", "flatten", "ravel", "transpose", "squeeze", "cumsum", "clip", "round", "repeat", "argsort",
})

