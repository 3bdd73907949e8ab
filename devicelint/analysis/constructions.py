"""Objects a program constructs from classes the analysis cannot read.

``pixor = PIXOR()`` with ``PIXOR`` imported from a package outside the project, or
``model = models.__dict__[arch](num_classes=n)`` (torchvision's idiom for choosing an
architecture by name): the analysis cannot see the class, so the object is of unknown kind.
What the file itself does with it can still say what it is: ``pixor.eval()`` or
``pixor.parameters()`` only work on an ``nn.Module``, and a module that a constructor builds
has its parameters on the host - ``nn.Module.__init__`` allocates them there, unless a default
device is in force (``with torch.device("cuda"):``).

So the value of such a call carries a *construction* origin, without a device; when the program
later shows it is a module, it becomes a module on the host (``built_module``). Evidence only
the program can give, never a guess from names:

* the callee constructs: a class named by a qualified name outside torch (PEP 8's CapWords is
  how Python spells a class; a lower-case factory such as detectron2's ``build_model(cfg)`` may
  move what it builds, and is left alone), or an entry of a models package's ``__dict__``;
* nothing handed to it can tell it a device: no argument is a device, a placed value, a device
  string, a keyword such as ``device=``/``device_map=``, or ``*``/``**`` unpacking;
* no default device is in force;
* it is not a submodule: in the methods of a module class whatever it builds moves with the
  model (see ``FlowAnalyzer._module_evidence``).

In an ``nn.Module``'s ``__init__`` such an object kept as ``self.decoder`` is a submodule once a
method of the class calls it with a tensor (``self.decoder(tokens, ...)``) or uses it as a
module: it follows the model (``submodule``). There a layer handed to the constructor
(``TransformerDecoder(args, embed_tokens)``) becomes part of it, so it tells no device.

Whatever may move the object before that evidence forgets the construction: a move method
(``.to``, ``.cuda``), any method given a device, or handing it to code the analysis cannot see
(``trainer.fit(model)``, ``accelerator.prepare(model)``; see ``Summaries._escape``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import CPU, MODEL_DEVICE, Kind, Origin, Value, device_from_string

#: keywords by which a constructor is told where to put what it builds (the callee's API, not
#: the caller's names)
_PLACING_KEYWORDS = frozenset({"device", "device_map", "map_location", "devices", "device_ids", "gpu", "gpus", "gpu_id", "use_cuda", "cuda", "accelerator"})
#: namespaces whose classes are not nn.Modules built on the host: torch's own are modelled;
#: sentence-transformers' and ultralytics' models place themselves on the accelerator
_NOT_CONSTRUCTORS = ("torch.", "numpy.", "builtins.", "collections.", "typing.", "dataclasses.", "sentence_transformers.", "ultralytics.")
#: methods that move a module in place (a bare ``model.to(device)`` is a move too)
_MOVE_METHODS = frozenset({"to", "cuda", "xpu", "mps", "npu", "to_empty", "cpu"})


def construction_origin(
    node: cst.Call, callee: Value, args: tuple[tuple[cst.Arg, Value], ...], default_device: Optional[Value], in_module_init: bool = False
) -> Optional[Origin]:
    """The construction origin of a call's result (see the module's docs), or None where the
    call is not known to construct an object it cannot have placed. ``in_module_init``: the
    call is in an ``nn.Module``'s ``__init__``, where layers handed to it become its parts."""
    if built_off_host(default_device):
        return None
    if not _constructs(node, callee):
        return None
    for arg, value in args:
        if in_module_init and not arg.star and value.kind in (Kind.MODULE, Kind.CRITERION) and (arg.keyword is None or arg.keyword.value not in _PLACING_KEYWORDS):
            continue
        if arg.star or _may_place(arg, value):
            return None
    return Origin(node, f"built by `{_spelled(node)}`", construction=True)


def built_off_host(default_device: Optional[Value]) -> bool:
    """Built under ``with torch.device(d)`` / ``torch.set_default_device(d)`` (the default
    device factories use there, or None): where ``d`` may be an accelerator - also where it is
    not known - a constructor makes its parameters there, not on the host."""
    return default_device is not None and (default_device.device is None or not default_device.device.is_cpu)


def _constructs(node: cst.Call, callee: Value) -> bool:
    if callee.kind == Kind.REF and callee.qualname is not None:
        qualname = callee.qualname
        leaf = qualname.rsplit(".", 1)[-1]
        return "." in qualname and not qualname.startswith(_NOT_CONSTRUCTORS) and leaf[:1].isupper()
    func = node.func
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "__dict__":
        # `models.__dict__[arch](...)`: an architecture looked up in a models package by name
        return isinstance(func.value.value, (cst.Name, cst.Attribute))
    return False


def _may_place(arg: cst.Arg, value: Value) -> bool:
    """Could this argument tell the constructor a device - by naming one, or by being on one
    (a constructor may build its object where the tensors or modules it is given are)?"""
    return _tells_a_device(arg, value) or value.device is not None


def _spelled(node: cst.Call) -> str:
    name = dotted_name(node.func)
    if name is not None:
        return f"{name}()"
    func = node.func
    if isinstance(func, cst.Subscript):
        base = dotted_name(func.value)
        index = func.slice[0].slice if len(func.slice) == 1 else None
        key = dotted_name(index.value) if isinstance(index, cst.Index) else None
        if base is not None:
            return f"{base}[{key or '...'}]()"
    return "a constructor"


def is_construction(value: Value) -> bool:
    """An object of unknown kind that a constructor built and nothing has placed yet."""
    return value.kind == Kind.UNKNOWN and value.device is None and value.origin is not None and value.origin.construction


def built_module(value: Value) -> Value:
    """``value`` (see is_construction) shown to be a module: on the host, where its
    constructor allocated its parameters."""
    assert value.origin is not None
    return Value(Kind.MODULE, CPU, Origin(value.origin.node, f"never moved since it was {value.origin.how}"))


def submodule(value: Value) -> Value:
    """``value`` (see is_construction), kept by an ``nn.Module`` and shown to be a module: a
    submodule, on the model's device."""
    assert value.origin is not None
    return Value(Kind.MODULE, MODEL_DEVICE, Origin(value.origin.node, f"a submodule {value.origin.how}"))


def moves_construction(method: str, args: tuple[tuple[cst.Arg, Value], ...]) -> bool:
    """May this method call move the constructed object it is made on? A move, or a method
    told a device (``model.setup(device)``); a tensor (or other object) on a device handed to a
    method is data, not a place (``accelerator.gather(loss)``)."""
    return method in _MOVE_METHODS or any(_tells_a_device(arg, value) for arg, value in args)


def _tells_a_device(arg: cst.Arg, value: Value) -> bool:
    """Does this argument name a device (not a value that merely is on one)?"""
    if arg.keyword is not None and arg.keyword.value in _PLACING_KEYWORDS:
        return True
    return value.kind == Kind.DEVICE or value.kind == Kind.STR and isinstance(value.literal, str) and device_from_string(value.literal) is not None
