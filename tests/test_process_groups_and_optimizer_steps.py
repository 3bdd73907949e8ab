"""DistributedDataParallel around a host model given device_ids (DL205), the
step of an optimizer whose restored state stays on the CPU (DL407), a device picked by name from
`x.is_cuda` (DL302), an NCCL program that never sets the current GPU (DL302), and a host factory
on one path of a tensor an NCCL collective shares (DL316)."""

from __future__ import annotations

from conftest import line_codes


def only(code: str, rule: str) -> list[tuple[int, str]]:
    return [found for found in line_codes(code) if found[1] == rule]


DDP = (
    "import torch\nfrom torch import nn\nfrom torch.nn.parallel import DistributedDataParallel\n"
    "def wrap(rank):\n    layer = nn.Linear(3, 3)\n{move}    return DistributedDataParallel(layer, device_ids={ids})\n"
)


def test_ddp_with_device_ids_around_a_host_model_is_reported():
    assert only(DDP.format(move="", ids="[rank]"), "DL205") == [(6, "DL205")]


def test_ddp_around_a_moved_model_or_without_device_ids_is_quiet():
    assert only(DDP.format(move="    layer.to(rank)\n", ids="[rank]"), "DL205") == []
    assert only(DDP.format(move="", ids="None"), "DL205") == []


RESUME = (
    "import torch\n"
    "def one_epoch(model, data, optim):\n    for x in data:\n        model(x).sum().backward()\n        optim.step()\n"
    "def run(ckpt, data):\n    model = torch.nn.Linear(3, 1)\n    optim = torch.optim.Adam(model.parameters())\n"
    "{load}    model.cuda()\n    one_epoch(model, data, optim)\n"
)


def test_the_first_step_after_the_move_of_an_optimizer_restored_on_the_cpu_is_reported():
    found = only(RESUME.format(load="    optim.load_state_dict(ckpt)\n"), "DL407")
    assert found == [(5, "DL407"), (8, "DL407")]


def test_a_step_of_an_optimizer_that_makes_its_state_lazily_and_restores_nothing_is_quiet():
    assert only(RESUME.format(load=""), "DL407") == []


GROUPS = (
    "import torch\nfrom torch import nn\n"
    "def conv_weights(block):\n    return [m.weight for m in block.{walk}() if isinstance(m, nn.Conv2d)]\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.stem, self.head = nn.Conv2d(3, 3, 1), nn.Conv2d(3, 3, 1)\n"
    "def run(ckpt):\n    net = Net()\n"
    "    opt = torch.optim.SGD([{{'params': conv_weights(net.stem)}}, {{'params': conv_weights(net.head)}}], lr=0.1)\n"
    "    opt.load_state_dict(ckpt)\n    net = nn.DataParallel(net).cuda()  # noqa: DL405\n    return net, opt\n"
)


def test_groups_a_helper_takes_from_submodules_and_a_move_through_the_wrapper_are_followed():
    assert only(GROUPS.format(walk="modules"), "DL407") == [(11, "DL407")]


def test_groups_from_a_helper_that_does_not_walk_its_module_are_not_taken_for_the_models():
    assert only(GROUPS.format(walk="registry"), "DL407") == []


NAMED = (
    "import torch\n"
    "def where(t):\n    name = 'cpu'\n    if t.is_cuda:\n        name = 'cuda'\n    return name, t.shape[0]\n"
    "def counts(t):\n    name, n = where(t)\n    return {use}\n"
)


def test_a_device_named_from_is_cuda_that_a_caller_places_with_is_reported():
    assert only(NAMED.format(use="torch.zeros(n, device=name) + t"), "DL302") == [(5, "DL302")]


def test_a_device_named_from_is_cuda_used_for_no_placement_is_quiet():
    assert only(NAMED.format(use="print(name, n)"), "DL302") == []


NCCL = (
    "import torch\nimport torch.distributed as dist\n"
    "def main(model, loader):\n    dist.init_process_group(backend='nccl')\n{pin}    model.cuda()\n"
    "    for x in loader:\n        model(x.cuda())\n"
)


def test_bare_cuda_after_an_nccl_setup_without_set_device_is_reported_once():
    assert only(NCCL.format(pin=""), "DL302") == [(5, "DL302")]


def test_bare_cuda_after_set_device_is_quiet():
    assert only(NCCL.format(pin="    torch.cuda.set_device(dist.get_rank())\n"), "DL302") == []


COLLECTIVE = (
    "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
    "def mean_of(values, device):\n    if {test}:\n        total = torch.zeros(1)\n"
    "    else:\n        total = torch.full((1,), float(sum(values)), device=device)\n    dist.all_reduce(total)\n    return total\n"
)


def test_a_host_factory_on_the_empty_path_of_an_nccl_collective_is_reported():
    assert only(COLLECTIVE.format(test="len(values) == 0"), "DL316") == [(6, "DL316")]


def test_a_host_factory_on_the_path_without_a_gpu_is_quiet():
    assert only(COLLECTIVE.format(test="not torch.cuda.is_available()"), "DL316") == []
