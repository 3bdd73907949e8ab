"""DL201 on a model the program rebuilds on the CPU in place of a moved one (to reload its
weights) and then calls on inputs on the accelerator: reported where it is rebuilt, once, with
the call as a related location; a model never moved anywhere, or moved to the wrong device,
is still reported at the call."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 3
    "class Net(nn.Module):\n"  # 4
    "    def __init__(self):\n"  # 5
    "        super().__init__()\n"  # 6
    "        self.fc = nn.Linear(4, 2)\n"  # 7
    "    def forward(self, x):\n"  # 8
    "        return self.fc(x)\n"  # 9
    "def test(model, x):\n"  # 10
    "    return model(x.to(device))\n"  # 11
)


def _dl201(code):
    return [f for f in lint(code, rule_code="DL201") if f.code == "DL201"]


def test_rebuilt_model_is_reported_where_it_is_rebuilt_with_the_call_as_related_location():
    code = _HEAD + "model = Net().to(device)\nmodel = Net()\nmodel.load_state_dict(torch.load('best.pt', map_location=device))\nprint(test(model, torch.randn(2, 4)))\n"
    findings = _dl201(code)
    assert [(f.line, f.column) for f in findings] == [(13, 9)]
    assert "rebuilt here on the CPU" in findings[0].message and "moved there at line 12" in findings[0].message
    assert "at line 11 it is called on `x.to(device)`" in findings[0].message
    assert [r.line for r in findings[0].related] == [11]


def test_rebuilt_model_met_by_several_calls_gives_one_finding():
    code = _HEAD + (
        "model = Net().to(device)\nmodel = Net()\n"
        "a = test(model, torch.randn(2, 4))\nb = model(torch.randn(2, 4, device=device))\n"
    )
    assert [f.line for f in _dl201(code)] == [13]


def test_model_never_moved_anywhere_is_reported_at_the_call():
    code = _HEAD + "model = Net()\nprint(test(model, torch.randn(2, 4)))\n"
    assert [f.line for f in _dl201(code)] == [11]


def test_rebuilt_model_that_a_branch_moves_is_not_reported_at_the_rebuild():
    code = _HEAD + (
        "model = Net().to(device)\nmodel = Net()\nif torch.cuda.is_available():\n    model = model.cuda()\n"
        "print(model(torch.randn(2, 4, device=device)))\n"
    )
    assert [f.line for f in _dl201(code)] == []


def test_closure_returned_by_a_helper_sees_the_arguments_of_its_calls():
    # the model reaches the closure through the helper that makes it, the inputs through its calls
    code = _HEAD + (
        "def make_validate(model):\n"  # 12
        "    def validate(x):\n"  # 13
        "        return model(x)\n"  # 14
        "    return validate\n"  # 15
        "model = Net().to(device)\nmodel = Net()\n"  # 16-17
        "validate = make_validate(model)\nprint(validate(torch.randn(2, 4, device=device)))\n"
    )
    findings = _dl201(code)
    assert [f.line for f in findings] == [17]
    assert [r.line for r in findings[0].related] == [14]


def test_closure_calls_the_model_as_moved_after_its_definition():
    # timm's tests/test_layers.py: `_run` is defined before `m.to(...)` and called after it
    code = _HEAD + (
        "def run_grad():\n"  # 12
        "    x = torch.rand(10, 4)\n"
        "    m = Net()\n"
        "    def _run(x):\n"
        "        return m(x)\n"
        "    x = x.to(device=device)\n"
        "    m.to(device=device)\n"
        "    return _run(x)\n"
    )
    assert _dl201(code) == []
