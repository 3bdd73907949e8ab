"""Models composed by injection: ``Seq2Seq(encoder)``, ``GreedySearchDecoder(encoder, decoder)``,
where ``__init__`` keeps ``self.encoder = encoder``. Where every construction the file makes of
the class hands that parameter a module of one class of the file, the attribute holds a module of
that class in the other methods (its ``forward`` runs on what they hand it), and a module class
that owns no parameters of its own is where the modules it keeps were placed."""

from __future__ import annotations

import libcst as cst

from conftest import lint
from devicelint.analysis.flow import FlowAnalyzer
from devicelint.analysis.values import Kind

_ENCODER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Encoder(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.fc = nn.Linear(4, 4)\n"  # 6
    "    def forward(self, x):\n"  # 7
    "        return self.fc(x)\n"  # 8
    "class Seq2Seq(nn.Module):\n"  # 9
    "    def __init__(self, encoder):\n"  # 10
    "        super().__init__()\n"  # 11
    "        self.encoder = encoder\n"  # 12
    "    def forward(self, x):\n"  # 13
    "        start = torch.zeros(x.size(0), 4)\n"  # 14
    "        return self.encoder(start)\n"  # 15
)


def test_a_host_tensor_the_outer_model_hands_its_injected_encoder_is_found():
    findings = lint(_ENCODER + "model = Seq2Seq(Encoder()).to('cuda')\n")
    assert [(f.code, f.line) for f in findings] == [("DL202", 14)]
    assert "the `Encoder` module handed to `Seq2Seq()` at line 16" in findings[0].message


def test_an_injected_encoder_handed_a_tensor_on_the_inputs_device_stays_quiet():
    code = _ENCODER.replace("torch.zeros(x.size(0), 4)", "torch.zeros(x.size(0), 4, device=x.device)")
    assert lint(code + "model = Seq2Seq(Encoder()).to('cuda')\n") == []


def test_constructions_that_hand_modules_of_two_classes_join_to_unknown():
    # `self.encoder` may be either: nothing is known of which module runs
    code = _ENCODER + "class Other(nn.Module):\n    def forward(self, x):\n        return x\n"  # 16-18
    assert lint(code + "a = Seq2Seq(Encoder()).to('cuda')\nb = Seq2Seq(Other()).to('cuda')\n") == []


def test_a_class_handed_on_uncalled_may_be_built_where_the_analysis_does_not_see():
    # `build(Seq2Seq, ...)` may hand the encoder it likes: the one construction seen tells nothing
    code = _ENCODER + "a = Seq2Seq(Encoder()).to('cuda')\nb = build(Seq2Seq, 'cuda')\n"
    assert lint(code) == []


def test_a_construction_that_leaves_the_encoder_out_tells_nothing():
    code = _ENCODER.replace("def __init__(self, encoder):", "def __init__(self, encoder=None):")
    assert lint(code + "a = Seq2Seq(Encoder()).to('cuda')\nb = Seq2Seq().to('cuda')\n") == []


_SEARCHER = (
    "import torch\nimport torch.nn as nn\n"  # 1-2
    "class EncoderRNN(nn.Module):\n"  # 3
    "    def __init__(self, hidden_size):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.embedding = nn.Embedding(8, hidden_size)\n"  # 6
    "        self.gru = nn.GRU(hidden_size, hidden_size)\n"  # 7
    "    def forward(self, input_seq, input_lengths):\n"  # 8
    "        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(input_seq), input_lengths)\n"  # 9
    "        return self.gru(packed)\n"  # 10
    "class GreedySearchDecoder(nn.Module):\n"  # 11
    "    def __init__(self, encoder, device):\n"  # 12
    "        super().__init__()\n"  # 13
    "        self.encoder, self.device = encoder, device\n"  # 14
    "    def forward(self, input_seq, input_length):\n"  # 15
    "        outputs, hidden = self.encoder(input_seq, input_length)\n"  # 16
    "        return outputs\n"  # 17
    "def evaluate(searcher, input_batch, lengths, device):\n"  # 18
    "    input_batch = input_batch.to(device)\n"  # 19
)
_SEARCHER_MAIN = (
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "encoder = EncoderRNN(16).to(device)\n"
    "searcher = GreedySearchDecoder(encoder, device)\n"
    "evaluate(searcher, torch.tensor([[3, 4]]), torch.tensor([2]), device)\n"
)


def test_gpu_lengths_handed_through_a_searcher_to_its_injected_encoder_are_found_where_packed():
    # the chatbot tutorial: the searcher owns no parameters, its encoder was moved to `device`
    code = _SEARCHER + "    lengths = lengths.to(device)\n    return searcher(input_batch, lengths)\n" + _SEARCHER_MAIN  # 20-21
    findings = lint(code)
    assert [(f.code, f.line) for f in findings] == [("DL201", 9)]
    assert "moved there at line 20" in findings[0].message
    assert findings[0].message.endswith("(when called from line 16)")


def test_lengths_kept_on_the_host_for_the_injected_encoder_stay_quiet():
    code = _SEARCHER + "    lengths = lengths.to('cpu')\n    return searcher(input_batch, lengths)\n" + _SEARCHER_MAIN
    assert lint(code) == []


def test_the_searcher_is_where_its_injected_encoder_was_placed():
    code = _SEARCHER + "    return searcher(input_batch, lengths)\n" + _SEARCHER_MAIN
    module = cst.parse_module(code)

    class Sink:
        def __getattr__(self, name):
            return lambda *args: None

    analyzer = FlowAnalyzer(module, Sink(), module.code_for_node)
    analyzer.run()
    evaluate = next(node for node in module.body if isinstance(node, cst.FunctionDef) and node.name.value == "evaluate")
    searcher = analyzer.function_states[evaluate]["searcher"]
    assert searcher.kind == Kind.MODULE and searcher.device is not None and searcher.device.label == "device"
    decoder = next(node for node in module.body if isinstance(node, cst.ClassDef) and node.name.value == "GreedySearchDecoder")
    forward = next(node for node in decoder.body.body if isinstance(node, cst.FunctionDef) and node.name.value == "forward")
    encoder = analyzer.function_states[forward]["self.encoder"]
    assert encoder.kind == Kind.MODULE and encoder.info is not None and encoder.info.name == "EncoderRNN"


def test_a_plain_class_searcher_keeps_the_encoder_its_construction_hands_it():
    # a plain class's `__init__` is analysed with what its constructions hand it (the same path)
    code = (
        _SEARCHER.replace("class GreedySearchDecoder(nn.Module):", "class GreedySearchDecoder:")
        .replace("        super().__init__()\n        self.encoder, self.device", "        self.encoder, self.device")
        .replace("def forward(self, input_seq, input_length)", "def __call__(self, input_seq, input_length)")
    )
    findings = lint(code + "    lengths = lengths.to(device)\n    return searcher(input_batch, lengths)\n" + _SEARCHER_MAIN)
    assert [(f.code, f.line) for f in findings] == [("DL201", 9)]


def test_a_model_built_by_a_function_at_the_end_of_the_file_is_met_before_forward_runs():
    # `build(device)` waits for callers like any helper; the `forward`s that read the injected
    # encoder wait for it, since the text calls `Seq2Seq(` there
    findings = lint(_ENCODER + "def build(device):\n    return Seq2Seq(Encoder()).to(device)\n")
    assert [(f.code, f.line) for f in findings] == [("DL202", 14)]
