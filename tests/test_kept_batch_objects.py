"""A plain class of the file with a ``to()`` of its own whose ``__init__`` keeps the host tensors
it is handed (a batch-input object) is a batch on the host where one of them is the program's
data: handed unmoved to a moved model it is DL203's; its own ``to()`` returning ``self`` moves it
in place (no DL101, and the model call after it is fine)."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import numpy as np\n"  # 1
    "import torch\n"  # 2
    "from torch import nn\n"  # 3
    "class Inputs:\n"  # 4
    "    def __init__(self, tokens, lengths):\n"  # 5
    "        self.tokens = tokens\n"  # 6
    "        self.lengths = lengths\n"  # 7
    "    def to(self, device):\n"  # 8
    "        self.tokens = self.tokens.to(device)\n"  # 9
    "        self.lengths = self.lengths.to(device)\n"  # 10
    "        return self\n"  # 11
    "class Reader(nn.Module):\n"  # 12
    "    def __init__(self):\n"  # 13
    "        super().__init__()\n"  # 14
    "        self.table = nn.Embedding(50, 8)\n"  # 15
    "    def forward(self, inputs):\n"  # 16
    "        return self.table(inputs.tokens).sum(1) / inputs.lengths.unsqueeze(-1)\n"  # 17
    "def encode(rows):\n"  # 18
    "    tokens = torch.from_numpy(np.asarray(rows))\n"  # 19
    "    return Inputs(tokens, torch.ones(len(rows)))\n"  # 20
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"  # 21
    "reader = Reader().to(device)\n"  # 22
)


def test_unmoved_input_object_of_data_reaches_a_moved_model():
    source = _HEAD + (
        "batch = encode([[3, 4], [5, 6]])\n"  # 23
        "out = reader(batch)\n"  # 24
    )
    findings = [f for f in lint(source) if f.severity.value in ("error", "warning")]
    assert [(f.line, f.code) for f in findings] == [(24, "DL203")]


def test_input_object_moved_in_place_by_its_own_to_is_fine():
    source = _HEAD + (
        "batch = encode([[3, 4], [5, 6]])\n"  # 23
        "batch.to(device)\n"  # 24
        "out = reader(batch)\n"  # 25
    )
    assert [f for f in lint(source) if f.severity.value in ("error", "warning")] == []


def test_input_object_of_constants_is_not_a_batch():
    # made of constants, not of data: nothing says it is the program's input
    source = _HEAD + (
        "batch = Inputs(torch.zeros(2, 3, dtype=torch.long), torch.ones(2))\n"  # 23
        "out = reader(batch)\n"  # 24
    )
    assert [f for f in lint(source) if f.code in ("DL203", "DL101")] == []


def test_input_object_without_own_to_is_left_alone():
    source = _HEAD.replace("    def to(self, device):\n", "    def moved(self, device):\n") + (
        "batch = encode([[3, 4], [5, 6]])\n"  # 23
        "out = reader(batch)\n"  # 24
    )
    assert [f for f in lint(source) if f.code == "DL203"] == []


_TOKENS = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "from transformers import AutoTokenizer\n"  # 3
    "class Scorer(nn.Module):\n"  # 4
    "    def __init__(self):\n"  # 5
    "        super().__init__()\n"  # 6
    "        self.table = nn.Embedding(100, 4)\n"  # 7
    "    def forward(self, input_ids, attention_mask):\n"  # 8
    "        return (self.table(input_ids) * attention_mask.unsqueeze(-1)).sum(1)\n"  # 9
    "    def score(self, input_ids, attention_mask, **options):\n"  # 10
    "        return self(input_ids, attention_mask)\n"  # 11
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"  # 12
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"  # 13
    "scorer = Scorer().to(device)\n"  # 14
)


def test_text_stored_beside_tokens_leaves_them_on_the_host():
    # a string entry put into the tokenizer's batch does not move its tensors
    source = _TOKENS + (
        "def run(text):\n"  # 15
        "    enc = tokenizer(text, return_tensors='pt')\n"  # 16
        "    enc['text'] = text\n"  # 17
        "    return scorer(enc['input_ids'], enc['attention_mask'])\n"  # 18
        "run('hello')\n"  # 19
    )
    assert (16, "DL203") in [(f.line, f.code) for f in lint(source)]


def test_input_left_unmoved_beside_one_the_caller_moves_through_a_spread_call():
    # `_ask(enc, **options)` binds `enc` though the call spreads keywords; the caller moves
    # the ids it hands the model's method and not the mask: reported in the caller, where it
    # takes the mask out of the batch (not at the tokenizer call)
    source = _TOKENS + (
        "class Runner:\n"  # 15
        "    def prepare(self, text):\n"  # 16
        "        enc = tokenizer(text, return_tensors='pt')\n"  # 17
        "        enc['text'] = text\n"  # 18
        "        return enc\n"  # 19
        "    def _ask(self, enc, **options):\n"  # 20
        "        ids = enc['input_ids']\n"  # 21
        "        mask = enc['attention_mask']\n"  # 22
        "        return scorer.score(\n"  # 23
        "            input_ids=ids.to(device),\n"  # 24
        "            attention_mask=mask,\n"  # 25
        "            **options,\n"  # 26
        "        )\n"  # 27
        "    def __call__(self, text, **options):\n"  # 28
        "        return self._ask(self.prepare(text), **options)\n"  # 29
        "print(Runner()('hello'))\n"  # 30
    )
    found = [(f.line, f.code) for f in lint(source) if f.code == "DL203"]
    assert found == [(22, "DL203")]
    fixed = source.replace("attention_mask=mask,", "attention_mask=mask.to(device),")
    assert [f for f in lint(fixed) if f.code in ("DL203", "DL201")] == []


_METRICS = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "def agree(p, q):\n"  # 3
    "    return (p.argmax(dim=1) == q.argmax(dim=1)).float().mean().item()\n"  # 4
    "def gap(p, q):\n"  # 5
    "    return (p - q).abs().mean().item()\n"  # 6
    "def evaluate(net, xs, ys, score=agree):\n"  # 7
    "    out = net(xs.to('cuda'))\n"  # 8
    "    return score(out, ys)\n"  # 9
    "net = nn.Linear(4, 3).cuda()\n"  # 10
    "xs = torch.randn(8, 4)\n"  # 11
    "ys = torch.randn(8, 3)\n"  # 12
)


def test_each_callback_a_call_hands_or_leaves_to_its_default_is_followed():
    source = _METRICS + (
        "print(evaluate(net, xs, ys))\n"  # 13
        "print(evaluate(net, xs, ys, score=gap))\n"  # 14
    )
    found = [(f.line, f.code) for f in lint(source) if f.code == "DL201"]
    assert found == [(4, "DL201"), (6, "DL201")]


def test_callbacks_given_moved_targets_are_fine():
    source = _METRICS + (
        "print(evaluate(net, xs, ys.cuda()))\n"  # 13
        "print(evaluate(net, xs, ys.cuda(), score=gap))\n"  # 14
    )
    assert [f for f in lint(source) if f.code == "DL201"] == []


def test_reduction_along_a_later_dimension_keeps_one():
    # `q.argmax(dim=1)` has a dimension; `q.argmax()` (or along dim 0 of a vector) may not
    source = (
        "import torch\n"
        "def f(p, q):\n"
        "    return p.cuda().argmax(dim=1) == q.argmax(dim=1)\n"  # 3
        "def g(p, q):\n"
        "    return p.cuda().argmax() == q.argmax()\n"  # 5
        "f(torch.randn(4, 3), torch.randn(4, 3))\n"
        "g(torch.randn(4, 3), torch.randn(4, 3))\n"
    )
    assert [(f.line, f.code) for f in lint(source) if f.code == "DL201"] == [(3, "DL201")]


_ENCODE = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "class Chars:\n"  # 3
    "    def encode(self, text):\n"  # 4
    "        return [ord(c) % 64 for c in text]\n"  # 5
    "def to_ids(text, vocab):\n"  # 6
    "    return torch.tensor(vocab.encode(text)).unsqueeze(0)\n"  # 7
    "def extend(net, ids, steps):\n"  # 8
    "    for _ in range(steps):\n"  # 9
    "        window = ids[:, -4:]\n"  # 10
    "        nxt = net(window)[:, -1].argmax(-1, keepdim=True)\n"  # 11
    "        ids = torch.cat((ids, nxt), dim=1)\n"  # 12
    "    return ids\n"  # 13
    "net = nn.Embedding(64, 64)\n"  # 14
    "net.to('cuda')\n"  # 15
)


def test_text_converted_by_a_call_is_data_reported_where_the_caller_hands_it():
    # `torch.tensor(vocab.encode(text))` of the text a plain function is handed: the program's
    # data; the helper that slices it for the model got it unmoved from its caller
    source = _ENCODE + "out = extend(net, to_ids('hello', Chars()), 3)\n"  # 16
    assert [(f.line, f.code) for f in lint(source) if f.code == "DL203"] == [(16, "DL203")]
    fixed = source.replace("to_ids('hello', Chars())", "to_ids('hello', Chars()).to('cuda')")
    assert [f for f in lint(fixed) if f.code == "DL203"] == []


def test_tensor_of_a_call_on_module_inputs_is_not_data():
    # in a module's own methods the inputs are tensors: what they convert is not the data
    source = (
        "import torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 3)\n"
        "    def forward(self, x, sizes):\n"
        "        s = torch.tensor(sizes.tolist())\n"
        "        return self.fc(x) * s\n"
        "net = Net().cuda()\nnet(torch.randn(2, 3).cuda(), torch.ones(3))\n"
    )
    assert [f for f in lint(source) if f.code == "DL203"] == []
