"""A nested function that moves a module of the function around it in place (``Module.cpu()``,
``.to()``, ``.cuda()`` work on the object itself) moves the very object its caller holds: after a
call of the closure where it is defined, the caller's module is where the closure left it. And a
module moved to the host for its state dict, then handed accelerator data through a method of its
own (a list of batches), is reported at the move (DL201), as a call of the module is."""

from __future__ import annotations

from conftest import lint

_TRAIN = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Learner(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.body = nn.Linear(6, 2)\n"  # 6
    "    def step(self, pairs):\n"  # 7
    "        inputs = torch.cat([a for a, _ in pairs])\n"  # 8
    "        return self.body(inputs).sum()\n"  # 9
    "def run(total=6):\n"  # 10
    "    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"  # 11
    "    learner = Learner()\n"  # 12
    "    learner.to(device)\n"  # 13
    "    def snapshot(tag):\n"  # 14
    "        torch.save(learner.cpu().state_dict(), tag + '.pt')\n"  # 15
    "    for i in range(total):\n"  # 16
    "        pairs = [(torch.randn(3, 6).to(device), torch.zeros(3).to(device)) for _ in range(2)]\n"  # 17
    "        learner.step(pairs)\n"  # 18
    "        if i % 2 == 0:\n"  # 19
    "            snapshot(str(i))\n"  # 20
)


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


def test_a_closure_that_moves_the_model_to_the_host_for_its_state_dict_is_reported_at_the_move():
    findings = [f for f in lint(_TRAIN) if f.code == "DL201"]
    assert [(f.code, f.line) for f in findings] == [("DL201", 15)]
    assert "its `step()` is handed `pairs`" in findings[0].message


def test_a_model_called_directly_after_the_closure_moved_it():
    code = _TRAIN.replace("    learner = Learner()\n", "    learner = nn.Linear(6, 2)\n").replace("        learner.step(pairs)\n", "        learner(pairs[0][0])\n")
    assert _dl201(code) == [("DL201", 15)]


def test_a_closure_that_saves_a_host_copy_stays_quiet():
    code = _TRAIN.replace("learner.cpu().state_dict()", "{k: v.cpu() for k, v in learner.state_dict().items()}")
    assert _dl201(code) == []


def test_a_closure_that_moves_the_model_back_stays_quiet():
    code = _TRAIN.replace(
        "        torch.save(learner.cpu().state_dict(), tag + '.pt')\n",
        "        torch.save(learner.cpu().state_dict(), tag + '.pt')\n        learner.to(device)\n",
    )
    assert _dl201(code) == []


def test_a_nested_function_moving_its_own_parameter_leaves_the_callers_name_alone():
    code = _TRAIN.replace("    def snapshot(tag):\n", "    def snapshot(tag, learner=Learner()):\n")
    assert _dl201(code) == []
