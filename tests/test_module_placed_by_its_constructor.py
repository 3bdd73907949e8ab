"""A module class whose ``__init__`` moves every weight it makes to one of its parameters
(``self.body = nn.Sequential(...).to(device)``) is, once built, where the construction's argument
says: a device chosen by availability puts the model there, so host inputs fail."""

from __future__ import annotations

from conftest import lint

_TAGGER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Tagger(nn.Module):\n"  # 3
    "    def __init__(self, vocab, dim, device=torch.device('cpu')):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.body = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, 3)).to(device)\n"  # 6
    "        self.norm = nn.LayerNorm(3).to(device)\n"  # 7
    "    def forward(self, tokens):\n"  # 8
    "        return self.norm(self.body(tokens))\n"  # 9
    "run_on = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 10
    "tagger = Tagger(40, 8, device=run_on)\n"  # 11
    "words = torch.randint(0, 40, (2, 5))\n"  # 12
    "print(tagger(words))\n"  # 13
)


def test_a_module_its_constructor_puts_on_the_run_device_meets_host_inputs():
    findings = [f for f in lint(_TAGGER) if f.code == "DL201"]
    assert [(f.code, f.line) for f in findings] == [("DL201", 13)]
    assert "on `run_on` (put on its `device` argument by `Tagger`" in findings[0].message


def test_a_module_built_with_the_default_host_device_stays_quiet():
    assert [f for f in lint(_TAGGER.replace("Tagger(40, 8, device=run_on)", "Tagger(40, 8)")) if f.code == "DL201"] == []


def test_inputs_moved_to_the_same_device_stay_quiet():
    assert [f for f in lint(_TAGGER.replace("(2, 5))", "(2, 5), device=run_on)")) if f.code == "DL201"] == []


def test_a_weight_made_without_the_move_leaves_the_model_unknown():
    code = _TAGGER.replace("        self.norm = nn.LayerNorm(3).to(device)\n", "        self.head = nn.Linear(3, 3)\n")
    assert [f for f in lint(code) if f.code == "DL201"] == []


def test_a_class_that_also_stores_its_device_is_placed_the_same_way():
    code = _TAGGER.replace("        super().__init__()\n", "        super().__init__()\n        self.device = device\n", 1)
    assert [(f.code, f.line) for f in lint(code) if f.code == "DL201"] == [("DL201", 14)]


def test_a_class_that_keeps_a_module_it_is_handed_stays_unknown():
    code = _TAGGER.replace("def __init__(self, vocab, dim, device=torch.device('cpu')):", "def __init__(self, vocab, dim, extra, device=torch.device('cpu')):")
    code = code.replace("        super().__init__()\n", "        super().__init__()\n        self.extra = extra\n", 1)
    code = code.replace("Tagger(40, 8, device=run_on)", "Tagger(40, 8, nn.Linear(3, 3), device=run_on)")
    assert [f for f in lint(code) if f.code == "DL201"] == []
