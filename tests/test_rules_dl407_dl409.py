"""DL407 optimizer-before-move (the orders that leave optimizer state on the CPU and crash at the
first step) and DL409 optimizer-built-before-move (the order PyTorch's docs advise against, which
works with Module.to's default behaviour): one detection, two rules, split by what crashes."""

from __future__ import annotations

from devicelint.analysis import torch_api as api
from devicelint.engine import lint_source
from devicelint.rules import all_rules
from devicelint.selection import Selection

from conftest import lint

BOTH = [rule for rule in all_rules() if rule.default_enabled or rule.code == "DL409"]


def _order_findings(code: str) -> list[tuple[int, str]]:
    """(line, code) of DL407 and DL409 findings with both rules on."""
    return sorted((f.line, f.code) for f in lint_source(code, "example.py", BOTH) if f.code in ("DL407", "DL409"))


def test_state_restored_before_the_move_is_an_error_on_the_optimizer_with_the_load_as_its_note():
    code = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.Adam(model.parameters())\n"
        "opt.load_state_dict(torch.load('opt.pt', map_location='cpu'))\n"
        "model.cuda()\n"
    )
    findings = [f for f in lint_source(code, "example.py", BOTH) if f.code in ("DL407", "DL409")]
    assert [(f.line, f.code, f.severity.value) for f in findings] == [(3, "DL407", "error")]
    assert "its state is restored before the move (line 4)" in findings[0].message
    assert "mixes it with the gradients on the GPU" in findings[0].message
    assert [(note.line, note.message) for note in findings[0].related] == [
        (5, "`model` is moved here"),
        (4, "its state is loaded here, onto the CPU, and stays there after the move"),
    ]


def test_a_load_in_a_helper_is_reported_at_the_load_and_named_on_the_optimizer():
    code = (
        "import torch\ndef resume(opt, path):\n    opt.load_state_dict(torch.load(path, map_location='cpu'))\n"
        "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        "resume(opt, 'opt.pt')\nmodel.cuda()\n"
    )
    assert _order_findings(code) == [(3, "DL407"), (5, "DL407")]
    optimizer = next(f for f in lint(code, rule_code="DL407") if f.line == 5)
    assert "(line 3 in `resume()`)" in optimizer.message


def test_adagrad_makes_its_state_in_its_constructor_however_it_is_imported():
    for imported, called in (
        ("import torch", "torch.optim.Adagrad"),
        ("from torch.optim import Adagrad", "Adagrad"),
        ("from torch import optim", "optim.Adagrad"),
        ("import torch.optim.adagrad as ag", "ag.Adagrad"),
    ):
        code = f"{imported}\nimport torch.nn as nn\nmodel = nn.Linear(2, 2)\nopt = {called}(model.parameters(), lr=0.1)\nmodel.cuda()\n"
        assert _order_findings(code) == [(4, "DL407")], imported
        finding = next(f for f in lint(code, rule_code="DL407") if f.code == "DL407")
        assert "`Adagrad` creates its state in its constructor" in finding.message


def test_only_adagrad_is_listed_as_making_state_eagerly():
    assert {name.rsplit(".", 1)[-1] for name in api.EAGER_STATE_OPTIMIZERS} == {"Adagrad"}


def test_a_lazy_optimizer_built_before_the_move_is_advice_not_an_error():
    for optimizer in ("SGD", "Adam", "AdamW", "RMSprop", "Adadelta"):
        code = f"import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.{optimizer}(model.parameters(), lr=0.1)\nmodel.cuda()\n"
        assert _order_findings(code) == [(3, "DL409")], optimizer
        assert [f for f in lint(code) if f.code in ("DL407", "DL409")] == [], optimizer
        (finding,) = [f for f in lint(code, rule_code="DL409") if f.code == "DL409"]
        assert finding.severity.value == "info"
        assert "that works for an optimizer that makes its state at its first `step()`" in finding.message and "`Module.cuda` docs" in finding.message


def test_state_moved_by_hand_after_the_load_stays_quiet_for_both_rules():
    code = (
        "import torch\ndef resume(opt, path, device):\n    opt.load_state_dict(torch.load(path, map_location='cpu'))\n"
        "    for state in opt.state.values():\n        for k, v in state.items():\n"
        "            if torch.is_tensor(v):\n                state[k] = v.to(device)\n"
        "model = torch.nn.Linear(2, 2)\nopt = torch.optim.Adam(model.parameters())\n"
        "resume(opt, 'opt.pt', 'cuda')\nmodel.cuda()\n"
    )
    assert _order_findings(code) == []


def test_a_load_after_the_move_is_no_error():
    code = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.Adam(model.parameters())\n"
        "model.cuda()\nopt.load_state_dict(torch.load('opt.pt', map_location='cpu'))\n"
    )
    assert _order_findings(code) == [(3, "DL409")]


def test_a_load_reaches_the_optimizer_of_each_branch():
    code = (
        "import torch\ndef build(kind, device, state):\n    model = torch.nn.Linear(2, 2)\n"
        "    if kind == 'sgd':\n        opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    else:\n        opt = torch.optim.Adam(model.parameters())\n"
        "    opt.load_state_dict(state)\n    model.to(device)\n    return model, opt\n"
    )
    assert _order_findings(code) == [(5, "DL407"), (7, "DL407")]


def test_dl409_is_off_by_default_and_on_when_named():
    rules = {rule.code: rule for rule in all_rules()}
    assert rules["DL409"].default_enabled is False and rules["DL409"].severity.value == "info"
    assert rules["DL407"].default_enabled is True and rules["DL407"].severity.value == "error"
    by_default = {rule.code for rule in Selection().rules()}
    assert "DL409" not in by_default and "DL407" in by_default
    assert "DL409" not in {rule.code for rule in Selection(select=("DL4",)).rules()}
    assert "DL409" in {rule.code for rule in Selection(extend_select=("DL409",)).rules()}
    assert "Off by default" in rules["DL409"].render_docs()
