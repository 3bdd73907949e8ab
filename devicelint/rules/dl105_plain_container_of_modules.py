from __future__ import annotations

import re

from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import CriterionInfo
from devicelint.analysis.values import Homogeneous
from devicelint.analysis.names import dotted_name, parameter_names
from devicelint.analysis.values import Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


def _is_module(value: Value) -> bool:
    """A module, or a loss that keeps a class-weight tensor (`CrossEntropyLoss(weight=w)`) not
    known to be on an accelerator already: `model.to(device)` must reach it as it reaches a
    layer. A loss without a weight holds no tensor and may sit in a plain list."""
    if value.kind == Kind.MODULE:
        return True
    if value.kind != Kind.CRITERION or not isinstance(value.info, CriterionInfo):
        return False
    return value.device is None or not value.device.may_be_accelerator


def _missed_by(value: Value) -> str:
    """What else misses what the container holds: losses keep class weights (buffers), not
    parameters."""
    element = value.info.element if value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous) else value
    if element.kind == Kind.CRITERION or value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and all(item.kind == Kind.CRITERION for item in value.info):
        return "their class weights stay where they were made while the model's outputs move"
    return "`parameters()` / `state_dict()` miss them"


def _holds_modules(value: Value) -> bool:
    if value.kind != Kind.CONTAINER:
        return False
    if isinstance(value.info, Homogeneous):
        return _is_module(value.info.element)
    if isinstance(value.info, tuple) and value.info:
        return all(_is_module(item) for item in value.info)
    return False


def _aliases_own_attributes(node: cst.BaseExpression) -> bool:
    """``[self.b1, self.b2]`` / ``{"a": self.a}``: every element is a module already assigned to
    an attribute of ``self``, which registered it; the container only aliases them."""
    if isinstance(node, (cst.List, cst.Tuple)):
        items = [element.value for element in node.elements if not isinstance(element, cst.StarredElement)]
        if len(items) != len(node.elements):
            return False
    elif isinstance(node, cst.Dict):
        items = [element.value for element in node.elements if isinstance(element, cst.DictElement)]
        if len(items) != len(node.elements):
            return False
    else:
        return False
    return bool(items) and all(
        isinstance(item, cst.Attribute) and isinstance(item.value, cst.Name) and item.value.value == "self" for item in items
    )


def _hides_a_handed_module(node: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> bool:
    """``self.org_module = [org_module]``: a one-element list or tuple of a module the
    constructor was handed. The caller built it and keeps it wherever it lives (LoRA-style
    wrappers patch a layer of another model this way); the one-element container is the known
    way to keep a reference to it without registering it a second time, which would put its
    parameters in this module's ``parameters()`` and ``state_dict()`` too."""
    if function is None or not isinstance(node, (cst.List, cst.Tuple)) or len(node.elements) != 1:
        return False
    element = node.elements[0]
    return (
        not isinstance(element, cst.StarredElement)
        and isinstance(element.value, cst.Name)
        and element.value.value != "self"
        and element.value.value in parameter_names(function)
    )


class PlainContainerOfModules(Rule):
    """
    ## What it does
    In an `nn.Module` subclass's `__init__`, flags `self.layers = [nn.Linear(...), ...]` - a
    Python list, tuple, dict or comprehension of modules - and modules appended to a plain list
    attribute (`self.heads.append(nn.Linear(...))`). Losses built with a class weight
    (`nn.CrossEntropyLoss(weight=w)`) count as modules here: the weight is a buffer that
    `.to(device)` moves only when the loss is registered. Losses without a weight hold no
    tensor, and a plain list of them is left alone, as is a weighted loss whose weight was
    already made on an accelerator.

    ## Why is this bad?
    Only `nn.Module` attributes (and `nn.ModuleList` / `nn.ModuleDict`) register submodules.
    The modules in a plain list are invisible: `model.to(device)` leaves them on the CPU,
    `parameters()` misses them (the optimizer never trains them) and `state_dict()` does not
    save them.

    ## Example
    ```python
    self.blocks = [nn.Linear(64, 64) for _ in range(4)]
    ```

    ## Use instead
    ```python
    self.blocks = nn.ModuleList([nn.Linear(64, 64) for _ in range(4)])
    ```
    The fix wraps a list, tuple or comprehension in `nn.ModuleList(...)` and a dict in
    `nn.ModuleDict(...)`, spelling `nn` as the file imports it. It is safe: indexing, iterating
    and `len` work as before, and the submodules are now registered, which is the point.
    """

    code = "DL105"
    name = "plain-container-of-modules"
    severity = Severity.ERROR
    summary = "Submodules kept in a plain list/dict attribute are not registered: not moved, trained or saved."
    fix_safety = "safe"
    valid = (
        # losses without a weight hold no tensor
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.losses = [torch.nn.CrossEntropyLoss(), torch.nn.MSELoss()]\n"
        "        self.weighted = [torch.nn.CrossEntropyLoss(weight=None)]\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.blocks = nn.ModuleList([nn.Linear(2, 2)])\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.sizes = [64, 128]\n",
        "import torch.nn as nn\nclass Holder:\n    def __init__(self):\n        self.models = [nn.Linear(2, 2)]\n",
        # only aliases submodules registered as attributes (PyTorch-GAN's ESRGAN dense block)
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.b1 = nn.Linear(2, 2)\n        self.b2 = nn.Linear(2, 2)\n        self.blocks = [self.b1, self.b2]\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = []\n        self.layers.append(nn.Linear(2, 2))\n        self.layers = nn.ModuleList(self.layers)\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Linear(2, 2), nn.ReLU()]\n        for i, layer in enumerate(self.layers):\n"
        "            self.add_module(str(i), layer)\n",
        # a layer of another model that this wrapper patches, kept unregistered on purpose
        "import torch.nn as nn\nclass LoRA(nn.Module):\n    def __init__(self, org_module: nn.Module):\n        super().__init__()\n"
        "        self.org_module = [org_module]\n",
    )
    invalid = (
        # a weighted loss per output position (pytorch-lightning issue 2984)
        Example(
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self, weights):\n        super().__init__()\n"
            "        self.losses = []  # expect: DL105\n        for w in weights:\n"
            "            self.losses.append(torch.nn.CrossEntropyLoss(weight=w))\n"
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.blocks = [nn.Linear(2, 2) for _ in range(3)]  # expect: DL105\n",
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])  # expect: DL105\n",
        ),
        Example(
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.heads = {'a': torch.nn.Linear(2, 2), 'b': torch.nn.Linear(2, 3)}  # expect: DL105\n",
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.heads = torch.nn.ModuleDict({'a': torch.nn.Linear(2, 2), 'b': torch.nn.Linear(2, 3)})  # expect: DL105\n",
        ),
        Example(
            "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = []  # expect: DL105\n        for i in range(3):\n            self.layers.append(nn.Linear(4, 4))\n",
            "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.ModuleList()  # expect: DL105\n        for i in range(3):\n            self.layers.append(nn.Linear(4, 4))\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._candidates: list[tuple[cst.FunctionDef, str, cst.CSTNode, str, object]] = []
        #: `self.x = []` in a module's `__init__`, per (function, attribute): where an appended list is made
        self._empty_lists: dict[tuple[int, str], cst.List] = {}

    def _registered_later(self, init: cst.FunctionDef, attribute: str) -> bool:
        """`__init__` wraps the list afterwards (`self.x = nn.ModuleList(self.x)`) or registers
        its items itself (`self.add_module(str(i), layer)`)."""
        text = self.ctx.module.code_for_node(init)
        if "add_module(" in text or "register_module(" in text:
            return True
        return len(re.findall(rf"\bself\.{re.escape(attribute)}\s*=[^=]", text)) > 1

    def finish(self) -> None:
        reported: set[tuple[int, str]] = set()
        for init, attribute, node, message, fix in self._candidates:
            key = (id(init), attribute)
            if key in reported or self._registered_later(init, attribute):
                continue
            reported.add(key)  # one finding per attribute, at its first module
            self.ctx.report(node, message, fix=fix)  # type: ignore[arg-type]

    def _in_module_init(self) -> bool:
        context = self.ctx.current_function
        return (
            context.node is not None
            and context.node.name.value == "__init__"
            and context.class_info is not None
            and context.class_info.is_module
        )

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        if not self._in_module_init() or not isinstance(target, cst.Attribute):
            return
        if isinstance(value_node, cst.List) and not value_node.elements:
            name = dotted_name(target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                # `self.layers = []`, filled by append below: the line to change
                self._empty_lists[(id(self.ctx.current_function.node), name[5:])] = value_node
            return
        if not _holds_modules(value) or _aliases_own_attributes(value_node):
            return
        if _hides_a_handed_module(value_node, self.ctx.current_function.node):
            return
        name = dotted_name(target)
        if name is None or not name.startswith("self."):
            return
        container = "ModuleDict" if isinstance(value_node, (cst.Dict, cst.DictComp)) else "ModuleList"
        nn = self.ctx.torch_nn_spelling({})
        fix = None
        if nn is not None and isinstance(value_node, (cst.List, cst.Tuple, cst.ListComp, cst.Dict, cst.DictComp)):
            inner = self.ctx.module.code_for_node(value_node)
            fix = FixSpec(f"Wrap it in `{nn}.{container}`", (NodeEdit(value_node, "replace", f"{nn}.{container}({inner})"),))
        message = (
            f"`{name}` holds modules in a plain Python container: they are not registered, so "
            f"`.to(device)` does not move them and {_missed_by(value)}; use `nn.{container}`"
        )
        self._candidates.append((self.ctx.current_function.node, name[5:], value_node, message, fix))

    def on_call(self, event: CallEvent) -> None:
        if event.method not in ("append", "extend", "insert") or not self._in_module_init():
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        owner = dotted_name(func.value)
        if owner is None or not owner.startswith("self.") or event.receiver is None or event.receiver.kind != Kind.CONTAINER:
            return
        added = [value for _, value in event.args]
        appended = event.args[-1][0].value if event.args else None
        if appended is not None and event.method != "extend" and _aliases_own_attributes(cst.List([cst.Element(appended)])):
            return  # `self.blocks.append(self.b1)`: b1 is registered as an attribute already
        if added and (_is_module(added[-1]) or _holds_modules(added[-1])) and owner.count(".") == 1:
            message = (
                f"`{owner}` is a plain list of modules: modules appended to it are not registered, so "
                f"`.to(device)` does not move them and {_missed_by(added[-1])}; make it an `nn.ModuleList()`"
            )
            init = self.ctx.current_function.node
            created = self._empty_lists.get((id(init), owner[5:]))
            nn = self.ctx.torch_nn_spelling({})
            if created is not None:
                fix = FixSpec(f"Make it `{nn}.ModuleList()`", (NodeEdit(created, "replace", f"{nn}.ModuleList()"),)) if nn else None
                self._candidates.append((init, owner[5:], created, message, fix))
            else:
                self._candidates.append((init, owner[5:], event.node, message, None))
