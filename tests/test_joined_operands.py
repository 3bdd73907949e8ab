"""`torch.cat`/`torch.stack` refuse a CPU tensor beside a GPU one whatever its rank (session 15,
tune15data); elementwise operations still let a CPU tensor of unknown rank (maybe 0-dim) pass."""

from __future__ import annotations

from conftest import line_codes

CODE = (
    "import torch\nimport torch.nn.functional as F\n"
    "def resample(images):\n    return F.interpolate(images.cpu(), size=(4, 4), mode='bicubic')\n"
    "def join(left, right):\n    resized = resample(right)\n    return {op}\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "join(torch.rand(1, 3, 8, 8, device=device), torch.rand(1, 3, 4, 4, device=device))\n"
)


def codes(op: str) -> list[tuple[int, str]]:
    return line_codes(CODE.format(op=op))


def test_a_host_tensor_of_unknown_rank_beside_a_gpu_one_in_cat_or_stack_is_reported():
    assert codes("torch.cat((left, resized), dim=-1)") == [(7, "DL201")]
    assert codes("torch.stack([left, resized])") == [(7, "DL201")]


def test_an_elementwise_operation_still_lets_a_host_tensor_of_unknown_rank_pass():
    assert codes("left * resized") == []


def test_host_tensors_joined_on_the_host_are_quiet():
    assert codes("torch.cat((left.cpu(), resized), dim=-1)") == []
