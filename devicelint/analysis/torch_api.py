"""What devicelint knows about the PyTorch API, by qualified name. Data only, no logic."""

from __future__ import annotations

from typing import Optional

#: torch functions that allocate a new tensor on the default device unless given ``device=``
FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros ones empty full arange range linspace logspace eye rand randn randint randperm "
        "tensor as_tensor empty_strided normal bartlett_window hann_window hamming_window "
        "blackman_window kaiser_window tril_indices triu_indices complex polar sparse_coo_tensor "
        "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor "
        "ShortTensor ByteTensor CharTensor BoolTensor"
    ).split()
)

#: factories that take ``device=`` and are everyday in model code: a CPU tensor from one of them,
#: made in a function and meeting a tensor that can be on the accelerator, is DL202's finding
DEVICE_KEYWORD_FACTORIES = frozenset(
    f"torch.{name}"
    for name in "zeros ones empty full arange linspace logspace eye rand randn randint randperm tensor".split()
)

#: factories whose first positional argument is data (a list, a number), not a size
DATA_FACTORIES = frozenset(
    {"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor",
     "torch.HalfTensor", "torch.BFloat16Tensor", "torch.LongTensor", "torch.IntTensor",
     "torch.ShortTensor", "torch.ByteTensor", "torch.CharTensor", "torch.BoolTensor"}
)

#: typed legacy constructors: they take no ``device=`` keyword
LEGACY_TYPED_CONSTRUCTORS = frozenset(
    name for name in DATA_FACTORIES if name not in ("torch.tensor", "torch.as_tensor")
)

#: legacy typed CUDA constructors (``torch.cuda.FloatTensor([...])``, ``torch.cuda.LongTensor(n)``):
#: they allocate on the current CUDA device, taking data or sizes like their CPU twins
CUDA_TYPED_CONSTRUCTORS = frozenset(
    "torch.cuda." + name.rsplit(".", 1)[-1] for name in LEGACY_TYPED_CONSTRUCTORS if name != "torch.Tensor"
)

#: factories whose host tensor, made in a function and meeting a tensor that can be on the
#: accelerator, is DL202's finding (DL201 and DL207 leave it to DL202): those that take
#: ``device=``, and the legacy typed constructors (``torch.LongTensor(ids)``), which make host
#: tensors just the same
FUNCTION_HOST_FACTORIES = DEVICE_KEYWORD_FACTORIES | LEGACY_TYPED_CONSTRUCTORS | frozenset(
    # ``torch.zeros_like(t)`` of a host tensor another factory made: recorded as a factory of
    # its own (see TorchSemantics), the call that can be given ``device=``
    f"torch.{name}_like" for name in "zeros ones empty full rand randn randint".split()
)

#: the dtypes ``torch.<name>`` (what ``.to()`` may be given instead of a device)
DTYPE_NAMES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 long uint8 "
    "bool complex64 complex128 cfloat".split()
)

#: torch functions that always return a CPU tensor
CPU_PRODUCERS = frozenset({"torch.from_numpy", "torch.frombuffer"})

#: torch.* functions that take tensors but do not return a tensor
NON_TENSOR_FUNCTIONS = frozenset(
    f"torch.{name}"
    for name in (
        "is_tensor is_storage numel is_floating_point is_complex is_nonzero save load equal "
        "allclose typename manual_seed seed initial_seed get_rng_state set_rng_state "
        "set_default_dtype get_default_dtype set_default_device get_default_device "
        "set_grad_enabled is_grad_enabled no_grad enable_grad inference_mode compile "
        "device dtype Size finfo iinfo set_printoptions use_deterministic_algorithms "
        "set_num_threads get_num_threads is_inference_mode_enabled result_type can_cast "
        "promote_types broadcast_shapes is_same_size is_autocast_enabled autocast "
        "set_float32_matmul_precision get_float32_matmul_precision cond vmap"
    ).split()
)

#: reductions that return a 0-dim tensor when called without a ``dim``
FULL_REDUCTIONS = frozenset(
    "sum mean max min prod norm std var any all amax amin median nansum nanmean logsumexp "
    "count_nonzero dist trace det".split()
)

#: tensor methods that return a tensor on the receiver's device
SAME_DEVICE_METHODS = frozenset(
    (
        "abs add add_ addcmul addcdiv addmm all amax amin any argmax argmin argsort baddbmm bernoulli "
        "bfloat16 bmm bool byte ceil chunk clamp clamp_ clip clone contiguous cos cumsum cumprod "
        "detach detach_ diag diagonal div div_ double exp expand expand_as fill_ flatten flip float "
        "floor gather half index_select int lerp log log_softmax long masked_fill masked_fill_ "
        "masked_select matmul max mean min mm mul mul_ narrow neg norm normal_ permute pow prod "
        "relu repeat repeat_interleave reshape reshape_as round rsqrt scatter scatter_ sigmoid sign "
        "sin softmax sort split sqrt square squeeze std sub sub_ sum t tanh topk transpose tril "
        "triu unbind unflatten unique unsqueeze uniform_ var view view_as where zero_ "
        "requires_grad_ logical_and logical_or logical_not eq ne lt le gt ge float_power sgn "
        "nan_to_num roll movedim cross dot mv outer kron einsum new_zeros new_ones new_empty "
        "new_full new_tensor softplus exp_ log_ clamp_min clamp_max maximum minimum scatter_add "
        "scatter_add_ scatter_reduce scatter_reduce_ index_add index_add_ index_copy index_copy_ "
        "index_fill index_fill_ masked_scatter masked_scatter_ addcmul_ addcdiv_ lerp_ sigmoid_ sqrt_ "
        "tanh_ relu_ abs_ neg_ pow_ clamp_min_ clamp_max_ floor_ ceil_ round_ nonzero argwhere "
        # elementwise math: the result is where the receiver is, of its shape
        "erf erfc erfinv log1p expm1 exp2 log2 log10 sinh cosh tan asin acos atan atan2 asinh acosh "
        "atanh reciprocal trunc frac lgamma digamma logit hypot fmod remainder sinc deg2rad rad2deg "
        "erf_ erfinv_ log1p_ expm1_ reciprocal_ trunc_ fmod_ remainder_ square_ exponential_ "
        "cauchy_ log_normal_ geometric_ random_ "
        # in-place comparisons, casts of shape and other in-place forms: they return the receiver
        "eq_ ne_ lt_ le_ gt_ ge_ clip_ sin_ cos_ tan_ sign_ logical_not_ t_ transpose_ squeeze_ unsqueeze_ "
        "bernoulli_ copy_"
    ).split()
)

#: tensor methods that combine the receiver with other tensors, which must share its device
BINARY_TENSOR_METHODS = frozenset(
    "add sub mul div matmul mm bmm mv dot outer cross maximum minimum lerp addmm baddbmm "
    "add_ sub_ mul_ div_ eq ne lt le gt ge logical_and logical_or where masked_fill "
    "index_select gather scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_ "
    "index_add index_add_ index_copy index_copy_ index_fill index_fill_ masked_scatter masked_scatter_ "
    "masked_fill_ addcmul addcmul_ addcdiv addcdiv_ lerp_ stft istft "
    # `out.backward(gradient)`: the gradient must be on the output's device
    "backward".split()
    # not copy_ (it copies across devices), expand_as/view_as/reshape_as (they read the other's
    # shape only) nor type_as (it converts to the other's device)
)

#: tensor methods that leave the tensor on the host or turn it into a Python object
HOST_RESULT_METHODS = frozenset("numpy tolist item".split())

#: tensor methods that return a non-tensor (shape queries and the like)
NON_TENSOR_METHODS = frozenset(
    "size dim ndimension numel element_size nelement stride storage_offset data_ptr is_contiguous "
    "get_device is_pinned is_shared is_floating_point is_complex equal allclose".split()
)

#: keyword arguments of mixing functions that are operands (``index_select(x, 0, index=i)``);
#: others, such as ``ctc_loss``'s lengths, may legally stay on the host
OPERAND_KEYWORDS = frozenset({"input", "other", "index", "mask", "src", "tensor", "target", "weight", "gradient"})

#: arguments PyTorch reads on the host, whatever device the call's other tensors are on: a
#: tensor given there must be a CPU tensor - a GPU one raises, even a 0-dim one - (a Python
#: list or int is fine). Per function: (position, the keywords that name it, PyTorch's error).
#: From the PyTorch docs: ``pack_padded_sequence``'s lengths "must be on the CPU if provided as
#: a tensor" (since PyTorch 1.7), and ``tensor_split``'s indices_or_sections, "if a tensor, ...
#: a zero-dimensional or one-dimensional long tensor on the CPU".
HOST_ONLY_ARGUMENTS: dict[str, tuple[int, frozenset[str], str]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": (
        1, frozenset({"lengths"}), "'lengths' argument should be a 1D CPU int64 tensor"
    ),
    "torch.tensor_split": (
        1, frozenset({"indices_or_sections", "indices", "sections"}),
        "tensor_split expected tensor_indices_or_sections to be on cpu",
    ),
}

#: the same, for tensor methods (the position counts from the first argument after the receiver)
HOST_ONLY_METHOD_ARGUMENTS: dict[str, tuple[int, frozenset[str], str]] = {
    "tensor_split": (
        0, frozenset({"indices_or_sections", "indices", "sections"}),
        "tensor_split expected tensor_indices_or_sections to be on cpu",
    ),
}

#: methods that move a tensor or module; on a module they move it in place
#: library mappings a class of the file may subclass (a plain ``dict`` base is seen by name)
MAPPING_BASES = frozenset({"collections.OrderedDict", "collections.UserDict", "typing.Dict", "builtins.dict"})

MOVE_METHODS = frozenset({"to", "cuda", "cpu", "pin_memory", "xpu", "mps"})

#: torch.* and torch.nn.functional.* functions whose tensor arguments must share one device
MIXING_FUNCTIONS = frozenset(
    [f"torch.{name}" for name in (
        "cat concat concatenate stack hstack vstack dstack column_stack matmul mm bmm mv dot "
        "einsum where add sub subtract mul multiply div divide maximum minimum cdist lerp addmm "
        "baddbmm index_select gather masked_select masked_fill cross outer kron inner tensordot "
        "chain_matmul cosine_similarity pairwise_distance bucketize searchsorted"
        # a short-time Fourier transform reads its window beside its input: "stft input and
        # window must be on the same device"
        " stft istft"
    ).split()]
    + [f"torch.nn.functional.{name}" for name in (
        "linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d embedding "
        "cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss kl_div "
        "binary_cross_entropy binary_cross_entropy_with_logits cosine_similarity "
        "pairwise_distance triplet_margin_loss margin_ranking_loss layer_norm batch_norm "
        "group_norm scaled_dot_product_attention grid_sample"
    ).split()]
    # sparse @ dense: both operands on one device
    + ["torch.sparse.mm", "torch.sparse.addmm"]
)

#: functions that pad a list of tensors into one tensor, where the list's tensors are
#: (``pad_sequence(masks, batch_first=True)``)
SEQUENCE_PADDERS = frozenset({"torch.nn.utils.rnn.pad_sequence"})
#: the DataLoader's default collate function called by the program on a list of samples: for
#: tensor samples it returns ``torch.stack(batch, 0)``, a tensor where the samples are
#: (``collate_tensor_fn`` in torch/utils/data/_utils/collate.py); other samples (tuples, dicts)
#: give a structure of such stacks
DEFAULT_COLLATES = frozenset(
    f"torch.utils.data.{module}default_collate" for module in ("", "dataloader.", "_utils.collate.")
)

#: the package of PyTorch's probability distributions (``torch.distributions.Normal``,
#: ``torch.distributions.categorical.Categorical``): a class of it builds a distribution
DISTRIBUTIONS_PACKAGE = "torch.distributions."

#: methods of a distribution that give tensors where its parameters are
DISTRIBUTION_TENSOR_METHODS = frozenset({
    "sample", "rsample", "sample_n", "log_prob", "entropy", "cdf", "icdf", "perplexity", "enumerate_support",
})

#: attributes of a distribution that are tensors where its parameters are
DISTRIBUTION_TENSOR_ATTRIBUTES = frozenset({
    "mean", "mode", "stddev", "variance", "probs", "logits", "loc", "scale", "concentration", "rate", "low", "high",
})

#: autograd's functions that take gradients for outputs (``grad_outputs``, each on its
#: output's device)
AUTOGRAD_GRADS = frozenset({"torch.autograd.grad"})

#: functions that clip the gradients of the parameters they are given and return their total
#: norm, a 0-dim tensor on those parameters' device
GRADIENT_NORM_CLIPPERS = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
})

#: ``torch._foreach_copy_(xs, ys)``, ``torch._foreach_lerp_(xs, ys, w)``: functions over lists of
#: tensors, which work on the tensors of all their lists together - on one device
FOREACH_PREFIX = "torch._foreach_"


#: nn.functional losses, which return a 0-dim tensor unless ``reduction="none"``
FUNCTIONAL_LOSSES = frozenset(
    name for name in MIXING_FUNCTIONS if name.startswith("torch.nn.functional.") and (
        name.endswith("_loss") or name.endswith("entropy") or name.endswith("_logits") or name.endswith("kl_div")
    )
)

#: nn layers that own parameters or buffers: built on the CPU unless given ``device=``
PARAMETERISED_LAYERS = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d "
        "ConvTranspose3d BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm LayerNorm GroupNorm "
        "InstanceNorm1d InstanceNorm2d InstanceNorm3d RMSNorm LocalResponseNorm Embedding "
        "EmbeddingBag LSTM GRU RNN LSTMCell GRUCell RNNCell MultiheadAttention Transformer "
        "TransformerEncoder TransformerDecoder TransformerEncoderLayer TransformerDecoderLayer "
        "PReLU Parameter"
    ).split()
)

#: containers of modules
MODULE_CONTAINERS = frozenset(
    {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"}
)

#: wrappers that scatter CPU inputs to their devices themselves
PARALLEL_WRAPPERS = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
    }
)

#: bases that make a class an nn.Module (matched by qualified name)
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "torch.nn.Sequential",
        "torch.nn.ModuleList",
        "torch.nn.ModuleDict",
    }
)

#: module bases from other libraries whose framework places the model itself: devices unknown
FRAMEWORK_MODULE_BASES = frozenset(
    {
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)

#: classes under torch.nn that are not modules
_NN_NON_MODULES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})
#: libraries whose capitalised classes under these prefixes are models or layers
_LIBRARY_MODULE_PREFIXES = ("torchvision.models.", "torchvision.ops.", "timm.models.", "timm.layers.")


#: autocast context managers that take the device type as their first argument
AUTOCAST_CONTEXTS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
#: the deprecated CUDA-only spelling: its device type is always "cuda"
CUDA_AUTOCAST_CONTEXTS = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
#: the deprecated CPU-only spelling: its device type is always "cpu"
CPU_AUTOCAST_CONTEXTS = frozenset({"torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"})


def is_module_base(qualname: str) -> bool:
    """Does subclassing ``qualname`` make an nn.Module: ``nn.Module``, any layer of torch.nn
    (``nn.Linear``, ``nn.TransformerEncoderLayer``), a torchvision or timm model or layer."""
    if qualname in MODULE_BASES:
        return True
    leaf = qualname.rsplit(".", 1)[-1]
    if not leaf[:1].isupper():
        return False
    if qualname.startswith("torch.nn.") and not qualname.startswith(("torch.nn.utils.", "torch.nn.parameter.", "torch.nn.init.", "torch.nn.functional.")):
        return leaf not in _NN_NON_MODULES
    return qualname.startswith(_LIBRARY_MODULE_PREFIXES)


def is_framework_module_base(qualname: str) -> bool:
    """A base whose framework places the model itself (Lightning, transformers models)."""
    if qualname in FRAMEWORK_MODULE_BASES:
        return True
    leaf = qualname.rsplit(".", 1)[-1]
    if leaf in ("LightningModule", "PreTrainedModel"):
        return True
    return qualname.startswith("transformers.") and leaf[:1].isupper() and (
        leaf.endswith(("Model", "PreTrainedModel")) or "For" in leaf
    )


def is_diffusers_pipeline(qualname: str) -> bool:
    """A pipeline class of diffusers (``diffusers.DiffusionPipeline``,
    ``diffusers.StableDiffusionPipeline``): not an nn.Module, but ``Cls.from_pretrained(...)``
    builds an object of ``Cls`` and ``pipe.to(device)`` moves its models and returns ``pipe``."""
    return qualname.startswith("diffusers.") and "Pipeline" in qualname.rsplit(".", 1)[-1]


#: calls that build a model from a library: an nn.Module on the CPU
MODEL_FACTORIES = frozenset({"timm.create_model", "timm.models.create_model"})
#: torchvision.models.<name>() builds a model unless <name> is one of its helpers
TORCHVISION_MODELS = "torchvision.models."

DATALOADER_NAMES = frozenset(
    {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
)

TENSOR_DATASET_NAMES = frozenset(
    {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
)

#: LeRobot's datasets (``lerobot.common.datasets`` before lerobot 0.3, ``lerobot.datasets`` since):
#: since its v2.0 dataset format each item is a dict of CPU tensors that also holds the task's
#: text under "task" (``item["task"] = self.meta.tasks[task_idx]`` in ``__getitem__``), which
#: default collation turns into a list of strings (huggingface/lerobot#713)
LEROBOT_DATASET_NAMES = frozenset(
    f"{package}.datasets.lerobot_dataset.{name}"
    for package in ("lerobot", "lerobot.common")
    for name in ("LeRobotDataset", "MultiLeRobotDataset")
)
#: the keys of a LeRobot dataset item that hold Python strings
LEROBOT_TEXT_KEYS = ("task",)

DATASET_BASES = frozenset(
    {"torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset"}
)

#: child processes started with the default start method (``fork`` on Linux) unless the program
#: chose another; the ``torch.multiprocessing`` names are the standard library's, re-exported
PROCESS_CLASSES = frozenset({"multiprocessing.Process", "torch.multiprocessing.Process", "multiprocessing.context.Process"})

#: DistributedDataParallel, by the names it is imported under
DISTRIBUTED_DATA_PARALLEL = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})

#: iterable wrappers that yield what they wrap
PASS_THROUGH_ITERABLES = frozenset(
    {"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "iter", "builtins.iter", "allennlp.common.tqdm.Tqdm.tqdm"}
)

#: ``broadcast_all(*values)`` of torch.distributions: one tensor per argument - a tensor argument
#: broadcast where it is, a number made a tensor on the device of the first tensor argument
BROADCASTING_CONVERTERS = frozenset({"torch.distributions.utils.broadcast_all"})

#: copies that keep what they copy where it is: ``deepcopy(model)`` is a module on the same
#: device (``copy.deepcopy`` copies a module's parameters, and a tensor, onto their own device)
SAME_DEVICE_COPIES = frozenset({"copy.deepcopy", "copy.copy"})

#: standard-library functions that only read or describe the object they are handed (its
#: signature, source, name, text): they never move it, so a module handed to them stays where it
#: was (any other unseen call may move it, see Summaries._escape)
READ_ONLY_CALLS = frozenset(
    [f"inspect.{name}" for name in (
        "signature getfullargspec getargspec getsource getsourcefile getsourcelines getfile getmodule getdoc "
        "isclass isfunction ismethod isroutine isbuiltin iscoroutinefunction isgeneratorfunction isabstract"
    ).split()]
    + [f"logging.{name}" for name in "debug info warning warn error exception critical log".split()]
    + ["warnings.warn", "pprint.pprint", "pprint.pformat", "textwrap.indent"]
)
#: builtins of the same sort, called by their bare name
READ_ONLY_BUILTINS = frozenset("str repr id type hasattr getattr callable hash vars dir format".split())

#: OpenMMLab's checkpoint loaders, which end in ``torch.load(filename, map_location=map_location)``
#: with the ``map_location`` they are given, ``None`` by default: qualified name -> the positions
#: of the path and ``map_location``, and their parameter names. Checked against the libraries' sources: mmcv 1.x
#: mmcv/runner/checkpoint.py and mmengine mmengine/runner/checkpoint.py both define
#: ``load_checkpoint(model, filename, map_location=None, strict=False, logger=None, ...)``, which
#: calls ``_load_checkpoint(filename, map_location, logger)`` (``map_location=None`` by default
#: too), which calls ``CheckpointLoader.load_checkpoint(filename, map_location, logger)``, whose
#: local-file loader ``load_from_local`` calls ``torch.load(filename, map_location=map_location)``
#: (its URL loaders hand the same map_location to ``torch.load``/``load_url``).
#: mmcv/runner/__init__.py exports both functions, mmengine/runner/__init__.py ``load_checkpoint``.
DOWNLOADING_CHECKPOINT_LOADERS = frozenset(
    {"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url", "torchvision.models.utils.load_state_dict_from_url"}
)
CHECKPOINT_LOADERS: dict[str, tuple[int, int, str, str]] = {
    **{f"{package}.load_checkpoint": (1, 2, "filename", "map_location") for package in ("mmcv.runner", "mmcv.runner.checkpoint", "mmengine.runner", "mmengine.runner.checkpoint")},
    **{f"{package}._load_checkpoint": (0, 1, "filename", "map_location") for package in ("mmcv.runner", "mmcv.runner.checkpoint", "mmengine.runner.checkpoint")},
    # torch's own download-and-load helper, ``load_state_dict_from_url(url, model_dir=None,
    # map_location=None, ...)`` in torch/hub.py, torch.load of the cached file with that
    # map_location; torch/utils/model_zoo.py re-exports it as ``load_url``, and old torchvision
    # as ``torchvision.models.utils.load_state_dict_from_url``
    **{name: (0, 2, "url", "map_location") for name in DOWNLOADING_CHECKPOINT_LOADERS},
}

#: methods of a model that run it on the tensors they are handed: transformers' ``generate``
#: calls the model's forward on ``input_ids`` (and the other inputs) as they are, so they must
#: already be on the model's device; ``model.forward(x)`` is ``model(x)`` without its hooks
MODEL_RUN_METHODS = frozenset({"generate", "forward"})

#: transformers tokenizers (``AutoTokenizer``, ``BertTokenizer``, ``T5TokenizerFast``,
#: ``PreTrainedTokenizerFast``), recognised by the package their class comes from: these methods
#: (and calling the tokenizer itself, ``__call__``) return tensors when given
#: ``return_tensors="pt"`` (lists otherwise), always on the host. ``encode`` returns one tensor of
#: token ids; the others a ``BatchEncoding``, a dict of tensors with its own ``.to(device)``
TOKENIZER_TENSOR_METHODS = frozenset({"__call__", "encode", "encode_plus", "batch_encode_plus"})
#: the entries of a BatchEncoding that are tensors, also reachable as attributes (``batch.input_ids``)
TOKENIZED_TENSOR_KEYS = frozenset(
    {"input_ids", "attention_mask", "token_type_ids", "special_tokens_mask", "offset_mapping", "position_ids"}
)
#: the fields of a transformers ``ModelOutput`` (and of diffusers' model outputs) that hold one
#: tensor: a model's call returns them where the model is (``model(**batch).logits``); see
#: MODEL_OUTPUT_TUPLE_FIELDS for those that hold one tensor per layer
MODEL_OUTPUT_TENSOR_FIELDS = frozenset(
    {
        "logits", "last_hidden_state", "pooler_output", "loss", "start_logits", "end_logits",
        "prediction_logits", "seq_relationship_logits", "image_embeds", "text_embeds",
        "logits_per_image", "logits_per_text", "encoder_last_hidden_state", "sample",
        "pred_original_sample", "prev_sample", "predicted_depth", "pred_boxes", "pred_masks",
        "audio_values", "spectrogram", "waveform", "embeddings", "sequences",
    }
)
#: the fields of a transformers ``ModelOutput`` that hold a tuple of tensors, one per layer
#: (``outputs.hidden_states[-1]``), where the model is (``past_key_values`` nests deeper: not here)
MODEL_OUTPUT_TUPLE_FIELDS = frozenset(
    {"hidden_states", "attentions", "encoder_hidden_states", "decoder_hidden_states", "cross_attentions", "encoder_attentions", "decoder_attentions"}
)
#: torchvision transforms that turn an image (PIL, numpy) into a tensor: calling one gives a
#: host tensor made from the data
IMAGE_TO_TENSOR_TRANSFORMS = frozenset(
    f"torchvision.transforms.{name}" for name in ("ToTensor", "PILToTensor", "v2.ToTensor", "v2.PILToTensor", "v2.ToImage")
)
#: torchvision functions that turn an image into a host tensor
IMAGE_TO_TENSOR_FUNCTIONS = frozenset(
    f"torchvision.transforms.{name}"
    for name in ("functional.to_tensor", "functional.pil_to_tensor", "v2.functional.to_image", "v2.functional.pil_to_tensor")
)
#: torchvision.io's image readers: ``read_image(path)`` is ``decode_image(read_file(path))``, a
#: host uint8 tensor decoded on the CPU from the file's bytes (``decode_jpeg`` is left out: its
#: ``device=`` may decode on the GPU)
IMAGE_FILE_READERS = frozenset(
    f"torchvision.io.{module}{name}"
    for module in ("", "image.")
    for name in ("read_image", "decode_image", "decode_png", "read_file")
)
#: torchvision's functional transforms: given a tensor image they compute on it with torch ops
#: and return a tensor where it is (``normalize`` builds its mean and std with
#: ``device=tensor.device``); given a PIL image they return one. The names below return no image.
TORCHVISION_FUNCTIONAL_PACKAGES = ("torchvision.transforms.functional.", "torchvision.transforms.v2.functional.")
TORCHVISION_FUNCTIONAL_NOT_IMAGES = frozenset(
    "to_pil_image get_image_size get_image_num_channels get_dimensions get_size get_num_channels "
    "get_num_frames to_grayscale".split()
)
#: torchaudio's ``load(uri, ...)``: ``(waveform, sample_rate)``, the waveform a host tensor
#: decoded on the CPU
AUDIO_FILE_READERS = frozenset({"torchaudio.load"})
#: torchvision's composition of transforms (its list's transforms run in turn)
TRANSFORM_COMPOSERS = frozenset({"torchvision.transforms.Compose", "torchvision.transforms.v2.Compose"})
#: the constructors that load or build a tokenizer object, beside calling its class
TOKENIZER_LOADERS = frozenset({"from_pretrained", "from_file"})


#: AllenNLP's (0.x) batch iterators (``BasicIterator``, ``BucketIterator``, ``DataIterator.from_params``):
#: calling one on instances, ``iterator(instances, num_epochs=1)``, yields batches - dicts of
#: tensors - built on the host; only a ``cuda_device=`` given to that call (before AllenNLP 0.9)
#: moves them, later versions leave it to the caller (``nn_util.move_to_device``)
ALLENNLP_ITERATORS_PACKAGE = "allennlp.data.iterators."
#: ``load_archive(archive_file, cuda_device=-1, ...)`` returns an Archive whose ``.model`` is
#: loaded onto ``cuda_device`` (the CPU for a negative one)
ALLENNLP_ARCHIVE_LOADERS = frozenset({"allennlp.models.archival.load_archive", "allennlp.models.load_archive"})
ALLENNLP_ARCHIVE_DEVICE = (1, "cuda_device")


#: sentence-transformers' ``SentenceTransformer(model_name_or_path, modules, device)``: with no
#: device given (None) it places itself where an accelerator is available ("cuda" if
#: torch.cuda.is_available() else "cpu" from 0.2 to 2.x, get_device_name() since 3.0), and
#: ``encode(..., convert_to_tensor=True)`` returns its embeddings there (the flag overrides
#: convert_to_numpy, the only path that calls .cpu())
SENTENCE_TRANSFORMER_CLASSES = frozenset({"sentence_transformers.SentenceTransformer", "sentence_transformers.SentenceTransformer.SentenceTransformer"})
SENTENCE_TRANSFORMER_DEVICE = (2, "device")
#: sentence_transformers.util's similarity functions: a tensor computed from their tensor
#: arguments, where those are (``util.cos_sim(q, corpus)``)
SENTENCE_TRANSFORMER_SIMILARITIES = frozenset(
    f"sentence_transformers.util.{name}" for name in ("cos_sim", "pytorch_cos_sim", "dot_score", "manhattan_sim", "euclidean_sim", "pairwise_cos_sim", "pairwise_dot_score")
)


#: torchtext's legacy batch iterators (``torchtext.data`` 0.3-0.8, ``torchtext.legacy.data``
#: 0.9-0.11): ``Iterator(dataset, batch_size, sort_key=None, device=None, ...)`` yields Batch
#: objects whose fields are tensors made by ``Field.numericalize(..., device=self.device)``;
#: with no device (None) they are made on the CPU ("If left as default, the tensors will be
#: created on cpu"); an int device is also dropped to None, with a warning (checked in
#: torchtext's source at 0.3.1 and 0.4.0). Not so in 0.2.x, where None meant the current GPU:
#: only a program of that age (2018 and before) reads otherwise.
TORCHTEXT_ITERATOR_PACKAGES = ("torchtext.data.", "torchtext.legacy.data.")
TORCHTEXT_ITERATORS = frozenset({"Iterator", "BucketIterator", "BPTTIterator"})
TORCHTEXT_ITERATOR_DEVICE = (3, "device")
#: the attributes of a torchtext Batch that are not its fields
TORCHTEXT_BATCH_ATTRIBUTES = frozenset({"batch_size", "dataset", "fields", "input_fields", "target_fields", "fromvars"})


def torchtext_iterator(qualname: str) -> Optional[tuple[str, bool]]:
    """``torchtext.data.BucketIterator`` -> ("BucketIterator", False), ``...BucketIterator.splits``
    -> ("BucketIterator", True); None for anything else. The class may be named through its
    module (``torchtext.data.iterator.BucketIterator``)."""
    for package in TORCHTEXT_ITERATOR_PACKAGES:
        if qualname.startswith(package):
            parts = qualname[len(package) :].split(".")
            if parts and parts[0] == "iterator":
                parts = parts[1:]
            if len(parts) == 1 and parts[0] in TORCHTEXT_ITERATORS:
                return parts[0], False
            if len(parts) == 2 and parts[0] in TORCHTEXT_ITERATORS and parts[1] == "splits":
                return parts[0], True
    return None


def is_allennlp_iterator_constructor(qualname: str) -> bool:
    """``allennlp.data.iterators.BucketIterator``, ``...DataIterator.from_params``: a class of
    AllenNLP's iterators package (the package is the evidence), built or built from params."""
    if not qualname.startswith(ALLENNLP_ITERATORS_PACKAGE):
        return False
    parts = qualname[len(ALLENNLP_ITERATORS_PACKAGE) :].split(".")
    if parts[-1] == "from_params":
        parts = parts[:-1]
    return bool(parts) and parts[-1].endswith("Iterator") and parts[-1][:1].isupper()


def is_tokenizer_constructor(qualname: str) -> bool:
    """``transformers.AutoTokenizer.from_pretrained``, ``transformers.BertTokenizer``,
    ``transformers.models.t5.T5TokenizerFast.from_pretrained``: a qualified name from the
    transformers package whose class is a tokenizer (the package is the evidence, not the
    spelling of the variable that holds it)."""
    parts = qualname.split(".")
    if parts[0] != "transformers" or len(parts) < 2:
        return False
    if parts[-1] in TOKENIZER_LOADERS:
        parts = parts[:-1]
    leaf = parts[-1]
    return leaf[:1].isupper() and "Tokenizer" in leaf


#: functions of other libraries that run a module on the inputs they are handed, as
#: ``module(*inputs)``: name -> ((position, keyword) of the module, (position, keyword) of the
#: tuple of inputs, or of the one input tensor). thop's ``profile(model, inputs)`` counts operations by calling
#: ``model(*inputs)`` with counting hooks registered
MODULE_RUNNERS = {
    "thop.profile": ((0, "model"), (1, "inputs")),
    "thop.profile.profile": ((0, "model"), (1, "inputs")),
    # exporters and tracers run the module on their example inputs (signatures of torch 2.13)
    "torch.onnx.export": ((0, "model"), (1, "args")),
    "torch.onnx.utils.export": ((0, "model"), (1, "args")),
    "torch.jit.trace": ((0, "func"), (1, "example_inputs")),
    "torch.export.export": ((0, "mod"), (1, "args")),
}

#: plain attribute holders whose keyword arguments become their attributes
ATTRIBUTE_BAGS = frozenset({"types.SimpleNamespace", "argparse.Namespace"})

#: the legacy autograd wrapper: ``Variable(x)`` is ``x``
VARIABLE_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

#: calls that ask the machine which devices it has
DEVICE_PROBES = frozenset(
    {"torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available",
     "torch.xpu.is_available", "torch.accelerator.is_available", "torch.accelerator.current_accelerator"}
)

TORCH_LOAD = "torch.load"
TORCH_DEVICE = "torch.device"

#: optimizers live under these packages
OPTIMIZER_PREFIX = "torch.optim."
#: the base class of optimizers (a subclass's ``step`` updates the model's parameters where they are)
OPTIMIZER_BASES = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})
#: optimizers that create their per-parameter state in ``__init__``, on the parameters' device
#: of that moment; every other ``torch.optim`` optimizer (SGD, Adam, AdamW, Adadelta, Adamax,
#: ASGD, NAdam, RAdam, RMSprop, Rprop, SparseAdam, LBFGS, Adafactor, Muon, and the
#: ``_multi_tensor`` variants, which only pass ``foreach=True``) creates it lazily in ``step()``,
#: on the device the parameters have by then. Checked on torch 2.13's sources:
#: torch/optim/adagrad.py:79-98, ``Adagrad.__init__`` sets ``state["step"]`` and
#: ``state["sum"] = torch.full_like(p, init_value, ...)`` for every parameter.
EAGER_STATE_OPTIMIZERS = frozenset({"torch.optim.Adagrad", "torch.optim.adagrad.Adagrad"})

#: constructors of a random number generator (``torch.Generator(device="cuda")``)
GENERATOR_CONSTRUCTORS = frozenset({"torch.Generator", "torch._C.Generator"})

#: torch functions that draw random numbers with ``generator=`` on the device they create on
RANDOM_FACTORIES = frozenset(
    f"torch.{name}" for name in "rand randn randint randperm normal bernoulli multinomial poisson".split()
)
#: ``*_like`` random factories: they draw on their argument's device (or ``device=``)
RANDOM_LIKE_FACTORIES = frozenset(f"torch.{name}" for name in "rand_like randn_like randint_like".split())
#: tensor methods that fill the receiver with random numbers drawn with ``generator=``
RANDOM_FILL_METHODS = frozenset(
    "normal_ uniform_ bernoulli_ random_ exponential_ geometric_ cauchy_ log_normal_ bernoulli multinomial".split()
)

#: constructors of a new (side) stream
STREAM_CONSTRUCTORS = frozenset({"torch.cuda.Stream", "torch.cuda.streams.Stream"})
#: ``with torch.cuda.stream(s):`` makes ``s`` the current stream inside the block
STREAM_CONTEXTS = frozenset({"torch.cuda.stream", "torch.cuda.StreamContext", "torch.cuda.streams.StreamContext"})
#: calls that make a stream wait for another, or the host for the device
STREAM_SYNC_METHODS = frozenset({"wait_stream", "wait_event", "wait", "synchronize"})
STREAM_SYNC_FUNCTIONS = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize"})
#: functions that return the current (or the default) stream
CURRENT_STREAM_FUNCTIONS = frozenset({"torch.cuda.current_stream", "torch.cuda.default_stream"})

#: numpy functions that return a new array
NUMPY_ARRAY_CONSTRUCTORS = frozenset(
    f"numpy.{name}"
    for name in (
        "zeros ones empty full zeros_like ones_like empty_like full_like array asarray arange linspace "
        "eye identity concatenate stack vstack hstack"
    ).split()
)

#: torch functions that put the tensors of one list on one device: they reject tensors on two
#: devices, a CPU tensor beside a GPU one included (empty or 0-dim too)
CONCATENATING = frozenset(
    f"torch.{name}" for name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack")
)
