"""General facts of torch and Python data flow, each with a case that must stay silent.

* `enumerate`/`zip`/`next(iter(...))` of an object whose `__iter__` is a generator of the file
  iterate what it yields, as a `for` loop over the object does;
* `clip_grad_norm_(model.parameters(), ...)` returns the total norm, a 0-dim tensor where the
  parameters are;
* audio writers (`torchaudio.save`, `soundfile.write`) read their samples from host memory.
"""
from __future__ import annotations

import textwrap

from conftest import lint


def lines(code: str, rule: str) -> list[int]:
    return sorted(finding.line for finding in lint(textwrap.dedent(code)) if finding.code == rule)


_LOADER = """
    import torch

    class Batches:
        def __init__(self, xs, ys, gpu):
            self.xs, self.ys, self.gpu = xs, ys, gpu

        def __iter__(self):
            xs, ys = self.xs, self.ys
            if self.gpu:
                xs, ys = xs.cuda(), ys.cuda()
            for start in range(0, len(xs), 8):
                yield xs[start:start + 8], ys[start:start + 8]

    class Lookup:
        def __init__(self, n):
            self.weights = torch.linspace(0.0, 1.0, n)

        def pick(self, classes):
            return self.weights[classes]

    lookup = Lookup(10)
    batches = Batches(torch.randn(64, 3), torch.randint(0, 10, (64,)), torch.cuda.is_available())
"""


def test_enumerate_of_a_hand_written_loader_iterates_what_it_yields():
    code = _LOADER + """
    for step, pair in enumerate(batches):
        x, y = pair[0], pair[1]
        print(step, lookup.pick(y))
    """
    assert lines(code, "DL207") == [20]


def test_enumerate_of_a_hand_written_loader_that_keeps_the_host_is_silent():
    code = _LOADER.replace("xs.cuda(), ys.cuda()", "xs.float(), ys.long()") + """
    for step, pair in enumerate(batches):
        x, y = pair[0], pair[1]
        print(step, lookup.pick(y))
    """
    assert lines(code, "DL207") == []


def test_next_of_iter_of_a_hand_written_loader():
    code = _LOADER + """
    x, y = next(iter(batches))
    print(lookup.pick(y))
    """
    assert lines(code, "DL207") == [20]


_TRAINING = """
    import numpy as np
    import torch
    import torch.nn as nn

    def clipped(model, limit):
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), limit)
        if np.isnan(norm):
            return None
        return norm

    net = nn.Linear(4, 1)
    if torch.cuda.is_available():
        net = net.cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        loss = net(torch.randn(8, 4).to(next(net.parameters()).device)).pow(2).mean()
        loss.backward()
        clipped(net, 1.0)
        opt.step()
"""


def test_total_norm_of_clipped_gpu_parameters_handed_to_numpy():
    assert lines(_TRAINING, "DL204") == [8]


def test_total_norm_read_as_a_float_or_moved_is_silent():
    assert lines(_TRAINING.replace("np.isnan(norm)", "np.isnan(norm.item())"), "DL204") == []
    assert lines(_TRAINING.replace("np.isnan(norm)", "np.isnan(norm.cpu())"), "DL204") == []


def test_total_norm_of_host_parameters_is_silent():
    code = _TRAINING.replace("    if torch.cuda.is_available():\n        net = net.cuda()\n", "")
    assert lines(code, "DL204") == []


_SYNTH = """
    import torch
    import torch.nn as nn
    import torchaudio

    device = "cuda" if torch.cuda.is_available() else "cpu"
    vocoder = nn.ConvTranspose1d(16, 1, 256, stride=256).to(device)
    mel = torch.randn(1, 16, 40, device=device)
    with torch.no_grad():
        wave = vocoder(mel)[0]
    torchaudio.save("out.wav", wave, 22050)
"""


def test_gpu_samples_handed_to_an_audio_writer():
    assert lines(_SYNTH, "DL204") == [11]
    soundfile = _SYNTH.replace("import torchaudio", "import soundfile as sf").replace(
        'torchaudio.save("out.wav", wave, 22050)', 'sf.write("out.wav", data=wave.squeeze(0), samplerate=22050)'
    )
    assert lines(soundfile, "DL204") == [11]


def test_host_samples_handed_to_an_audio_writer_are_silent():
    assert lines(_SYNTH.replace("wave, 22050", "wave.cpu(), 22050"), "DL204") == []


_GRAPH_LAYER = """
    import torch
    import torch.nn as nn

    class GraphLayer(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.mix = nn.Linear(n, n)
            self.adjacency = torch.eye(n)

        def forward(self, x):
            self.adjacency = self.adjacency.cuda(x.get_device())
            return self.mix(x @ self.adjacency)

    device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    layer = GraphLayer(5).to(device)
    print(layer(torch.randn(2, 5).to(device)))
"""


def test_cuda_move_indexed_by_a_tensors_get_device():
    # get_device() is -1 for a CPU tensor: the move fails on the CPU run the program allows
    assert lines(_GRAPH_LAYER, "DL302") == [12]


def test_cuda_move_indexed_by_get_device_after_a_gpu_test_is_silent():
    code = _GRAPH_LAYER.replace(
        "            self.adjacency = self.adjacency.cuda(x.get_device())",
        "            if x.is_cuda:\n                self.adjacency = self.adjacency.cuda(x.get_device())",
    )
    assert lines(code, "DL302") == []


_SCATTER_SCORES = """
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    class Popularity(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(n))

        def score(self, users):
            return torch.rand(len(users))

    def rank(model, users, rows, cols):
        table = torch.zeros(8, 8, device=device)
        found = model.score(users.to(device))
        table[rows.to(device), cols.to(device)] = found
        return table

    net = Popularity(8).to(device)
    print(rank(net, torch.arange(4), torch.arange(4), torch.arange(4)))
"""


def test_host_values_written_at_tensor_indices_of_a_device_tensor():
    # index_put_ moves the indices but not the values: a CPU vector into a GPU table fails
    assert lines(_SCATTER_SCORES, "DL202") == [13]


def test_values_written_by_slices_or_given_the_device_are_silent():
    # with slices the store is a copy, which crosses devices
    sliced = _SCATTER_SCORES.replace("table[rows.to(device), cols.to(device)] = found", "table[0, :4] = found")
    assert lines(sliced, "DL202") == []
    placed = _SCATTER_SCORES.replace("torch.rand(len(users))", "torch.rand(len(users), device=users.device)")
    assert lines(placed, "DL202") == []
    scalar = _SCATTER_SCORES.replace("table[rows.to(device), cols.to(device)] = found", "table[rows.to(device), cols.to(device)] = found.sum()")
    assert lines(scalar, "DL202") == []


_POLICY = """
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.distributions import Categorical, Independent, Normal

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    policy = nn.Linear(6, 3).to(device)

    def choose(observation):
        scores = policy(torch.as_tensor(observation, dtype=torch.float32).to(device))
        picked = Categorical(logits=scores).sample()
        return picked.numpy()

    def jitter(observation):
        centre = policy(torch.as_tensor(observation, dtype=torch.float32).to(device))
        step = Independent(Normal(centre, 0.1), 1).rsample()
        return np.tanh(step)
"""


def test_samples_of_a_distribution_are_where_its_parameters_are():
    assert lines(_POLICY, "DL204") == [13, 18]


def test_samples_moved_to_the_host_or_drawn_from_host_parameters_are_silent():
    moved = _POLICY.replace("picked.numpy()", "picked.cpu().numpy()").replace("np.tanh(step)", "np.tanh(step.detach().cpu())")
    assert lines(moved, "DL204") == []
    host = _POLICY + """
    def noise(n):
        return Normal(torch.zeros(n), torch.ones(n)).sample().numpy()
    """
    assert lines(host, "DL204") == [13, 18]


def test_gpu_tensors_handed_to_pandas_or_imageio():
    code = """
        import imageio
        import pandas as pd
        import torch
        import torch.nn as nn

        device = "cuda" if torch.cuda.is_available() else "cpu"
        encoder = nn.Linear(8, 3).to(device)
        codes = encoder(torch.randn(5, 8).to(device)).detach()
        pd.DataFrame(codes).to_csv("codes.csv")
        pd.DataFrame(codes.cpu()).to_csv("codes.csv")
        frames = torch.sigmoid(codes).mul(255).byte()
        imageio.imwrite("frame.png", frames)
        imageio.imwrite("frame.png", frames.cpu())
    """
    assert lines(code, "DL204") == [10, 13]


_PENALTY = """
    import torch
    import torch.nn as nn
    from torch import autograd

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)

    def penalty(real, fake):
        t = torch.rand(real.size(0), 1, device=real.device)
        mixed = (t * real + (1 - t) * fake).requires_grad_(True)
        rating = critic(mixed)
        slopes = autograd.grad(outputs=rating, inputs=mixed, grad_outputs=torch.ones(rating.size()), create_graph=True)[0]
        return ((slopes.norm(2, dim=1) - 1) ** 2).mean()

    print(penalty(torch.randn(8, 4).to(device), torch.randn(8, 4).to(device)))
"""


def test_host_grad_outputs_for_outputs_on_the_device():
    assert lines(_PENALTY, "DL202") == [13]


def test_grad_outputs_made_beside_the_outputs_are_silent():
    like = _PENALTY.replace("torch.ones(rating.size())", "torch.ones_like(rating)")
    assert lines(like, "DL202") == []
    placed = _PENALTY.replace("torch.ones(rating.size())", "torch.ones(rating.size(), device=rating.device)")
    assert lines(placed, "DL202") == []


def test_host_table_filled_at_indices_with_a_handed_tensor_is_silent():
    # host-side bookkeeping: the caller's tags may well be on the host, and the table is moved once built
    code = """
        import torch

        def layout(tags: torch.Tensor, n: int):
            count = tags.shape[0]
            table = torch.empty(n, dtype=torch.long)
            picked = torch.arange(count)
            table[picked] = tags.to(torch.long)
            return table
    """
    assert lines(code, "DL202") == []


def test_device_built_from_get_device():
    code = _GRAPH_LAYER.replace(
        "self.adjacency = self.adjacency.cuda(x.get_device())",
        'self.adjacency = self.adjacency.to(torch.device("cuda", x.get_device()))',
    )
    found = [f for f in lint(textwrap.dedent(code)) if f.code == "DL302"]
    assert [f.line for f in found] == [12] and "get_device()` is -1" in found[0].message
    # on x's own GPU, and only there: not "the current GPU"
    guarded = code.replace(
        '            self.adjacency = self.adjacency.to(torch.device("cuda", x.get_device()))',
        '            if x.is_cuda:\n                self.adjacency = self.adjacency.to(torch.device("cuda", x.get_device()))',
    )
    assert lines(guarded, "DL302") == []
