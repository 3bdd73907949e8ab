"""``model.cpu().state_dict()`` moves the model itself (a module's ``cpu()`` works in place): a
model that is then fed tensors on the accelerator again fails on its host weights. DL201 reports
the move, once, where the fix belongs, instead of every call that meets the host weights."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import torch\n"  # 1
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 2
    "def checkpoint(net, path):\n"  # 3
)


def test_in_place_host_move_for_saving_then_training_on_is_reported_at_the_move():
    source = _HEAD + (
        "    torch.save(net.cpu().state_dict(), path)\n"  # 4
        "def train(steps):\n"  # 5
        "    net = torch.nn.Linear(4, 2).to(device)\n"  # 6
        "    for step in range(steps):\n"  # 7
        "        out = net(torch.randn(8, 4, device=device))\n"  # 8
        "        out.sum().backward()\n"  # 9
        "        checkpoint(net, 'w.pt')\n"  # 10
    )
    findings = [f for f in lint(source) if f.code == "DL201"]
    assert [f.line for f in findings] == [4]
    assert "works in place" in findings[0].message and "line 8" in findings[0].message


def test_host_copy_of_the_state_dict_stays_quiet():
    source = _HEAD + (
        "    torch.save({k: v.cpu() for k, v in net.state_dict().items()}, path)\n"
        "def train(steps):\n"
        "    net = torch.nn.Linear(4, 2).to(device)\n"
        "    for step in range(steps):\n"
        "        out = net(torch.randn(8, 4, device=device))\n"
        "        out.sum().backward()\n"
        "        checkpoint(net, 'w.pt')\n"
    )
    assert [f for f in lint(source) if f.code == "DL201"] == []


def test_saving_the_model_on_the_host_once_training_is_over_stays_quiet():
    source = _HEAD + (
        "    torch.save(net.cpu().state_dict(), path)\n"
        "def train(steps):\n"
        "    net = torch.nn.Linear(4, 2).to(device)\n"
        "    for step in range(steps):\n"
        "        out = net(torch.randn(8, 4, device=device))\n"
        "        out.sum().backward()\n"
        "    checkpoint(net, 'w.pt')\n"
    )
    assert [f for f in lint(source) if f.code == "DL201"] == []
