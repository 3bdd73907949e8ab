"""`super().method(...)` in a method of a class of the file runs the nearest base of the file
that defines the method, on the same object; a library base leaves the call as before."""

from conftest import line_codes as codes

DISTRIBUTION = (
    "import torch\nfrom torch import nn\n"
    "class Standard:\n    def __init__(self, a):\n        self.a = a\n"
    "    def icdf(self, value):\n        return self.a + value\n"
    "    def sample(self):\n        u = {draw}\n        return self.icdf(u)\n"
    "class Shifted(Standard):\n    def __init__(self, loc, a):\n        self.loc = loc\n        super().__init__(a)\n"
    "    def icdf(self, value):\n        return super().icdf(value) * 2.0\n"
    "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.mu = nn.Linear(4, 2)\n"
    "    def forward(self, x):\n        loc = self.mu(x)\n        return Shifted(loc, loc.tanh()).sample()\n"
)


def test_a_host_draw_reaches_the_base_method_a_super_call_runs():
    # the draw (line 9) goes through the subclass's icdf, whose super().icdf meets it with `self.a`
    assert codes(DISTRIBUTION.format(draw="torch.rand(4, 2)")) == [(9, "DL202")]


def test_a_draw_made_where_the_bounds_are_is_quiet():
    assert codes(DISTRIBUTION.format(draw="torch.rand(4, 2, device=self.a.device)")) == []


def test_a_library_base_is_left_alone():
    code = (
        "import torch\nfrom torch import nn\nclass Scaled(nn.Linear):\n"
        "    def forward(self, x):\n        return super().forward(x) * 2\n"
        "device = torch.device('cuda')\nlayer = Scaled(4, 2).to(device)\nlayer(torch.randn(3, 4, device=device))\n"
    )
    assert codes(code) == []
