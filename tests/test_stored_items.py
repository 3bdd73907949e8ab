"""An entry a function stores at a constant key of a dict or config (``cfg["device"] = dev``,
also as a target of a tuple assignment) reads back as what was stored - in that function and
in a function of the file the collection is handed to - until code that may change it has
the collection."""

from __future__ import annotations

from conftest import lint

# GaNDLF's inference (15xx twin): the device the model was moved to is kept in the parameters,
# and the batch follows it
_PLACED_BY_CONFIG = (
    "import torch\n"  # 1
    "from torch.utils.data import DataLoader, TensorDataset\n"  # 2
    "def send_model_to_device(model, device):\n"  # 3
    "    if device == 'cuda' and torch.cuda.is_available():\n"  # 4
    "        dev = torch.device('cuda')\n"  # 5
    "    else:\n"  # 6
    "        dev = torch.device('cpu')\n"  # 7
    "    return model.to(dev), dev\n"  # 8
    "def validate(model, loader, parameters):\n"  # 9
    "    return [model(x.to(parameters['device'])) for (x,) in loader]\n"  # 10
    "def infer(data, device, parameters):\n"  # 11
    "    model = torch.nn.Linear(3, 4)\n"  # 12
    "    model, parameters['device'] = send_model_to_device(model, device)\n"  # 13
    "    return validate(model, DataLoader(data), parameters)\n"  # 14
    "infer(TensorDataset(torch.randn(8, 3)), 'cpu', {})\n"  # 15
)


def test_a_device_stored_in_a_config_and_handed_on_places_the_batch_with_the_model():
    assert lint(_PLACED_BY_CONFIG) == []


def test_a_config_entry_stored_otherwise_than_the_model_is_still_a_mismatch():
    code = _PLACED_BY_CONFIG.replace("    return validate(", "    parameters['device'] = 'cuda'\n    return validate(")
    assert [(f.code, f.line) for f in lint(code)] == [("DL201", 10)]


_STORED = (
    "import torch\n"  # 1
    "def run(cfg, keys, move):\n"  # 2
    "    model = torch.nn.Linear(3, 4).cuda()\n"  # 3
    "    cfg['mask'] = torch.ones(3)\n"  # 4
)


def test_an_entry_reads_back_as_stored_in_the_same_function():
    findings = lint(_STORED + "    return model(cfg['mask'])\n")
    assert [(f.code, f.line) for f in findings] == [("DL202", 4)]


def test_an_entry_reads_back_as_stored_in_a_function_the_config_is_handed_to():
    code = (
        "import torch\n"  # 1
        "def evaluate(model, cfg):\n"  # 2
        "    return model(cfg['mask'])\n"  # 3
        "def run(cfg):\n"  # 4
        "    model = torch.nn.Linear(3, 4).cuda()\n"  # 5
        "    cfg['mask'] = torch.ones(3)\n"  # 6
        "    return evaluate(model, cfg)\n"  # 7
    )
    findings = lint(code)
    assert [(f.code, f.line) for f in findings] == [("DL202", 6)]
    assert "meets `model`" in findings[0].message


def test_a_call_the_config_is_handed_to_may_change_its_entries():
    assert lint(_STORED + "    move(cfg)\n    return model(cfg['mask'])\n") == []
    assert lint(_STORED + "    cfg.update(mask=cfg['mask'].cuda())\n    return model(cfg['mask'])\n") == []


def test_a_store_at_a_key_that_is_not_a_constant_forgets_the_entries():
    code = _STORED + "    for key in keys:\n        cfg[key] = cfg[key].cuda()\n    return model(cfg['mask'])\n"
    assert lint(code) == []


def test_an_entry_stored_again_reads_back_as_the_last_store():
    assert lint(_STORED + "    cfg['mask'] = cfg['mask'].cuda()\n    return model(cfg['mask'])\n") == []
    assert lint(_STORED + "    del cfg['mask']\n    return model(cfg['mask'])\n") == []
