"""Models and factories for tests/test_runtime_simulate.py, in a module of their own so that the
simulation process (and `devicelint simulate MODULE:FACTORY`) can import them.

A line marked ``# planted: NAME`` mixes a CPU tensor into a GPU one on purpose; the tests find
those lines by their marker.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import devicelint


class SequenceZoo(nn.Module):
    """Each everyday sequence layer in turn, each followed by a planted CPU tensor: a finding at
    every planted line shows that the layer before it ran on fake CUDA and the run went on."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.lstm_time_major = nn.LSTM(8, 4, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(8, 8, batch_first=True)
        self.gru_time_major = nn.GRU(8, 8, num_layers=2)
        self.packed_gru = nn.GRU(8, 4, batch_first=True, bidirectional=True)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)
        self.transformer = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, lengths_on_gpu: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(x)
        hidden = hidden + torch.zeros(8)  # planted: lstm
        time_major, _ = self.lstm_time_major(hidden.transpose(0, 1))
        hidden = time_major.transpose(0, 1) + torch.zeros(8)  # planted: lstm time-major
        hidden, _ = self.gru(hidden)
        hidden = hidden + torch.zeros(8)  # planted: gru
        time_major, _ = self.gru_time_major(hidden.transpose(0, 1))
        hidden = time_major.transpose(0, 1) + torch.zeros(8)  # planted: gru time-major
        # lengths on the CPU, as pack_padded_sequence wants them: handed over, and moved back
        for host_lengths in (lengths, lengths_on_gpu.cpu()):
            packed = pack_padded_sequence(hidden, host_lengths, batch_first=True, enforce_sorted=False)
            output, _ = self.packed_gru(packed)
            unpacked, _ = pad_packed_sequence(output, batch_first=True, total_length=hidden.shape[1])
            hidden = unpacked + torch.zeros(8)  # planted: packed
        padding = torch.arange(x.shape[1], device=x.device)[None, :] >= lengths_on_gpu[:, None]
        hidden = self.encoder(hidden, src_key_padding_mask=padding)
        hidden = hidden + torch.zeros(8)  # planted: encoder
        causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1] - 1, device=x.device)
        decoded = self.transformer(hidden, hidden[:, 1:], tgt_mask=causal)
        return (decoded + torch.zeros(8)).pow(2).mean()  # planted: transformer


def zoo_inputs() -> tuple:
    lengths = torch.tensor([6, 3, 5])
    return torch.randn(3, 6, 4), devicelint.keep_on_cpu(lengths), lengths.clone()


def make_zoo_training_step() -> devicelint.Simulation:
    model = SequenceZoo()
    optimizer = torch.optim.Adam(model.parameters())
    return devicelint.Simulation(model, zoo_inputs(), optimizer=optimizer)  # the model returns its loss


def make_zoo_in_eval_mode():
    return SequenceZoo().eval(), zoo_inputs()


class Pipeline(nn.Module):
    """Model parallel as PyTorch's tutorial writes it: two halves on two GPUs."""

    def __init__(self, forget_the_move: bool) -> None:
        super().__init__()
        self.forget_the_move = forget_the_move
        self.first = nn.Sequential(nn.Linear(10, 10), nn.ReLU()).to("cuda:0")
        self.second = nn.Linear(10, 5).to("cuda:1")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.first(x.to("cuda:0"))
        return self.second(x if self.forget_the_move else x.to("cuda:1"))  # planted: second half


class TwoPipelines(nn.Module):
    """A correct pipeline and one that forgets to move between its halves, in one run."""

    def __init__(self) -> None:
        super().__init__()
        self.right = Pipeline(forget_the_move=False)
        self.wrong = Pipeline(forget_the_move=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.right(x).sum() + self.wrong(x).to("cuda:1").sum()


def make_model_parallel() -> devicelint.Simulation:
    model = TwoPipelines()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return devicelint.Simulation(model, torch.randn(20, 10), optimizer=optimizer)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def _classifier_step(move_the_loss: bool) -> devicelint.Simulation:
    """A training script's setup, run on the simulated GPU: the optimizer is built before the
    model moves (fine: the move keeps the parameters), the loss has class weights."""
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.to("cuda")
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]))
    if move_the_loss:
        criterion = criterion.to("cuda")
    return devicelint.Simulation(
        model=model, inputs=torch.randn(5, 4), target=torch.tensor([0, 1, 2, 1, 0]), loss_fn=criterion, optimizer=optimizer
    )


def make_training_step() -> devicelint.Simulation:
    return _classifier_step(move_the_loss=True)


def make_training_step_with_unmoved_loss() -> devicelint.Simulation:
    return _classifier_step(move_the_loss=False)


class Thresholded(nn.Module):
    """Python control flow on a GPU value: a fake tensor has none, so the run stops there."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.proj(x) + torch.ones(4)  # planted: before the branch
        if hidden.sum() > 0:  # stops here
            return hidden
        return -hidden


class PackedWithGpuLengths(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(4, 8, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)  # planted: lengths
        return self.rnn(packed)[1]


def make_packed_with_gpu_lengths():
    return PackedWithGpuLengths(), (torch.randn(3, 5, 4), torch.tensor([5, 2, 3]))


def make_failing():
    raise ValueError("no checkpoint here")
