"""An object of a plain class of the file carries its attributes wherever it is handed: a module
that the caller placed on it (``runner.policy.to(device)``) is where a function handed the object
finds it (``runner.policy(obs)``, or ``runner.pick(obs)`` running the method that calls it)."""

from __future__ import annotations

from conftest import lint

_RUNNER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Scorer(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.lin = nn.Linear(3, 2)\n"  # 6
    "    def forward(self, obs):\n"  # 7
    "        return self.lin(obs)\n"  # 8
    "class Runner:\n"  # 9
    "    def __init__(self):\n"  # 10
    "        self.policy = Scorer()\n"  # 11
    "    def pick(self, obs):\n"  # 12
    "        return self.policy(obs).argmax()\n"  # 13
    "def rollout(runner, steps):\n"  # 14
    "    total = 0\n"  # 15
    "    for _ in range(steps):\n"  # 16
    "        obs = torch.zeros(3)\n"  # 17
    "        total += runner.policy(obs).sum().item()\n"  # 18
    "    return total\n"  # 19
    "def main():\n"  # 20
    "    dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 21
    "    runner = Runner()\n"  # 22
    "    runner.policy.to(dev)\n"  # 23
    "    print(rollout(runner, 4))\n"  # 24
    "main()\n"  # 25
)


def test_a_module_the_caller_placed_on_a_handed_object_meets_host_inputs():
    findings = lint(_RUNNER)
    assert [(f.code, f.line) for f in findings] == [("DL202", 17)]
    assert "`runner.policy`" in findings[0].message


def test_the_method_of_a_handed_object_runs_with_the_placed_module():
    code = _RUNNER.replace("runner.policy(obs).sum().item()", "runner.pick(obs).item()")
    findings = lint(code)
    assert [(f.code, f.line) for f in findings] == [("DL202", 17)]
    assert "`self.policy`" in findings[0].message


def test_an_object_whose_module_the_caller_leaves_on_the_host_stays_quiet():
    assert lint(_RUNNER.replace("    runner.policy.to(dev)\n", "")) == []


def test_inputs_moved_where_the_caller_placed_the_module_stay_quiet():
    code = _RUNNER.replace("def rollout(runner, steps):", "def rollout(runner, steps, dev):")
    code = code.replace("torch.zeros(3)\n", "torch.zeros(3, device=dev)\n").replace("rollout(runner, 4)", "rollout(runner, 4, dev)")
    assert lint(code) == []
