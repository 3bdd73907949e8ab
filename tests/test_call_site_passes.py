"""A function whose calls hand it values placed differently (a model moved to the run's device
by one caller, rebuilt on the CPU by another) gets one more reporting pass per such call: the
rules that weigh where values are see the call that mixes devices, their findings name it, and
nothing is reported twice or changes what the joined pass left."""

from __future__ import annotations

import libcst as cst

from conftest import lint
from devicelint.analysis.flow import FlowAnalyzer
from devicelint.analysis.values import Kind

_EVALUATE = (
    "import torch\n"  # 1
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 2
    "def evaluate(model, x, device):\n"  # 3
    "    return model(x.unsqueeze(0).to(device))\n"  # 4
    "def train(x):\n"  # 5
    "    model = torch.nn.Linear(4, 2).to(device)\n"  # 6
    "    return evaluate(model, x, device)\n"  # 7
    "def validate(x):\n"  # 8
    "    model = torch.nn.Linear(4, 2)\n"  # 9
    "    model.load_state_dict(torch.load('w.pt', map_location='cpu'))\n"  # 10
)


def test_helper_called_with_a_moved_and_a_cpu_model_is_reported_naming_the_cpu_call():
    findings = lint(_EVALUATE + "    return evaluate(model, x, device)\n")
    assert [(f.code, f.line) for f in findings] == [("DL201", 4)]
    assert "has its parameters on the CPU" in findings[0].message
    assert findings[0].message.endswith("(when called from line 11)")


def test_helper_whose_every_call_moves_the_model_stays_quiet():
    assert lint(_EVALUATE + "    model.to(device)\n    return evaluate(model, x, device)\n") == []


def test_the_helper_keeps_the_state_of_its_joined_pass():
    module = cst.parse_module(_EVALUATE + "    return evaluate(model, x, device)\n")

    class Sink:
        def __getattr__(self, name):
            return lambda *args: None

    analyzer = FlowAnalyzer(module, Sink(), module.code_for_node)
    analyzer.run()
    evaluate = next(node for node in module.body if isinstance(node, cst.FunctionDef) and node.name.value == "evaluate")
    model = analyzer.function_states[evaluate]["model"]
    # the join of the moved model and the CPU one: where a GPU run may take it
    assert model.kind == Kind.MODULE and model.device is not None and model.device.may_be_accelerator
    assert analyzer.call_context is None


def test_a_finding_every_call_gives_is_reported_once_without_naming_a_call():
    code = (
        "import torch\n"  # 1
        "def evaluate(model, x):\n"  # 2
        "    y = model(x.unsqueeze(0))\n"  # 3
        "    return y.sum() + torch.ones(2, device='cuda') * torch.ones(2, device='cuda').cpu()\n"  # 4
        "a = evaluate(torch.nn.Linear(4, 2).cuda(), torch.ones(4, device='cuda'))\n"  # 5
        "b = evaluate(torch.nn.Linear(4, 2), torch.ones(4))\n"  # 6
    )
    # (DL302 also flags the two hard-coded devices: line 6 hands the function host tensors)
    findings = [f for f in lint(code) if f.code == "DL201"]
    assert [(f.code, f.line, f.column) for f in findings] == [("DL201", 4, 22)]
    assert "when called from" not in findings[0].message


def test_rules_that_weigh_the_code_shape_hear_each_body_once():
    # DL302 (a hard-coded device) is no rule of values: the pass of the CPU call adds nothing
    code = _EVALUATE.replace("x.unsqueeze(0).to(device)", "x.unsqueeze(0).to('cuda')") + "    return evaluate(model, x, device)\n"
    findings = lint(code)
    assert all("when called from" not in f.message for f in findings if f.code != "DL201")
    assert len({(f.code, f.line, f.column) for f in findings}) == len(findings)


_POSITIONS = (
    "import numpy as np\n"  # 1
    "import torch\n"  # 2
    "def embed_np(pos):\n"  # 3
    "    return np.sin(pos)\n"  # 4
    "def embed(pos, output_type='np'):\n"  # 5
    "    if output_type == 'np':\n"  # 6
    "        return embed_np(pos)\n"  # 7
    "    return torch.sin(pos)\n"  # 8
    "def caller(n, device):\n"  # 9
    "    grid = torch.arange(n, device=device)\n"  # 10
)


def test_a_call_whose_literal_rules_out_a_branch_hands_nothing_on_from_it():
    # the call hands `output_type="pt"`: the numpy branch never sees the tensor on the device
    code = _POSITIONS + "    return embed(grid, output_type='pt')\nembed(np.arange(4))\ncaller(4, torch.device('cuda'))\n"
    assert [f for f in lint(code) if f.code == "DL204"] == []


def test_a_call_that_leaves_the_literal_to_its_default_takes_that_branch():
    code = _POSITIONS + "    return embed(grid)\nembed(np.arange(4))\ncaller(4, torch.device('cuda'))\n"
    findings = [f for f in lint(code) if f.code == "DL204"]
    # reported once, at the call that hands the GPU tensor to the helper reading it with numpy
    assert [f.line for f in findings] == [7]
    assert findings[0].message.endswith("(when called from line 11)")


def test_a_helper_summarised_on_a_string_its_caller_hands_takes_one_branch():
    code = (
        "import numpy as np\nimport torch\n"
        "def make(n, device, output_type='np'):\n"
        "    if output_type == 'np':\n        return np.zeros(n)\n"
        "    return torch.zeros(n, device=device)\n"
        "def caller(device):\n    table = make(4, device, output_type='pt')\n    other = make(4, device)\n"
        "caller(torch.device('cuda'))\n"
    )
    module = cst.parse_module(code)

    class Sink:
        def __getattr__(self, name):
            return lambda *args: None

    analyzer = FlowAnalyzer(module, Sink(), module.code_for_node)
    analyzer.run()
    caller = next(node for node in module.body if isinstance(node, cst.FunctionDef) and node.name.value == "caller")
    state = analyzer.function_states[caller]
    assert state["table"].kind == Kind.TENSOR and state["table"].device is not None and state["table"].device.may_be_accelerator
    assert state["other"].kind != Kind.TENSOR  # the default "np" takes the numpy branch, or both


_LOSS_MODULE = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class NormalizedLoss(nn.Module):\n"  # 3
    "    def __init__(self, targets, labels):\n"  # 4
    "        super().__init__()\n"  # 5
    "        assert (labels == targets.numpy()).all()\n"  # 6
    "        self.register_buffer('targets', targets)\n"  # 7
    "    def forward(self, pred):\n"  # 8
    "        return ((pred - self.targets) ** 2).mean()\n"  # 9
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 10
    "labels = [1.0, 0.0]\n"  # 11
)


def test_a_module_constructor_gets_a_pass_on_what_its_construction_hands_it():
    # communitynotes: the module's `__init__` is analysed before the code that builds it
    findings = lint(_LOSS_MODULE + "loss = NormalizedLoss(torch.tensor(labels).to(device), labels)\n")
    assert [(f.code, f.line) for f in findings] == [("DL204", 6)]
    assert findings[0].message.endswith("(when called from line 12)")


def test_a_module_constructor_handed_host_tensors_stays_quiet():
    assert lint(_LOSS_MODULE + "loss = NormalizedLoss(torch.tensor(labels), labels).to(device)\n") == []


# ------------------------------------------------------------------ a module's `forward` on a call's values

_SCORER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Scorer(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.fc = nn.Linear(4, 4)\n"  # 6
    "    def forward(self, x, labels=None):\n"  # 7
    "        out = self.fc(x)\n"  # 8
    "        if labels is not None:\n"  # 9
    "            return out, labels.numpy()\n"  # 10
    "        return out\n"  # 11
    "def run(x, labels, device):\n"  # 12
)


def test_a_module_call_runs_its_forward_on_the_values_it_hands():
    # `labels` is of unknown kind in forward's own analysis; this call hands it a GPU tensor
    findings = lint(_SCORER + "    model = Scorer().to(device)\n    return model(x.to(device), labels.to(device))\n")
    assert [(f.code, f.line) for f in findings] == [("DL204", 10)]
    assert findings[0].message.endswith("(when called from line 14)")
    assert findings[0].message.startswith("`labels` lives on `device`")  # where the caller put it


def test_a_correct_model_whose_caller_moves_the_batch_and_keeps_the_labels_stays_quiet():
    assert lint(_SCORER + "    model = Scorer().to(device)\n    return model(x.to(device), labels)\n") == []
    assert lint(_SCORER + "    model = Scorer().to(device)\n    return model(x.to(device))\n") == []


def test_a_module_on_the_host_gets_no_pass_of_its_forward():
    # never moved: the call's values and the model are on the CPU together
    assert lint(_SCORER + "    model = Scorer()\n    return model(x, labels.cpu())\n") == []


def _blocks(table: str) -> str:
    return _BLOCKS.replace("torch.arange(10)", table)


_BLOCKS = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Block(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.fc = nn.Linear(4, 4)\n"  # 6
    "    def forward(self, x, idx, table=None):\n"  # 7
    "        if table is None:\n"  # 8
    "            table = torch.arange(10)\n"  # 9
    "        return self.fc(x) * table[idx]\n"  # 10
    "class Net(nn.Module):\n"  # 11
    "    def __init__(self):\n"  # 12
    "        super().__init__()\n"  # 13
    "        self.blocks = nn.ModuleList([Block() for _ in range(3)])\n"  # 14
    "    def forward(self, x, idx):\n"  # 15
    "        for block in self.blocks:\n"  # 16
    "            x = block(x, idx)\n"  # 17
    "        return x\n"  # 18
    "def main(device):\n"  # 19
    "    model = Net().to(device)\n"  # 20
    "    x = torch.randn(2, 4, device=device)\n"  # 21
)


def test_a_submodule_called_in_a_loop_over_a_module_list_runs_its_forward_with_its_defaults():
    # main -> Net.forward (idx on `device`) -> each Block.forward, whose `table` keeps its
    # default: the host table is indexed by the GPU index
    findings = lint(_BLOCKS + "    idx = torch.randint(0, 10, (2,), device=device)\n    return model(x, idx)\n")
    assert [(f.code, f.line) for f in findings] == [("DL207", 10)]
    assert findings[0].message.endswith("(when called from line 17)")
    assert "created on `device` by `torch.randint` at line 22" in findings[0].message


def test_a_module_list_loop_whose_table_follows_the_index_stays_quiet():
    code = _blocks("torch.arange(10, device=idx.device)")
    assert lint(code + "    idx = torch.randint(0, 10, (2,), device=device)\n    return model(x, idx)\n") == []


def test_forwards_own_analysis_keeps_its_inputs_on_the_models_device():
    code = _SCORER + "    model = Scorer().to(device)\n    return model(x.to(device), labels.to(device))\n"
    module = cst.parse_module(code)

    class Sink:
        def __getattr__(self, name):
            return lambda *args: None

    analyzer = FlowAnalyzer(module, Sink(), module.code_for_node)
    analyzer.run()
    scorer = next(node for node in module.body if isinstance(node, cst.ClassDef))
    forward = next(node for node in scorer.body.body if isinstance(node, cst.FunctionDef) and node.name.value == "forward")
    state = analyzer.function_states[forward]
    assert state["labels"].kind == Kind.UNKNOWN and state["labels"].device is None  # the pass left it as it was
    assert analyzer.call_context is None


_PAGES = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Net(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.fc = nn.Linear(4, 4)\n"  # 6
    "    def forward(self, pages):\n"  # 7
    "        batch = torch.stack(pages)\n"  # 8
    "        return self.fc(batch)\n"  # 9
    "def main(device, arrays):\n"  # 10
    "    model = Net().to(device)\n"  # 11
)


def test_a_list_of_host_tensors_handed_to_a_moved_model_is_followed_into_its_forward():
    # doctr's predictors: the pages are stacked into a batch inside `forward`, never moved
    findings = lint(_PAGES + "    return model([torch.from_numpy(a) for a in arrays])\n")
    assert [(f.code, f.line) for f in findings] == [("DL203", 9)]
    assert findings[0].message.endswith("(when called from line 12)")


def test_a_list_of_moved_tensors_handed_to_a_moved_model_stays_quiet():
    assert lint(_PAGES + "    return model([torch.from_numpy(a).to(device) for a in arrays])\n") == []


def test_a_list_of_host_batches_written_out_at_the_call_is_reported_there_only():
    # `model([ids, mask])`: DL203 reports the unmoved entry at the call; no pass re-finds it
    code = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n"  # 1-3
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = nn.Embedding(9, 4)\n"  # 4-7
        "    def forward(self, x):\n        ids, mask = x\n        return self.embed(ids) * mask.unsqueeze(-1)\n"  # 8-10
        "model = Net().to('cuda')\nfor ids, mask in DataLoader(ds, batch_size=8):\n    out = model([ids, mask])\n"  # 11-13
    )
    findings = lint(code)
    assert [(f.code, f.line) for f in findings] == [("DL203", 13)]


# RandLA-Net's local encoding (15xx twin): the neighbour search runs on host coordinates, the
# encoding gathers the coordinates with the host indices and moves its concatenation to the
# features' device
_NEIGHBOURS = (
    'import torch\n'  # 1
    'import torch.nn as nn\n'  # 2
    'def knn(support, query, k):\n'  # 3
    '    dist = torch.cdist(query, support)\n'  # 4
    '    d, idx = dist.topk(k, dim=-1, largest=False)\n'  # 5
    '    return idx, d\n'  # 6
    'class LocalSpatialEncoding(nn.Module):\n'  # 7
    '    def __init__(self, d, device):\n'  # 8
    '        super().__init__()\n'  # 9
    '        self.mlp = nn.Conv2d(10, d)\n'  # 10
    '        self.device = device\n'  # 11
    '    def forward(self, coords, features, knn_output):\n'  # 12
    '        idx, dist = knn_output\n'  # 13
    '        B, N, K = idx.size()\n'  # 14
    '        expanded_idx = idx.unsqueeze(1).expand(B, 3, N, K)\n'  # 15
    '        expanded_coords = coords.transpose(-2, -1).unsqueeze(-1).expand(B, 3, N, K)\n'  # 16
    '        neighbor_coords = torch.gather(expanded_coords, 2, expanded_idx)\n'  # 17
    '        expanded_idx = idx.unsqueeze(1).expand(B, features.size(1), N, K).to(features.device)\n'  # 18
    '        expanded_features = features.expand(B, -1, N, K)\n'  # 19
    '        neighbor_features = torch.gather(expanded_features, 2, expanded_idx)\n'  # 20
    '        concat = torch.cat((expanded_coords, neighbor_coords, expanded_coords - neighbor_coords,\n'  # 21
    '                            dist.unsqueeze(-3)), dim=-3).to(features.device)\n'  # 22
    '        return torch.cat((self.mlp(concat), neighbor_features), dim=-3)\n'  # 23
    'class LocalFeatureAggregation(nn.Module):\n'  # 24
    '    def __init__(self, d_in, d_out, num_neighbors, device):\n'  # 25
    '        super().__init__()\n'  # 26
    '        self.num_neighbors = num_neighbors\n'  # 27
    '        self.mlp1 = nn.Conv2d(d_in, d_out // 2)\n'  # 28
    '        self.lse = LocalSpatialEncoding(d_out // 2, device)\n'  # 29
    '        self.mlp2 = nn.Conv2d(d_out, d_out)\n'  # 30
    '    def forward(self, coords, features):\n'  # 31
    '        knn_output = knn(coords.cpu().contiguous(), coords.cpu().contiguous(), self.num_neighbors)\n'  # 32
    '        x = self.mlp1(features)\n'  # 33
    '        x = self.lse(coords, x, knn_output)\n'  # 34
    '        return self.mlp2(x.max(dim=-1, keepdim=True).values)\n'  # 35
    'class RandLANet(nn.Module):\n'  # 36
    '    def __init__(self, d_in, num_classes, num_neighbors=4, device=torch.device("cpu")):\n'  # 37
    '        super().__init__()\n'  # 38
    '        self.fc_start = nn.Linear(d_in, 8)\n'  # 39
    '        self.encoder = LocalFeatureAggregation(8, 32, num_neighbors, device)\n'  # 40
    '        self.head = nn.Conv2d(32, num_classes, 1)\n'  # 41
    '        self.device = device\n'  # 42
    '        self.to(device)\n'  # 43
    '    def forward(self, points):\n'  # 44
    '        coords = points[..., :3].clone().cpu()\n'  # 45
    '        x = self.fc_start(points).transpose(-2, -1).unsqueeze(-1)\n'  # 46
    '        x = self.encoder(coords, x)\n'  # 47
    '        return self.head(x).squeeze(-1)\n'  # 48
    'def main():\n'  # 49
    '    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'  # 50
    '    model = RandLANet(6, 5, 4, device)\n'  # 51
    '    return model(torch.randn(2, 64, 6).to(device))\n'  # 52
)


def test_a_forwards_own_calls_do_not_run_on_an_input_its_callers_hand_on_the_host():
    # the aggregation's own analysis takes `coords` to be on the model's device; its only
    # caller hands host coordinates, so the encoding's pass on that assumption is not run
    assert lint(_NEIGHBOURS) == []


def test_a_forwards_own_calls_run_where_its_callers_hand_the_input_on_the_models_device():
    code = _NEIGHBOURS.replace("points[..., :3].clone().cpu()", "points[..., :3].clone()")
    findings = lint(code)
    assert [(f.code, f.line) for f in findings] == [("DL207", 17), ("DL201", 21)]
    assert findings[0].message.endswith("(when called from line 34)")


# a module whose forward runs a neighbour search on the host: it reads `coords` only as
# `coords.cpu()`, so a host tensor handed in is what it wants (RandLA-Net-like encoders)
_HOST_SEARCH = (
    "import torch\n"  # 1
    "import torch.nn as nn\n"  # 2
    "class Neighbours(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.proj = nn.Linear(3, 8)\n"  # 6
    "    def forward(self, coords, feats):\n"  # 7
    "        idx = torch.cdist(coords.cpu(), coords.cpu()).topk(4).indices\n"  # 8
    "        return self.proj(feats), idx\n"  # 9
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 10
    "model = Neighbours().to(device)\n"  # 11
    "points = torch.randn(16, 3)\n"  # 12
    "feats = torch.randn(16, 3).to(device)\n"  # 13
    "out = model(points, feats)\n"  # 14
)


def test_an_input_the_forward_only_takes_to_the_host_may_come_in_on_the_host():
    assert lint(_HOST_SEARCH) == []


def test_an_input_the_forward_also_reads_as_it_came_is_still_the_calls_mismatch():
    code = _HOST_SEARCH.replace("        return self.proj(feats), idx\n", "        return self.proj(feats + coords), idx\n")
    assert [(f.code, f.line) for f in lint(code)] == [("DL201", 14)]
