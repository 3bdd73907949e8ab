from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import CollatedMapping, Kind, Role, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: ``isinstance(x, (list, tuple))``: a test of a name against a Python container type
_CONTAINER_TEST = re.compile(r"isinstance\(\s*\w+\s*,\s*\(?\s*(?:tuple|list|dict|set)\b")

#: the moves a tensor (or module) has and a Python list, tuple or dict lacks
_MOVES = frozenset({"to", "cuda", "cpu", "xpu", "mps", "pin_memory"})


class ToOnContainer(Rule):
    """
    ## What it does
    Flags `.to(...)`, `.cuda()`, `.cpu()` (and `.pin_memory()`, `.xpu()`, `.mps()`) called on a
    value the analysis knows is a Python list, tuple, dict or set rather than a tensor:

    * a display or comprehension (`[x, y]`, `{"ids": ids}`), `list(...)` / `tuple(...)`, a list
      built by `append`, the rest of a starred unpacking;
    * a DataLoader batch that default collation made a list or dict: the loader has no
      `collate_fn` and its dataset is a `TensorDataset` (its items are tuples), a torchvision
      dataset (`(image, target)` tuples) or a `Dataset` class of the file whose `__getitem__`
      returns a tuple, list or dict display on every path. Default collation turns a tuple
      item into a *list* of batched tensors and a dict item into a dict; a `TensorDataset`
      batch is a list even for one tensor. Inside a tuple item too: where every return holds a
      tuple or list display at one position (`return (left, right), label`), that part of the
      batch (`for pair, label in loader`, `batch[0]`) is a list;
    * a batch of a DataLoader whose `collate_fn=` is a function of the file that returns a
      tuple, list or dict: the batch is what it returns, so a part of it that is a list of
      tensors (`return images, [torch.as_tensor(b) for b in boxes]`) is a list;
    * what a function of the file returns when one of its `return`s gives a tuple or list
      display and another a tensor (`init_hidden()` returning `(h, c)` for an LSTM and `h`
      for a GRU): on the tuple's path the move fails. Left alone when the calling function
      also indexes the name (`hidden[0].cuda()` on another branch handles the tuple).

    * every entry of a dict batch in turn (`for key, value in batch.items(): value.to(d)`,
      `{k: v.to(d) for k, v in batch.items()}`) where the dataset class's `__getitem__` puts a
      Python string under some key - a literal, an f-string, `str(...)`, a string method's
      result, `path.split("/")[0]` - in the dict it returns (a display, or a name bound only to
      dicts and filled by `item["key"] = ...`): default collation makes that entry a list of
      strings. Left alone when the function names such a key (it skips or handles that
      entry) or tests the entry (`isinstance`, `torch.is_tensor`). LeRobot's `LeRobotDataset`
      (and `MultiLeRobotDataset`) is such a dataset: since its v2.0 format each item also holds
      the task's text under "task".

    * a name an isinstance test narrows to a Python container: after `if not isinstance(x,
      tuple): return ...` (or `raise`) at the top of the function, what follows runs only for
      tuples, and inside `if isinstance(x, (list, tuple)):` `x` is one; there `x.device` handed
      to a call (`.to(x.device)`, `device=x.device`) and the moves of `x` itself raise
      AttributeError (pytorch-semseg's multi-scale loss). Only tests whose every type is
      `tuple`, `list`, `dict` or `set`, and only names the function never re-binds.

    A value of unknown kind (a parameter, a batch from a loader whose dataset returns a tensor
    or is not known) is left alone, and so is a name the function checks with `isinstance`,
    `hasattr` or `type(...)` - such helpers route containers elsewhere (but see the narrowing
    above: a read the test itself leaves to containers is flagged). There is no fix: the
    move belongs on each element, and which elements are tensors is the program's to say.

    ## Why is this bad?
    Python's containers have no `to`/`cuda` method: the call raises
    `AttributeError: 'list' object has no attribute 'to'` at the first batch.

    ## Example
    ```python
    loader = DataLoader(TensorDataset(features, labels), batch_size=32)
    for batch in loader:
        batch = batch.to(device)
    ```

    ## Use instead
    ```python
    for features, labels in loader:
        features, labels = features.to(device), labels.to(device)
    ```
    """

    code = "DL310"
    name = "to-on-container"
    severity = Severity.ERROR
    summary = "`.to()` / `.cuda()` called on a list, tuple or dict (such as a collated batch): AttributeError."
    valid = (
        # the same wrapper around a loader of single tensors: each batch is a tensor
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "class DeviceLoader:\n    def __init__(self, loader, device):\n"
        "        self.loader, self.device = loader, device\n    def __iter__(self):\n"
        "        for batch in self.loader:\n            yield batch.to(self.device)\n"
        "def train(loader, device):\n    for x in DeviceLoader(loader, device):\n        print(x.sum())\n"
        "train(DataLoader(torch.randn(8, 3), batch_size=4), 'cuda')\n",
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8)), batch_size=4)\n"
        "for x, y in loader:\n    x, y = x.to('cuda'), y.to('cuda')\n",
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)\n"
        "for batch in loader:\n    batch = [t.to('cuda') for t in batch]\n",
        # the dataset yields one tensor: the batch is a tensor
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Frames(Dataset):\n    def __getitem__(self, i):\n        return torch.zeros(3)\n    def __len__(self):\n        return 4\n"
        "for batch in DataLoader(Frames(), batch_size=2):\n    batch = batch.to('cuda')\n",
        # a collate_fn decides what a batch is
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "def stack(items):\n    return torch.stack([x for x, in items])\n"
        "for batch in DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4, collate_fn=stack):\n    batch = batch.to('cuda')\n",
        # the helper checks what it was given
        "import torch\ndef to_device(data, device):\n    if isinstance(data, (list, tuple)):\n"
        "        return [to_device(d, device) for d in data]\n    return data.to(device)\n"
        "moved = to_device([torch.zeros(2), torch.ones(2)], 'cuda')\n",
        "def move(batch, device):\n    return batch.to(device)\n",
        # the loop skips the text entry by its key, or tests what each entry is
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Frames(Dataset):\n    def __getitem__(self, i):\n        item = {}\n        item['x'] = torch.zeros(3)\n"
        "        item['name'] = self.paths[i].split('/')[-1]\n        return item\n    def __len__(self):\n        return 4\n"
        "for batch in DataLoader(Frames(), batch_size=2):\n    for k, v in batch.items():\n"
        "        if k != 'name':\n            batch[k] = v.to('cuda')\n",
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Frames(Dataset):\n    def __getitem__(self, i):\n        item = {}\n        item['x'] = torch.zeros(3)\n"
        "        item['name'] = self.paths[i].split('/')[-1]\n        return item\n    def __len__(self):\n        return 4\n"
        "for batch in DataLoader(Frames(), batch_size=2):\n"
        "    batch = {k: v.to('cuda') if torch.is_tensor(v) else v for k, v in batch.items()}\n",
        # the file's collate_fn returns tensors: each part of the batch can be moved
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def collate(items):\n    images = torch.stack([image for image, _ in items])\n"
        "    boxes = torch.cat([torch.as_tensor(box) for _, box in items])\n    return images, boxes\n"
        "def train(dataset):\n    for images, boxes in DataLoader(dataset, batch_size=4, collate_fn=collate):\n"
        "        images, boxes = images.cuda(), boxes.cuda()\n",
        # LeRobot's dataset items hold the task's text: the loop keeps it as it is
        "import torch\nfrom lerobot.datasets.lerobot_dataset import LeRobotDataset\n"
        "loader = torch.utils.data.DataLoader(LeRobotDataset('lerobot/pusht'), batch_size=8)\n"
        "for batch in loader:\n"
        "    batch = {k: v.to('cuda') if isinstance(v, torch.Tensor) else v for k, v in batch.items()}\n",
    )
    invalid = (
        # a wrapper that moves each batch of the loader it was built with: `__iter__` runs on
        # what the construction kept, a loader whose dataset yields pairs (ezflow's DeviceDataLoader)
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "class DeviceLoader:\n    def __init__(self, loader, device):\n"
            "        self.loader, self.device = loader, device\n    def __iter__(self):\n"
            "        for batch in self.loader:\n            yield batch.to(self.device)  # expect: DL310\n"
            "def train(loader, device):\n    for x, y in DeviceLoader(loader, device):\n        print(x.sum() + y.sum())\n"
            "train(DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8)), batch_size=4), 'cuda')\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8)), batch_size=4)\n"
            "for batch in loader:\n    batch = batch.to('cuda')  # expect: DL310\n"
        ),
        Example(
            "import torch\nimages = [torch.zeros(3, 8, 8) for _ in range(4)]\nimages = images.cuda()  # expect: DL310\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
            "class Pairs(Dataset):\n    def __getitem__(self, i):\n        return {'x': torch.zeros(3), 'y': i}\n"
            "    def __len__(self):\n        return 4\n"
            "for step, batch in enumerate(DataLoader(Pairs(), batch_size=2)):\n    batch = batch.to('cuda')  # expect: DL310\n"
        ),
    )

    invalid = invalid + (
        # the dataset puts a file name next to the tensors: collation makes it a list of strings
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
            "class Frames(Dataset):\n    def __getitem__(self, i):\n        item = {}\n        item['x'] = torch.zeros(3)\n"
            "        item['name'] = self.paths[i].split('/')[-1]\n        return item\n    def __len__(self):\n        return 4\n"
            "for batch in DataLoader(Frames(), batch_size=2):\n"
            "    batch = {k: v.to('cuda') for k, v in batch.items()}  # expect: DL310\n"
        ),
        # the file's collate_fn returns the boxes as a list of per-image tensors
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "def collate(items):\n    images = torch.stack([image for image, _ in items])\n"
            "    boxes = [torch.as_tensor(box) for _, box in items]\n    return images, boxes\n"
            "def train(dataset):\n    for images, boxes in DataLoader(dataset, batch_size=4, collate_fn=collate):\n"
            "        images, boxes = images.cuda(), boxes.cuda()  # expect: DL310\n"
        ),
        # LeRobot's datasets (v2.0 format on) put the task's text under "task" in every item
        Example(
            "import torch\nfrom lerobot.common.datasets.lerobot_dataset import LeRobotDataset\n"
            "loader = torch.utils.data.DataLoader(LeRobotDataset('lerobot/pusht'), batch_size=8)\n"
            "for batch in loader:\n"
            "    batch = {k: v.to('cuda', non_blocking=True) for k, v in batch.items()}  # expect: DL310\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per function node: the names its type checks mention
        self._checked: dict[int, frozenset[str]] = {}
        #: the module's top-level statements other than definitions, once asked for
        self._script: Optional[str] = None
        #: per function node: its isinstance guards on containers (see `_container_guards`)
        self._guards: dict[int, tuple[tuple[str, str, cst.If, bool], ...]] = {}
        #: does the file test anything against a container type at all (asked once)
        self._tests_containers: Optional[bool] = None

    def on_call(self, event: CallEvent) -> None:
        if self._narrowed_device_read(event):
            return
        if event.method not in _MOVES or event.receiver is None or not isinstance(event.node.func, cst.Attribute):
            return
        what = _container_kind(event.receiver)
        if what is None:
            return
        receiver_node = event.node.func.value
        name = dotted_name(receiver_node)
        if name is not None and name.split(".")[0] in self._type_checked_names():
            return
        if event.receiver.role is Role.SEQUENCE_ON_SOME_PATHS and (name is None or self._indexed_here(name)):
            return  # the function also takes it apart (`hidden[0].cuda()` on another branch): it handles both shapes
        shown = self.ctx.source_of(receiver_node)
        if event.receiver.role is Role.DICT_BATCH_ENTRY_WITH_TEXT:
            self._report_text_entry(event, shown)
            return
        python_type = _python_type(receiver_node, event.receiver)
        error = f"AttributeError: '{python_type}' object has no attribute '{event.method}'" if python_type else "AttributeError"
        self.ctx.report(
            event.node,
            f"`{shown}` is {what}, not a tensor: `.{event.method}()` raises {error}; move each tensor in it instead",
        )

    def _narrowed_device_read(self, event: CallEvent) -> bool:
        """``x.device`` handed to a call (``.to(x.device)``, ``device=x.device``), or a move of
        ``x`` itself, where an isinstance test says ``x`` is a Python container: after ``if not
        isinstance(x, tuple): return ...`` at the top of the function (what follows runs only
        for tuples), or inside ``if isinstance(x, (list, tuple)):``. Containers have neither
        ``.device`` nor the moves: AttributeError."""
        function = self.ctx.current_function.node
        if function is None:
            return False
        if self._tests_containers is None:
            self._tests_containers = _CONTAINER_TEST.search(self.ctx.source) is not None
        if not self._tests_containers:
            return False  # most files: no function to look at
        guards = self._container_guards(function)
        if not guards:
            return False
        reads: list[tuple[cst.BaseExpression, str, str]] = []
        for arg, _ in event.args:
            value = arg.value
            if isinstance(value, cst.Attribute) and value.attr.value == "device" and isinstance(value.value, cst.Name):
                reads.append((value, value.value.value, "device"))
        func = event.node.func
        if event.method in _MOVES and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            reads.append((func, func.value.value, event.method or ""))
        for read, name, attribute in reads:
            for guarded, python_type, guard, negated in guards:
                if guarded != name or not self._narrows(function, guard, negated, event.node):
                    continue
                how = (
                    f"the `if not isinstance({name}, ...)` at line {self.ctx.line(guard)} leaves the function for "
                    f"everything else" if negated else f"inside `if isinstance({name}, ...)` at line {self.ctx.line(guard)}"
                )
                self.ctx.report(
                    read,
                    f"`{name}` is a {python_type} here ({how}), not a tensor: `{self.ctx.source_of(read)}` raises "
                    f"AttributeError: '{python_type}' object has no attribute '{attribute}'; take the device from a "
                    f"tensor in it (`{name}[0].device`) or from another argument",
                    related=((guard, "the isinstance test"),),
                )
                return True
        return False

    def _container_guards(self, function: cst.FunctionDef) -> tuple[tuple[str, str, cst.If, bool], ...]:
        """The function's `if [not] isinstance(name, <tuple|list|dict|set types>)` tests, as
        (name, first type, the if, negated); a negated one only at the top of the body, with
        no else and a body that ends in `return` or `raise`. Names the function assigns to are
        left out (what they hold after the test is not what was tested)."""
        key = id(function)
        if key in self._guards:
            return self._guards[key]
        found: list[tuple[str, str, cst.If, bool]] = []
        text = self.ctx.analyzer.body_text(function)
        if _CONTAINER_TEST.search(text):
            top = set(id(statement) for statement in function.body.body) if isinstance(function.body, cst.IndentedBlock) else set()
            bound: Optional[set[str]] = None  # walked for only where a test is found
            for node in _if_statements(function.body):
                test, negated = node.test, False
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, negated = test.expression, True
                checked = _container_isinstance(test)
                if checked is None:
                    continue
                name, python_type = checked
                if bound is None:
                    bound = _bound_names(function.body)
                if name in bound:
                    continue  # re-bound somewhere in the function
                if negated and (id(node) not in top or node.orelse is not None or not _exits(node.body)):
                    continue
                found.append((name, python_type, node, negated))
        self._guards[key] = tuple(found)
        return self._guards[key]

    @staticmethod
    def _narrows(function: cst.FunctionDef, guard: cst.If, negated: bool, call: cst.Call) -> bool:
        if not negated:
            return any(node is call for node in _walk(guard.body))
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
        after = False
        for statement in body:
            if statement is guard:
                after = True
            elif after and any(node is call for node in _walk(statement)):
                return True
        return False

    def _report_text_entry(self, event: CallEvent, shown: str) -> None:
        """``for key, value in batch.items(): value.to(d)`` over a dict batch whose dataset puts
        strings under some keys - unless the function names one of those keys (it handles or
        skips that entry: ``if key == "date": continue``)."""
        info = event.receiver.info  # type: ignore[union-attr]
        assert isinstance(info, CollatedMapping)
        node = self.ctx.current_function.node
        text = self.ctx.analyzer.body_text(node) if node is not None else self._script_text()
        if any(f'"{key}"' in text or f"'{key}'" in text for key in info.text_keys):
            return
        keys = ", ".join(f'"{key}"' for key in info.text_keys)
        self.ctx.report(
            event.node,
            f"`{shown}` takes every entry of a dict batch in turn, and the dataset's items hold strings under "
            f"{keys}: default collation makes that entry a list of strings, so `.{event.method}()` raises "
            f"AttributeError: 'list' object has no attribute '{event.method}'; move only the tensors "
            f"(skip {keys}, or test `isinstance({shown}, torch.Tensor)`)",
        )

    def _script_text(self) -> str:
        """The module's own statements, without its functions and classes (the dataset class
        that names the keys is not the loop that handles them)."""
        if self._script is None:
            self._script = "".join(
                self.ctx.module.code_for_node(statement)
                for statement in self.ctx.module.body
                if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))
            )
        return self._script

    def _indexed_here(self, name: str) -> bool:
        node = self.ctx.current_function.node
        text = self.ctx.analyzer.body_text(node) if node is not None else self.ctx.source
        return re.search(rf"(?<![\w.]){re.escape(name)}\s*\[", text) is not None

    def _type_checked_names(self) -> frozenset[str]:
        """Names the current function (or the script's own statements) tests with isinstance /
        hasattr / type(...) / torch.is_tensor."""
        node = self.ctx.current_function.node
        key = id(node) if node is not None else 0
        if key not in self._checked:
            text = self.ctx.analyzer.body_text(node) if node is not None else self._script_text()
            self._checked[key] = frozenset(_TYPE_CHECK.findall(text))
        return self._checked[key]


_TYPE_CHECK = re.compile(r"\b(?:isinstance|hasattr|type|is_tensor)\(\s*([A-Za-z_]\w*)")


def _container_kind(value: Value) -> str | None:
    if value.kind == Kind.CONTAINER:
        return "a Python container (list, tuple, dict or set)"
    if value.kind == Kind.BATCH and value.role is Role.SEQUENCE_BATCH:
        return "a batch that default collation made a list (the dataset yields tuples)"
    if value.kind == Kind.BATCH and value.role is Role.MAPPING_BATCH:
        return "a batch that default collation made a dict (the dataset yields dicts)"
    if value.kind == Kind.UNKNOWN and value.role is Role.SEQUENCE_ON_SOME_PATHS:
        return "a tuple or list on some paths (the function that made it returns one there)"
    if value.role is Role.DICT_BATCH_ENTRY_WITH_TEXT and isinstance(value.info, CollatedMapping):
        return "an entry of a dict batch whose dataset holds strings under some keys"
    return None


def _python_type(node: cst.BaseExpression, value: Value) -> str | None:
    """The container's Python type where the code or the collation says which."""
    if value.role is Role.MAPPING_BATCH or isinstance(node, (cst.Dict, cst.DictComp)):
        return "dict"
    if value.role is Role.SEQUENCE_BATCH or isinstance(node, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(node, cst.Tuple):
        return "tuple"
    return None


_CONTAINER_TYPES = {"tuple": "tuple", "list": "list", "dict": "dict", "set": "set"}


def _container_isinstance(test: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """``isinstance(name, tuple)`` / ``isinstance(name, (list, tuple))`` where every type
    named is a Python container: (name, the first type)."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"):
        return None
    if len(test.args) != 2 or not isinstance(test.args[0].value, cst.Name):
        return None
    types = test.args[1].value
    names = [element.value for element in types.elements] if isinstance(types, cst.Tuple) else [types]
    if not names or not all(isinstance(name, cst.Name) and name.value in _CONTAINER_TYPES for name in names):
        return None
    return test.args[0].value.value, _CONTAINER_TYPES[names[0].value]  # type: ignore[union-attr]


def _exits(block: cst.BaseSuite) -> bool:
    """Does the block end in ``return`` or ``raise``?"""
    if not isinstance(block, cst.IndentedBlock) or not block.body:
        return isinstance(block, cst.SimpleStatementSuite) and isinstance(block.body[-1], (cst.Return, cst.Raise))
    last = block.body[-1]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise))


def _if_statements(block: cst.BaseSuite) -> Iterator[cst.If]:
    """The ``if`` statements of a body (``elif`` ones included), through its compound
    statements but not into the functions and classes it defines: statements only, no
    expression is looked into."""
    if not isinstance(block, cst.IndentedBlock):
        return
    for statement in block.body:
        if isinstance(statement, cst.If):
            branch: Optional[cst.If] = statement
            while branch is not None:
                yield branch
                yield from _if_statements(branch.body)
                orelse = branch.orelse
                branch = orelse if isinstance(orelse, cst.If) else None
                if isinstance(orelse, cst.Else):
                    yield from _if_statements(orelse.body)
        elif isinstance(statement, (cst.For, cst.While)):
            yield from _if_statements(statement.body)
            if statement.orelse is not None:
                yield from _if_statements(statement.orelse.body)
        elif isinstance(statement, cst.With):
            yield from _if_statements(statement.body)
        elif isinstance(statement, cst.Try):
            yield from _if_statements(statement.body)
            for handler in statement.handlers:
                yield from _if_statements(handler.body)
            if statement.orelse is not None:
                yield from _if_statements(statement.orelse.body)
            if statement.finalbody is not None:
                yield from _if_statements(statement.finalbody.body)


def _walk(node: cst.CSTNode):  # type: ignore[no-untyped-def]
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) or current is node:
            stack.extend(walk.children(current))  # libcst's own `.children` rebuilds the node


def _bound_names(block: cst.CSTNode) -> set[str]:
    """Names a block assigns to (``=``, ``+=``, ``:=``, ``for`` and ``with ... as`` targets)."""
    targets: list[cst.BaseExpression] = []
    for node in _walk(block):
        if isinstance(node, cst.Assign):
            targets.extend(target.target for target in node.targets)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            targets.append(node.target)
        elif isinstance(node, cst.AsName):
            targets.append(node.name)  # type: ignore[arg-type]
    names: set[str] = set()
    for target in targets:
        for node in _walk(target):
            if isinstance(node, cst.Name):
                names.add(node.value)
    return names
