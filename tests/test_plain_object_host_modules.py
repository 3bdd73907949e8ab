"""A module that the ``__init__`` of a plain class (not an ``nn.Module``) builds on the host and
keeps in an attribute: no move of an owner reaches it (``Module.to`` moves registered submodules
only), so where nothing in the file can move it (it is only called, read or assigned), the
class's other methods see it on the host; anything that could move it (a move method, handing it
on, a container, the class's own ``to()``) leaves it unknown, as before."""

from __future__ import annotations

from conftest import lint

_TRACKER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class RunningSum(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.register_buffer('acc', torch.tensor(0.0))\n"  # 6
    "    def add(self, value):\n"  # 7
    "        self.acc += value.sum()\n"  # 8
    "class Recorder:\n"  # 9
    "    def __init__(self):\n"  # 10
    "        self.tracker = RunningSum()\n"  # 11
    "    def log(self, scores, device):\n"  # 12
    "        on_device = scores.to(device)\n"  # 13
    "        self.tracker.add(on_device)\n"  # 14
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 15
    "rec = Recorder()\n"  # 16
    "rec.log(torch.rand(5), dev)\n"  # 17
)


def test_a_host_module_a_plain_object_keeps_meets_device_inputs():
    findings = lint(_TRACKER)
    # the call, and the in-place write into the host buffer the exception comes from
    assert [(f.code, f.line) for f in findings] == [("DL201", 8), ("DL201", 14)]
    assert "`self.tracker` has its parameters on the CPU" in findings[1].message
    assert "writes `value.sum()` in place into `self.acc`" in findings[0].message


def test_a_kept_module_the_file_moves_elsewhere_stays_quiet():
    assert lint(_TRACKER + "rec.tracker.to(dev)\n") == []


def test_a_kept_module_handed_on_stays_quiet():
    code = _TRACKER.replace("    def log(", "    def place(self, device):\n        move_all([self.tracker], device)\n    def log(")
    assert lint(code) == []


def test_a_module_handed_to_the_constructor_stays_quiet():
    code = _TRACKER.replace("    def __init__(self):\n        self.tracker = RunningSum()", "    def __init__(self, tracker):\n        self.tracker = tracker")
    code = code.replace("rec = Recorder()", "rec = Recorder(RunningSum().to(dev))")
    assert lint(code) == []


def test_a_plain_class_with_its_own_to_stays_quiet():
    code = _TRACKER.replace("    def log(", "    def to(self, device):\n        return self\n    def log(")
    assert lint(code) == []


_HANDED = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "DEV = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 3
    "class Net(nn.Module):\n"  # 4
    "    def __init__(self):\n"  # 5
    "        super().__init__()\n"  # 6
    "        self.fc = nn.Linear(4, 4)\n"  # 7
    "    def forward(self, x):\n"  # 8
    "        return self.fc(x)\n"  # 9
    "class Fitter:\n"  # 10
    "    def __init__(self, net, epochs):\n"  # 11
    "        self.net = net\n"  # 12
    "        self.epochs = epochs\n"  # 13
    "    def fit(self, xs):\n"  # 14
    "        for x in xs:\n"  # 15
    "            out = self.net(x.to(DEV))\n"  # 16
    "        return out\n"  # 17
    "def main():\n"  # 18
    "    # the net is built here and handed over as it is\n"  # 19
    "    net = Net()\n"  # 20
    "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"  # 21
    "    fitter = Fitter(net=net, epochs=2)\n"  # 22
    "    return fitter.fit([torch.randn(2, 4)])\n"  # 23
)


def test_a_host_module_handed_to_a_plain_object_and_never_moved_meets_device_inputs():
    findings = lint(_HANDED)
    assert [(f.code, f.line) for f in findings] == [("DL201", 16)]
    assert "`self.net` has its parameters on the CPU (created by `Net` at line 20)" in findings[0].message


def test_a_handed_module_moved_by_name_after_the_handover_stays_quiet():
    code = _HANDED.replace("    return fitter.fit(", "    net.to(DEV)\n    return fitter.fit(")
    assert lint(code) == []


def test_a_handed_module_given_to_another_call_stays_quiet():
    code = _HANDED.replace("    return fitter.fit(", "    prepare(net)\n    return fitter.fit(")
    assert lint(code) == []


def test_a_handed_module_moved_to_the_host_on_purpose_stays_quiet():
    assert lint(_HANDED.replace("net = Net()", "net = Net().to('cpu')")) == []


def test_a_kept_module_replaced_from_outside_stays_quiet():
    assert lint(_TRACKER.replace("rec.log(", "rec.tracker = shared_tracker\nrec.log(")) == []


def test_a_class_with_a_base_the_analysis_cannot_see_stays_quiet():
    code = _TRACKER.replace("class Recorder:", "from somewhere import Base\nclass Recorder(Base):")
    assert lint(code) == []
