"""A submodule of a module of the file, called from outside its class (``net.decoder(z)``): not a
method of the class but the module its methods see as ``self.decoder`` - where the model was
moved, since ``Module.to`` moves every registered submodule. A model left where it was built
says nothing of a module it was handed (or a copy of one): that one is wherever it was put."""

from __future__ import annotations

from conftest import lint

_AUTOENCODER = (
    "import copy\nimport torch\nfrom torch import nn\n"  # 1-3
    "class Decoder(nn.Module):\n"  # 4
    "    def __init__(self):\n"  # 5
    "        super().__init__()\n"  # 6
    "        self.out = nn.Linear(2, 6)\n"  # 7
    "    def forward(self, z):\n"  # 8
    "        return self.out(z)\n"  # 9
    "class AutoEncoder(nn.Module):\n"  # 10
    "    def __init__(self):\n"  # 11
    "        super().__init__()\n"  # 12
    "        self.enc = nn.Linear(6, 2)\n"  # 13
    "        self.decoder = Decoder()\n"  # 14
    "    def forward(self, x):\n"  # 15
    "        return self.decoder(self.enc(x))\n"  # 16
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 17
    "net = AutoEncoder().to(dev)\n"  # 18
    "codes = torch.randn(5, 2)\n"  # 19
    "print(net.decoder(codes))\n"  # 20
)


def test_a_submodule_of_a_moved_model_called_on_a_host_tensor():
    findings = lint(_AUTOENCODER)
    assert [(f.code, f.line) for f in findings] == [("DL201", 20)]
    assert "`net.decoder` has its parameters on `dev`" in findings[0].message


def test_a_layer_of_that_submodule_called_the_same_way():
    findings = lint(_AUTOENCODER.replace("net.decoder(codes)", "net.decoder.out(codes)"))
    assert [(f.code, f.line) for f in findings] == [("DL201", 20)]


def test_inputs_moved_with_the_model_stay_quiet():
    assert lint(_AUTOENCODER.replace("torch.randn(5, 2)", "torch.randn(5, 2, device=dev)")) == []


def test_a_model_never_moved_says_nothing_of_a_module_it_was_handed():
    code = _AUTOENCODER.replace("    def __init__(self):\n        super().__init__()\n        self.enc", "    def __init__(self, dec):\n        super().__init__()\n        self.enc")
    code = code.replace("self.decoder = Decoder()", "self.decoder = copy.deepcopy(dec)")
    code = code.replace("net = AutoEncoder().to(dev)", "net = AutoEncoder(Decoder().to(dev))")
    code = code.replace("torch.randn(5, 2)", "torch.randn(5, 2, device=dev)")
    assert lint(code) == []
