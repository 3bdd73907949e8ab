"""DL401 and DL403 on loops whose moves are not repeated work: copies the loop writes into or
carries forward, data answered by another object, host data sent across a boundary."""

from __future__ import annotations

from conftest import lint


def codes(code: str) -> list[tuple[int, str]]:
    """(line, code) of the findings of the default rules and DL402 (off by default)."""
    return [(finding.line, finding.code) for finding in lint(code, rule_code="DL402")]


def test_a_copy_the_loop_writes_into_is_not_hoistable_but_is_made_on_the_host():
    code = (
        "import torch\n"
        "def f(imgs, n):\n"
        "    for i in range(n):\n"
        "        mask = torch.ones(n, n, dtype=torch.bool).to(imgs.device)\n"
        "        mask[: i + 1, i + 1:] = False\n"
        "        use(mask)\n"
    )
    assert codes(code) == [(4, "DL402")]


def test_a_copy_the_loop_carries_forward_is_not_hoistable():
    code = (
        "import torch\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "for epoch in range(3):\n"
        "    states = (torch.zeros(2, 4, 8).to(device), torch.zeros(2, 4, 8).to(device))\n"
        "    for i in range(10):\n"
        "        states = tuple(s.detach() for s in states)\n"
    )
    assert codes(code) == [(4, "DL402"), (4, "DL402")]


def test_an_untouched_constant_moved_in_the_loop_is_still_hoistable():
    code = (
        "import torch\n"
        "def f(imgs, n):\n"
        "    for i in range(n):\n"
        "        grid = torch.ones(n, n).to(imgs.device)\n"
        "        use(grid)\n"
    )
    assert codes(code) == [(4, "DL401")]


def test_in_place_method_on_the_copy_counts_as_writing_into_it():
    code = (
        "import torch\n"
        "def f(imgs, n):\n"
        "    for i in range(n):\n"
        "        acc = torch.zeros(n).to(imgs.device)\n"
        "        acc.add_(imgs[i])\n"
        "        use(acc)\n"
    )
    assert ("DL401" in {c for _, c in codes(code)}) is False


def test_an_observation_from_the_environment_is_new_data_not_a_round_trip():
    code = (
        "import torch\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def run(env, policy, state):\n"
        "    for step in range(100):\n"
        "        action = policy(state).to(device)\n"
        "        obs, reward, done, info = env.step(action.cpu().numpy())\n"
        "        state = torch.as_tensor(obs).to(device)\n"
        "        first = torch.as_tensor(env.reset()).to(device)\n"
    )
    assert [c for _, c in codes(code) if c in ("DL401", "DL403")] == []


def test_a_round_trip_through_numpy_is_still_reported():
    code = (
        "import torch\nimport numpy as np\nfrom torch import nn\n"
        "device = torch.device('cuda')\nmodel = nn.Linear(8, 100).to(device)\n"
        "for x in loader:\n"
        "    logits = model(x.to(device))\n"
        "    ranks = np.argsort(logits.cpu().numpy(), axis=1)\n"
        "    top = torch.from_numpy(ranks[:, -5:]).to(device)\n"
    )
    assert (9, "DL403") in codes(code)


def test_a_copy_handed_to_a_call_that_keeps_it_is_not_hoistable():
    # each pass registers its own tensor (or keeps it in a list): one tensor for all would alias them
    code = (
        "import torch\n"
        "class Bank(torch.nn.Module):\n"
        "    def __init__(self, k, device):\n"
        "        super().__init__()\n"
        "        self.slots = []\n"
        "        for j in range(k):\n"
        "            self.register_buffer('slot%d' % j, torch.zeros(4, 2).to(device))\n"
        "            self.slots.append(torch.ones(3).to(device))\n"
    )
    assert (7, "DL401") not in codes(code) and (8, "DL401") not in codes(code)


def test_a_constant_passed_to_a_call_that_only_reads_it_is_still_hoistable():
    code = (
        "import torch\n"
        "def run(xs, device):\n"
        "    for x in xs:\n"
        "        show(x.to(device) * torch.tensor([0.5, 2.0]).to(device))\n"
    )
    assert (4, "DL401") in codes(code)
