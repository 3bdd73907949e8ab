"""Properties and typed sequences (session 15): `self.x` of a property runs its getter and
`self.x = v` its setter, nothing is stored under the name; a parameter annotated
`Optional[torch.Tensor]`, `List[torch.Tensor]` or `Tuple[torch.Tensor, ...]` holds tensors."""

from __future__ import annotations

from conftest import line_codes as codes

MODEL = (
    "import torch\nfrom torch import nn\n"
    "class Regressor(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.weight = nn.Parameter(torch.zeros(2))\n        self._inputs = None\n"
    "    @property\n    def device(self):\n        return next(self.parameters()).device\n"
    "    @property\n    def inputs(self):\n        return self._inputs\n"
    "    @inputs.setter\n    def inputs(self, value):\n        self._inputs = {stored}\n"
    "    def fit(self, x):\n        self.inputs = x\n        return self.inputs * self.weight\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "Regressor().to(device).fit(torch.rand(3, 2))\n"
)


def test_a_setter_that_moves_what_it_is_given_leaves_no_host_value_behind_the_name():
    # the setter puts the inputs where the model is; the getter hands that back
    assert codes(MODEL.format(stored="value.to(self.device)")) == []


def test_a_setter_that_keeps_the_host_value_is_what_the_getter_returns():
    # the same class storing the value as given: the host inputs meet the parameter (line 19)
    assert codes(MODEL.format(stored="value")) == [(19, "DL201")]


def test_a_discarded_move_of_the_elements_of_a_typed_tuple_is_reported():
    code = (
        "from typing import List, Optional, Tuple\nimport torch\n"
        "def place(inputs: Optional[Tuple[torch.Tensor, ...]], device):\n    for x in inputs:\n        x.to(device)\n"
        "def place_all(inputs: List[torch.Tensor], device):\n    for x in inputs:\n        x.to(device)\n"
        "def place_one(x: Optional[torch.Tensor], device):\n    x.to(device)\n"
    )
    assert codes(code) == [(5, "DL101"), (8, "DL101"), (10, "DL101")]


def test_a_sequence_of_other_things_is_not_taken_for_tensors():
    code = (
        "from typing import List, Tuple\nimport torch\n"
        "def place(models: List[torch.nn.Module], device):\n    for m in models:\n        m.to(device)\n"
        "def keys(names: Tuple[str, ...], device):\n    for n in names:\n        n.to(device)\n"
    )
    assert codes(code) == []


GETTER_AND_SETTER = (
    "from typing import Optional, Tuple\nimport torch\nfrom torch import nn\n"
    "class Mixin(nn.Module):\n"
    "{declaration}"
    "    @property\n    def device(self):\n        return next(self.parameters()).device\n"
    "    @property\n    def inputs(self):\n        for x in self._inputs:\n            x.to(self.device)\n        return self._inputs\n"
    "    @inputs.setter\n    def inputs(self, value):\n        self._inputs = value\n"
)


def test_a_property_getter_runs_its_own_analysis_beside_its_setter():
    # the setter is defined under the getter's name; the getter's body is still analysed, and
    # the class body's annotation says what `self._inputs` holds: the discarded move (line 12)
    declared = GETTER_AND_SETTER.format(declaration="    _inputs: Optional[Tuple[torch.Tensor, ...]]\n")
    assert codes(declared) == [(12, "DL101")]


def test_without_a_declaration_the_elements_stay_unknown():
    # nothing says what `self._inputs` holds: `x.to(...)` may be a module's, which moves in place
    assert codes(GETTER_AND_SETTER.format(declaration="")) == []
