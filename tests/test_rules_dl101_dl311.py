"""DL311 device-parameter-ignored and DL101's loop variables drawn from a DataLoader: what the
embedded examples and fixtures do not pin down."""

from __future__ import annotations

from devicelint.engine import lint_source
from devicelint.rules import all_rules

from conftest import lint

MEETS_ITS_DEVICE = (
    "import torch\n"
    "def causal_mask(size, device):\n"
    "    ones = torch.ones(size, size, device=device)\n"
    "    keep = torch.arange(size)\n"
    "    return ones.tril() * keep\n"
)


def _lint_only(code: str, *codes: str):
    return lint_source(code, "example.py", [rule for rule in all_rules() if rule.code in codes])


def test_dl311_yields_the_meeting_to_dl202_but_reports_it_alone():
    both = [(f.line, f.code) for f in _lint_only(MEETS_ITS_DEVICE, "DL202", "DL311")]
    assert both == [(4, "DL202")]
    alone = _lint_only(MEETS_ITS_DEVICE, "DL311")
    assert [(f.line, f.code) for f in alone] == [(4, "DL311")]
    assert "passed as `device=` at line 3" in alone[0].message
    assert "meets `ones.tril()`" in alone[0].message


def test_dl311_names_the_annotation_and_the_return():
    code = (
        "from typing import Optional\nimport torch\n"
        "def noise(shape, device: Optional[torch.device] = None):\n"
        "    return torch.randn(shape)\n"
    )
    (finding,) = [f for f in lint(code, rule_code="DL311") if f.code == "DL311"]
    assert finding.line == 4
    assert "annotated `torch.device`" in finding.message
    assert "returns the tensor at line 4" in finding.message
    assert finding.fix is not None and not finding.fix.safe


def test_dl311_string_annotation_counts():
    code = "import torch\ndef noise(n, device: 'torch.device'):\n    return torch.rand(n)\n"
    assert [(f.line, f.code) for f in lint(code, rule_code="DL311")] == [(3, "DL311")]


def test_dl311_leaves_a_tensor_parameter_followed_with_to_alone():
    code = "import torch\ndef pad(x, ref):\n    width = torch.zeros(ref.size(0))\n    return x.to(ref), width\n"
    assert [f for f in lint(code, rule_code="DL311") if f.code == "DL311"] == []


def test_dl101_whole_batch_of_an_annotated_loader_is_left_alone():
    # the loader's collation is not known: its batch may be a BatchEncoding, moved in place
    code = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def run(model, loader: DataLoader, device):\n"
        "    for batch in loader:\n        batch.to(device)\n        model(**batch)\n"
    )
    assert [f for f in lint(code) if f.code == "DL101"] == []


def test_dl101_whole_batch_of_a_default_collated_loader_is_flagged():
    code = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "def run(model, device):\n"
        "    loader = DataLoader(TensorDataset(torch.randn(8, 3)), 4, True)\n"
        "    for step, batch in enumerate(loader):\n        batch[0].to(device)\n"
    )
    assert [(f.line, f.code) for f in lint(code) if f.code == "DL101"] == [(6, "DL101")]


def test_dl101_positional_collate_fn_counts_as_custom_collation():
    code = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def run(dataset, collate, device):\n"
        "    for batch in DataLoader(dataset, 4, True, None, None, 0, collate):\n        batch.to(device)\n"
    )
    assert [f for f in lint(code) if f.code == "DL101"] == []


def test_dl101_loop_variables_of_a_loader_from_the_caller():
    code = (
        "import torch\nfrom torch.utils.data import DataLoader\nfrom tqdm import tqdm\n"
        "def evaluate(model, loader, device):\n"
        "    for images, labels in tqdm(loader, desc='eval'):\n"
        "        images.to(device)\n        labels.to(device)\n        model(images)\n"
        "evaluate(torch.nn.Linear(2, 2), DataLoader(range(8), batch_size=2), 'cuda')\n"
    )
    assert [(f.line, f.code) for f in lint(code) if f.code == "DL101"] == [(6, "DL101"), (7, "DL101")]


def test_dl101_item_of_a_custom_collated_batch_is_still_a_tensor():
    # BatchEncoding["input_ids"] is a tensor whatever the collate_fn built
    code = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def run(dataset, collate, device):\n"
        "    for batch in DataLoader(dataset, batch_size=4, collate_fn=collate):\n"
        "        batch['input_ids'].to(device)\n"
    )
    assert [(f.line, f.code) for f in lint(code) if f.code == "DL101"] == [(5, "DL101")]
