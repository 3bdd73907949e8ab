"""``torch.set_default_device("cuda")`` is process state: a function every call of which runs
under it makes its factories' tensors there, and a shuffling ``DataLoader`` it builds without a
``generator=`` draws its permutation there with a CPU generator (DL208)."""

from __future__ import annotations

from conftest import lint

_FIT = (
    "import torch\n"  # 1
    "from torch.utils.data import DataLoader, TensorDataset\n"  # 2
    "def fit(x, y, **loader_options):\n"  # 3
    "    loader = DataLoader(TensorDataset(x, y), batch_size=8, {options})\n"  # 4
    "    return [xb.sum() for xb, yb in loader]\n"  # 5
    "def main(use_gpu):\n"  # 6
    "{setup}"
    "    x, y = torch.randn(32, 3), torch.randn(32)\n"
    "    return fit(x, y)\n"
)


def _dl208(options: str, setup: str) -> list[int]:
    return [f.line for f in lint(_FIT.format(options=options, setup=setup)) if f.code == "DL208"]


def test_shuffling_loader_in_a_function_called_under_a_cuda_default_is_reported():
    setup = "    if use_gpu:\n        torch.set_default_device('cuda')\n"
    assert _dl208("shuffle=True", setup) == [4]


def test_shuffling_loader_given_a_generator_on_the_default_device_stays_quiet():
    setup = "    torch.set_default_device('cuda')\n"
    assert _dl208("shuffle=True, generator=torch.Generator(device='cuda')", setup) == []


def test_loader_that_does_not_shuffle_or_runs_without_a_cuda_default_stays_quiet():
    assert _dl208("shuffle=False", "    torch.set_default_device('cuda')\n") == []
    assert _dl208("shuffle=True", "    pass\n") == []


def test_a_function_also_called_without_the_default_is_not_given_it():
    source = _FIT.format(options="shuffle=True", setup="    torch.set_default_device('cuda')\n") + (
        "def cpu_run():\n    return fit(torch.randn(4, 3), torch.randn(4))\n"
    )
    # one call runs it under the CUDA default, the other (module state unknown there) under none
    assert [f.line for f in lint(source) if f.code == "DL208"] == []
