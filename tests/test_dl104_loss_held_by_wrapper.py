"""A weighted loss (its weight a host tensor) handed to a trainer-like object that keeps it as an
attribute and moves only its network: the loss module's weight stays on the host, and the call
of the loss through the holder's attribute is where PyTorch raises. Reported there as well as at
the loss's construction; a holder that moves the loss too stays silent."""

from __future__ import annotations

from conftest import line_codes


def _dl104(code):
    return sorted(line for line, code_ in line_codes(code) if code_ == "DL104")


def _program(move_loss_too: bool) -> str:
    extra = "        self.criterion.to(dev)\n" if move_loss_too else "        pass\n"
    return (
        "import torch\n"  # 1
        "import torch.nn as nn\n"  # 2
        "class Fitter:\n"  # 3
        "    def __init__(self, net, criterion):\n"  # 4
        "        self.net = net\n"  # 5
        "        self.criterion = criterion\n"  # 6
        "    def place(self, dev):\n"  # 7
        "        self.net.to(dev)\n"  # 8
        + extra  # 9
        + "    def step(self, xs, ys, dev):\n"  # 10
        "        out = self.net(xs.to(dev))\n"  # 11
        "        return self.criterion(out, ys.to(dev))\n"  # 12
        "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 13
        "weights = torch.tensor([0.2, 0.8])\n"  # 14
        "fitter = Fitter(nn.Linear(4, 2), nn.NLLLoss(weight=weights))\n"  # 15
        "fitter.place(dev)\n"  # 16
        "fitter.step(torch.randn(3, 4), torch.tensor([0, 1, 1]), dev)\n"  # 17
    )


def test_the_holders_call_of_an_unmoved_weighted_loss_is_reported():
    assert _dl104(_program(move_loss_too=False)) == [12, 15]


def test_a_holder_that_moves_the_loss_too_is_silent():
    assert _dl104(_program(move_loss_too=True)) == []
