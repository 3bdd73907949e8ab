"""Device spellings that fail on common machines: a second GPU hard-coded in a portable program
(DL302), a CPU tensor type demanded by a check (DL306), a device flag that shadows the move
method of its object (DL305)."""

from __future__ import annotations

import textwrap

from conftest import lint


def _codes(source: str, code: str, saying: str = "") -> list[int]:
    return sorted(
        finding.line for finding in lint(textwrap.dedent(source), rule_code=code) if finding.code == code and saying in finding.message
    )


def test_a_second_gpu_hard_coded_in_a_program_that_asks_for_a_gpu_is_flagged() -> None:
    source = """
        import torch

        def evaluate(net, batch, device=torch.device("cuda:2")):
            return net.to(device)(batch.to(device))

        class Runner:
            def __init__(self, net, dev="cuda:3"):
                self.dev = dev
                self.net = net

            def run(self, x):
                return self.net(x.to(self.dev))

        def probe(points):
            cloud = torch.randn(8, 3).to("cuda:1")
            return cloud + points

        if torch.cuda.is_available():
            target = "cuda:1"
        else:
            target = "cpu"
        print(evaluate(torch.nn.Linear(3, 1), torch.rand(2, 3), device=target))
    """
    assert _codes(source, "DL302", "has no GPU") == [4, 8, 16, 20]


def test_a_second_gpu_in_code_planned_for_several_gpus_is_left_alone() -> None:
    # counts the GPUs
    counted = """
        import torch
        n = torch.cuda.device_count()
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        x = torch.rand(3).to("cuda:1")
    """
    # spreads a model over two GPUs on purpose (model parallel with DataParallel pieces)
    parallel = """
        import torch
        from torch import nn
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        left = nn.DataParallel(nn.Linear(4, 4), device_ids=[0, 1]).to("cuda:0")
        right = nn.Linear(4, 2).to("cuda:1")
    """
    # a script that never asks whether a GPU exists (DL314's kind of program)
    script = """
        import torch
        net = torch.nn.Linear(4, 2).to("cuda:1")
    """
    # a device only compared, never used to place anything
    compared = """
        import torch
        expected = torch.device("cuda:1")
        ok = torch.cuda.is_available() and parse("1") == expected
    """
    for source in (counted, parallel, script, compared):
        assert _codes(source, "DL302", "has no GPU") == [], source


def test_a_check_that_demands_a_cpu_tensor_type_is_flagged_but_a_filter_is_not() -> None:
    source = """
        import torch
        from torch import LongTensor

        def pool(x, keep):
            if not isinstance(keep, torch.BoolTensor):
                raise TypeError("keep")
            return x[keep]

        def gather(x, idx):
            if not isinstance(idx, LongTensor):
                idx = torch.as_tensor(idx)
            return x[idx]

        def step(t):
            if isinstance(t, (int, torch.LongTensor)):
                raise ValueError("pass a float timestep")
            if not isinstance(t, torch.Tensor):
                t = torch.tensor(t)
            if not isinstance(t, (torch.FloatTensor, torch.cuda.FloatTensor)):
                raise TypeError("float")
            return t
    """
    assert _codes(source, "DL306") == [6, 11]


def test_a_device_flag_that_shadows_the_move_method_is_flagged() -> None:
    source = """
        import torch
        from torch import nn

        class Wrapper:
            def cpu(self):
                self.net = self.net.cpu()
                self.cpu = True
                return self

        class Net(nn.Module):
            def __init__(self, use_gpu):
                super().__init__()
                self.cuda = use_gpu and torch.cuda.is_available()

        class Trainer(nn.Module):
            def __init__(self, cuda=False):
                super().__init__()
                self.cuda = cuda

        class Settings:
            def __init__(self):
                self.cuda = torch.cuda.is_available()

        class Patched(nn.Module):
            def __init__(self, mover):
                super().__init__()
                self.to = mover.to
                self.cpu = lambda: self
    """
    assert _codes(source, "DL305") == [8, 14, 19]


def test_a_model_grown_by_a_method_in_the_loop_is_moved_there_on_purpose() -> None:
    source = """
        import torch
        from torch import nn

        class Incremental(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList()
                self.head = None

            def grow(self, classes):
                self.blocks.append(nn.Linear(4, 4))

            def new_head(self, classes):
                self.head = nn.Linear(4, classes)

            def freeze(self):
                for p in self.parameters():
                    p.requires_grad_(False)

        def tasks(device):
            net = Incremental()
            for classes in (2, 4):
                net.grow(classes)
                net.to(device)
            other = Incremental()
            for classes in (2, 4):
                other.new_head(classes)
                other.to(device)
            fixed = Incremental()
            for classes in (2, 4):
                fixed.freeze()
                fixed.to(device)
    """
    assert _codes(source, "DL401") == [33]


def test_a_legacy_constructor_of_a_zero_is_data_not_an_empty_placeholder() -> None:
    source = """
        import torch

        def thresholds(scores):
            order = torch.nonzero(scores).flatten()
            ends = torch.cat((order, torch.LongTensor([0])))
            empty = torch.cat((order, torch.LongTensor([])))
            return ends, empty
    """
    assert _codes(source, "DL202") == [6]


def test_a_stored_device_handed_to_a_helper_that_places_with_it_is_flagged() -> None:
    source = """
        import torch
        from torch import nn

        def pooled(x, width, device="cpu"):
            out = torch.zeros(x.shape[0], width).to(device)
            return out + x.mean(1, keepdim=True)

        def described(x, device):
            print("running on", device)
            return x * 2

        class Pool(nn.Module):
            def __init__(self, width, device="cpu"):
                super().__init__()
                self.width = width
                self.device = device
                self.proj = nn.Linear(width, width)

            def forward(self, x):
                y = described(x, self.device)
                return self.proj(pooled(y, self.width, self.device))
    """
    assert _codes(source, "DL206") == [22]


def test_an_in_place_comparison_returns_its_receiver_on_its_device() -> None:
    source = """
        import torch

        def binarize(scores):
            return scores.sigmoid().gt_(0.5)

        def polygons(masks):
            return [row.nonzero() for row in masks.int().numpy()]

        def polygons_on_host(masks):
            return [row.nonzero() for row in masks.int().cpu().numpy()]

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        scores = torch.randn(3, 8, 8, device=device)
        print(polygons(binarize(scores)), polygons_on_host(binarize(scores)))
    """
    assert _codes(source, "DL204") == [8]


def test_a_host_gradient_handed_to_backward_of_a_placed_output_is_flagged() -> None:
    source = """
        import torch

        class Saliency:
            def __init__(self, model):
                self.model = model
                self.device = "cuda" if torch.cuda.is_available() else "cpu"

            def explain(self, image, label=None):
                self.model = self.model.to(self.device)
                out = self.model(image.to(self.device))
                if label is None:
                    seed = None
                else:
                    seed = torch.zeros(1, out.shape[-1])
                    seed[0, label] = 1.0
                out.backward(retain_graph=True, gradient=seed)
                return out

            def explain_on_device(self, image):
                self.model = self.model.to(self.device)
                out = self.model(image.to(self.device))
                out.backward(torch.ones(1, out.shape[-1], device=out.device))
                return out

        s = Saliency(torch.nn.Linear(3, 4))
        s.explain(torch.rand(1, 3), 2)
        s.explain_on_device(torch.rand(1, 3))
    """
    assert _codes(source, "DL202") == [15]


def test_a_loss_object_compares_its_input_with_a_host_target() -> None:
    source = """
        import torch
        from torch import nn

        class Ratio:
            def __init__(self, net, device):
                self.net = net.to(device)
                self.device = device
                self.criterion = nn.BCEWithLogitsLoss()

            def loss(self, pairs):
                logits = self.net(pairs.to(self.device)).squeeze(-1)
                labels = torch.ones(logits.shape[0])
                return self.criterion(logits, labels)

            def loss_on_device(self, pairs):
                logits = self.net(pairs.to(self.device)).squeeze(-1)
                labels = torch.ones(logits.shape[0], device=logits.device)
                return self.criterion(logits, labels)

        device = "cuda" if torch.cuda.is_available() else "cpu"
        r = Ratio(nn.Linear(6, 1), device)
        r.loss(torch.rand(8, 6)); r.loss_on_device(torch.rand(8, 6))
    """
    assert _codes(source, "DL202") == [13]
