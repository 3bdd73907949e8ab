"""DL308 autocast-device-mismatch and DL408 sync-in-loop: the fix, the decorator form, the
periodic-logging guard and the off-by-default selection, beyond the embedded examples."""

from __future__ import annotations

import libcst as cst

from devicelint.fixer import apply_fixes
from devicelint.rules import all_rules
from devicelint.selection import Selection

from conftest import lint

_CHOSEN = "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2).to(device)\n"


def _lines(code, rule_code):
    return [(f.line, f.code) for f in lint(code, rule_code=rule_code) if f.code == rule_code]


def test_cuda_amp_autocast_with_keywords_becomes_torch_autocast_of_the_device_type():
    code = _CHOSEN + "with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n    out = model(torch.randn(3, 4, device=device))\n"
    findings = lint(code, rule_code="DL308")
    assert [(f.line, f.code) for f in findings] == [(5, "DL308")]
    assert findings[0].fix is not None and not findings[0].fix.safe
    fixed, applied = apply_fixes(code, findings, unsafe=True)
    assert applied == 1
    assert "with torch.autocast(device.type, dtype=torch.bfloat16):\n" in fixed
    cst.parse_module(fixed)
    assert _lines(fixed, "DL308") == []


def test_positional_cuda_amp_arguments_get_no_fix():
    # torch.cuda.amp.autocast(enabled, dtype) and torch.autocast(device_type, dtype, enabled) differ
    code = _CHOSEN + "with torch.cuda.amp.autocast(True):\n    out = model(torch.randn(3, 4, device=device))\n"
    findings = lint(code, rule_code="DL308")
    assert [(f.line, f.fix) for f in findings] == [(5, None)]


def test_a_string_device_gets_no_fix():
    # "cuda" if ... else "cpu" is a str: `device.type` would raise AttributeError
    code = (
        "import torch\nfrom torch import nn\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = nn.Linear(4, 2).to(device)\nwith torch.autocast('cuda'):\n    out = model(torch.randn(3, 4, device=device))\n"
    )
    findings = lint(code, rule_code="DL308")
    assert [(f.line, f.fix) for f in findings] == [(5, None)]


def test_autocast_decorator_on_a_method_of_a_placed_object():
    code = (
        "import torch\nfrom torch import nn\nclass Upscaler:\n    def __init__(self, device):\n        self.device = device\n"
        "        self.net = nn.Conv2d(3, 3, 3).to(device)\n"
        "    @torch.cuda.amp.autocast()\n    def predict(self, image):\n        return self.net(image.to(self.device))\n"
        "Upscaler(torch.device('cuda' if torch.cuda.is_available() else 'cpu')).predict(torch.zeros(1, 3, 8, 8))\n"
    )
    assert _lines(code, "DL308") == [(7, "DL308")]


def test_cpu_autocast_around_concrete_cuda_work():
    code = "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nwith torch.autocast('cpu'):\n    out = model(torch.randn(3, 4).cuda())\n"
    assert _lines(code, "DL308") == [(4, "DL308")]


def test_sync_under_a_modulo_guard_is_periodic_but_its_else_branch_is_not():
    code = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\n"
        "model = nn.Linear(8, 1).to(device)\nfor step, (x, y) in enumerate(DataLoader(data)):\n"
        "    loss = model(x.to(device)).sum()\n    loss.backward()\n"
        "    if (step + 1) % 10 == 0:\n        print(loss.item())\n    else:\n        last = loss.item()\n"
    )
    assert _lines(code, "DL408") == [(12, "DL408")]


def test_sync_in_a_while_loop_that_steps_an_optimizer():
    code = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(8, 1).to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nstep = 0\n"
        "while step < 100:\n    loss = model(torch.randn(4, 8, device=device)).mean()\n    opt.zero_grad()\n    loss.backward()\n"
        "    opt.step()\n    losses = loss.detach().cpu()\n    fast = loss.detach().cpu(non_blocking=True)\n    step += 1\n"
    )
    assert _lines(code, "DL408") == [(12, "DL408")]


def test_sync_in_an_epoch_loop_around_the_step_loop_is_not_per_step():
    code = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\n"
        "model = nn.Linear(8, 1).to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    for x in DataLoader(data):\n        loss = model(x.to(device)).mean()\n"
        "        loss.backward()\n        opt.step()\n    print(loss.item(), float(loss))\n"
    )
    assert _lines(code, "DL408") == []


def test_every_info_rule_is_off_by_default_and_every_error_or_warning_on():
    """At the default selection devicelint reports errors and warnings; advice is opt-in."""
    for rule in all_rules():
        assert rule.default_enabled is (rule.severity.value != "info"), rule.code
        if not rule.default_enabled:
            assert "Off by default" in rule.render_docs(), rule.code


def test_dl408_is_off_by_default_and_on_when_named():
    rules = {rule.code: rule for rule in all_rules()}
    assert rules["DL408"].default_enabled is False
    assert rules["DL308"].default_enabled is True
    by_default = {rule.code for rule in Selection().rules()}
    assert "DL408" not in by_default and "DL308" in by_default
    assert "DL408" not in {rule.code for rule in Selection(select=("DL4",)).rules()}
    assert "DL408" in {rule.code for rule in Selection(extend_select=("DL408",)).rules()}


def test_a_torch_device_object_as_device_type_is_a_value_error_with_a_safe_fix():
    code = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nwith torch.autocast(device_type=device, dtype=torch.bfloat16):\n"
        "    out = model(torch.randn(3, 4, device=device))\n"
    )
    findings = [f for f in lint(code, rule_code="DL308") if f.code == "DL308"]
    assert [(f.line, f.column) for f in findings] == [(5, 33)]
    assert findings[0].fix is not None and findings[0].fix.safe
    fixed, applied = apply_fixes(code, findings)
    assert applied == 1 and "torch.autocast(device_type=device.type, dtype=torch.bfloat16)" in fixed
    assert _lines(fixed, "DL308") == []


def test_a_device_string_variable_as_device_type_is_fine():
    code = (
        "import torch\nfrom torch import nn\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "model = nn.Linear(4, 2).to(device)\nwith torch.autocast(device_type=device):\n    out = model(torch.randn(3, 4, device=device))\n"
    )
    assert _lines(code, "DL308") == []


def test_back_to_back_reads_make_one_finding_and_first_step_only_reads_are_skipped():
    code = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\n"
        "model = nn.Linear(8, 1).to(device)\nfor i, (x, y) in enumerate(DataLoader(data)):\n"
        "    out = model(x.to(device))\n    loss = out.mean()\n    peak = out.max()\n    loss.backward()\n"
        "    if i == 0:\n        print(out.tolist())\n"
        "    print(loss.item(), peak.item())\n"
        "    total = out.sum()\n    print(total.item())\n"
    )
    findings = [f for f in lint(code, rule_code="DL408") if f.code == "DL408"]
    # the second print reads again after new device work (the sum): it waits again
    assert [(f.line, f.column) for f in findings] == [(13, 11), (15, 11)]
    assert [(r.line, r.column) for r in findings[0].related] == [(13, 24)]
    assert "(and 1 more read right after it)" in findings[0].message


def test_cpu_on_a_moved_object_of_unknown_kind_is_not_a_read():
    # `m` may be a model: Module.cpu() moves parameters, it reads no value
    code = (
        "import torch\ndevice = torch.device('cuda')\nm = make_model().to(device)\nopt = torch.optim.SGD(params, lr=0.1)\n"
        "for batch in batches:\n    m(batch).sum().backward()\n    opt.step()\n    send(m.cpu().parameters())\n"
    )
    assert _lines(code, "DL408") == []
