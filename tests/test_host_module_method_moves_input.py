"""A module of the file built on the host and never moved, whose own method moves its input to
the run's device (``obs.to(device)``) and then runs the module's layers on it: on a GPU run the
input reaches host weights. The missing move belongs to the construction (DL201, reported there)."""

from __future__ import annotations

from conftest import lint

_AGENT = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "run_on = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 3
    "class Critic(nn.Module):\n"  # 4
    "    def __init__(self, width=8):\n"  # 5
    "        super().__init__()\n"  # 6
    "        self.score = nn.Linear(width, 1)\n"  # 7
    "    def forward(self, obs):\n"  # 8
    "        return self.score(obs)\n"  # 9
    "    def judge(self, observation):\n"  # 10
    "        observation = torch.as_tensor(observation, dtype=torch.float32).to(run_on)\n"  # 11
    "        return self.forward(observation).item()\n"  # 12
    "def main():\n"  # 13
    "    critic = Critic()\n"  # 14
    "    print(critic.judge([0.1] * 8))\n"  # 15
)


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


def test_a_host_module_whose_method_moves_its_input_to_the_run_device_is_reported_at_its_construction():
    findings = [f for f in lint(_AGENT) if f.code == "DL201"]
    assert [(f.code, f.line) for f in findings] == [("DL201", 14)]
    assert "moves `observation` to `run_on`" in findings[0].message


def test_a_module_moved_after_its_construction_stays_quiet():
    assert _dl201(_AGENT.replace("    critic = Critic()\n", "    critic = Critic().to(run_on)\n")) == []


def test_a_method_that_moves_its_input_where_the_module_is_stays_quiet():
    code = _AGENT.replace(".to(run_on)", ".to(next(self.parameters()).device)")
    assert _dl201(code) == []


def test_a_method_that_keeps_its_input_on_the_host_stays_quiet():
    assert _dl201(_AGENT.replace(".to(run_on)", "")) == []
