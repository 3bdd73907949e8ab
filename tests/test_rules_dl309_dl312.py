"""DL309 global-rank-as-device and DL312 cuda-tensor-in-dataset: what the analysis traces and
what it deliberately leaves alone."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint


def findings(code: str, rule: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), "example.py", rule) if f.code == rule)


# ---------------------------------------------------------------------------------- DL309


@pytest.mark.parametrize(
    "source",
    [
        "rank = int(os.environ['RANK'])",
        "rank = int(os.environ.get('RANK', 0))",
        "rank = int(os.getenv('RANK'))",
        "rank = int(os.environ['SLURM_PROCID'])",
        "rank = dist.get_rank()",
        "rank = torch.distributed.get_rank()",
    ],
)
def test_global_rank_sources_are_traced(source):
    code = f"""
    import os
    import torch
    import torch.distributed as dist
    {source}
    torch.cuda.set_device(rank)
    """
    assert findings(code, "DL309") == [6]


@pytest.mark.parametrize(
    "source",
    [
        "rank = int(os.environ['LOCAL_RANK'])",
        "rank = dist.get_rank() % torch.cuda.device_count()",
        "rank = dist.get_rank(group)",  # a process group's own rank
        "rank = args.rank",  # unknown: the name says nothing
        "rank = int(os.environ['RANK']) if 'RANK' in os.environ else 0",  # the rank on one path only
    ],
)
def test_local_or_unknown_ranks_are_silent(source):
    code = f"""
    import os
    import torch
    import torch.distributed as dist
    def main(args, group):
        {source}
        torch.cuda.set_device(rank)
    """
    assert findings(code, "DL309") == []


def test_a_parameter_named_rank_is_not_evidence():
    code = """
    import torch
    def worker(rank, world_size):
        torch.cuda.set_device(rank)
        model = torch.nn.Linear(2, 2).to(rank)
        return torch.device(f"cuda:{rank}")
    """
    assert findings(code, "DL309") == []


def test_rank_traced_through_attribute_helper_and_str():
    code = """
    import os
    import torch
    import torch.distributed as dist
    def global_rank():
        return dist.get_rank()
    def setup(args):
        args.rank = int(os.environ["RANK"])
        torch.cuda.set_device(args.rank)
        r = global_rank()
        x = torch.zeros(3).cuda(r)
        name = "cuda:" + str(r)
        return x
    """
    # the concatenated device string is a device of the global rank too
    assert findings(code, "DL309") == [9, 11, 12]


def test_every_device_position():
    code = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    rank = dist.get_rank()
    a = torch.zeros(3, device=rank)
    b = torch.device("cuda", rank)
    c = torch.device(rank)
    d = torch.load("ckpt.pt", map_location=f"cuda:{rank}")
    e = DDP(torch.nn.Linear(2, 2), device_ids=[rank])
    f = torch.zeros(3).to(rank)
    dist.barrier(device_ids=[rank])
    """
    assert findings(code, "DL309") == [6, 7, 8, 9, 10, 11, 12]


def test_device_string_reported_once_where_written():
    code = """
    import torch
    import torch.distributed as dist
    rank = dist.get_rank()
    device = f"cuda:{rank}"
    model = torch.nn.Linear(2, 2).to(device)
    x = torch.zeros(2, device=device)
    label = f"worker {rank}"
    other = f"cuda:{rank}:{rank}"
    """
    assert findings(code, "DL309") == [5]


def test_rank_for_process_group_and_logging_is_fine():
    code = """
    import os
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    if rank == 0:
        print(f"rank {rank} of {dist.get_world_size()}")
    """
    assert findings(code, "DL309") == []


_NCCL_PROGRAM = """
import os
import torch
import torch.distributed as dist
def init_workers():
    dist.init_process_group(backend="nccl")
{select}
def run():
    init_workers()
    gpu = int(os.environ["LOCAL_RANK"])
    net = torch.nn.Linear(4, 4).to(torch.device(f"cuda:{{gpu}}"))
    return torch.nn.parallel.DistributedDataParallel(net, device_ids=[gpu])
if __name__ == "__main__":
    run()
"""


def test_nccl_group_without_the_process_gpu_selected():
    """Each rank places its work on its LOCAL_RANK GPU but never makes it the current device:
    NCCL's communicator, barriers and index-less "cuda" tensors of every rank use GPU 0."""
    assert findings(_NCCL_PROGRAM.format(select=""), "DL309") == [6]


@pytest.mark.parametrize(
    "select",
    [
        "    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))",
        "    torch.accelerator.set_device_index(int(os.environ['LOCAL_RANK']))",
    ],
)
def test_nccl_group_with_a_selected_gpu_is_silent(select):
    assert findings(_NCCL_PROGRAM.format(select=select), "DL309") == []


def test_nccl_group_silent_without_rank_placement_or_in_a_library_helper():
    # gloo: no GPU communicator
    assert findings(_NCCL_PROGRAM.format(select="").replace('"nccl"', '"gloo"'), "DL309") == []
    # device_id= binds the group to its GPU
    assert findings(_NCCL_PROGRAM.format(select="").replace('backend="nccl"', 'backend="nccl", device_id=torch.device("cuda", 0)'), "DL309") == []
    # a setup helper the file only defines: its callers elsewhere may select the GPU
    helper = """
    import os
    import torch
    import torch.distributed as dist
    def setup():
        dist.init_process_group("nccl")
    def train(model):
        local_rank = int(os.environ["LOCAL_RANK"])
        return model.to(f"cuda:{local_rank}")
    """
    assert findings(helper, "DL309") == []
    # no rank-derived GPU: each process may see one GPU (CUDA_VISIBLE_DEVICES per rank)
    plain = """
    import torch
    import torch.distributed as dist
    dist.init_process_group("nccl")
    net = torch.nn.Linear(4, 4).cuda()
    """
    assert findings(plain, "DL309") == []


def test_shadowed_int_is_not_a_conversion():
    code = """
    import os
    import torch
    def int(text):
        return 0
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    """
    assert findings(code, "DL309") == []


# ---------------------------------------------------------------------------------- DL312


def test_dataset_subclass_of_a_file_dataset_is_checked():
    code = """
    import torch
    from torch.utils.data import Dataset
    class Base(Dataset):
        def __len__(self):
            return 4
    class Frames(Base):
        def __getitem__(self, i):
            return torch.zeros(3).cuda()
    """
    assert findings(code, "DL312") == [9]


def test_only_the_methods_workers_run_are_checked():
    code = """
    import torch
    from torch.utils.data import Dataset
    class Frames(Dataset):
        def __init__(self, device):
            self.device = device
        def __getitem__(self, i):
            return torch.zeros(3)
        def to_device(self, batch):
            return batch.to(self.device)
    """
    assert findings(code, "DL312") == []


@pytest.mark.parametrize(
    "expression",
    [
        "torch.zeros(3).to(torch.float16)",
        "torch.zeros(3).to('cpu')",
        "torch.zeros(3).cpu()",
        "torch.zeros(3).pin_memory()",
        "torch.zeros(3, device='cpu')",
        "torch.zeros(3).to(self.template)",  # to where a host tensor is
    ],
)
def test_host_or_unknown_placements_are_silent(expression):
    code = f"""
    import torch
    from torch.utils.data import Dataset
    class Frames(Dataset):
        def __init__(self):
            self.template = torch.zeros(1)
        def __getitem__(self, i):
            return {expression}
    """
    assert findings(code, "DL312") == []


def test_device_argument_and_chosen_device_are_flagged():
    code = """
    import torch
    from torch.utils.data import Dataset
    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    class Frames(Dataset):
        def __init__(self, data, device):
            self.data = torch.as_tensor(data).to(device)
        def __getitem__(self, i):
            return torch.ones(2, device=DEVICE)
    """
    assert findings(code, "DL312") == [7, 9]


def test_not_a_dataset_is_silent():
    code = """
    import torch
    class Cache:
        def __init__(self):
            self.table = torch.zeros(10).cuda()
        def __getitem__(self, i):
            return self.table[i].cuda()
    """
    assert findings(code, "DL312") == []


def test_device_strings_built_by_concatenation_and_percent():
    code = """
    import os
    import torch
    import torch.distributed as dist
    rank = dist.get_rank()
    text_rank = os.environ["RANK"]
    a = torch.device("cuda:" + str(rank))
    b = torch.zeros(2, device="cuda:%d" % rank)
    c = "cuda:%d" % (rank,)
    d = "cuda:" + text_rank
    label = "worker-" + str(rank)
    local = "cuda:%d" % (rank % torch.cuda.device_count())
    path = "ckpt_%d.pt" % rank
    """
    assert findings(code, "DL309") == [7, 8, 9, 10]


def test_methods_the_loading_methods_call_run_in_the_worker_too():
    code = """
    import torch
    from torch.utils.data import Dataset
    class Frames(Dataset):
        def __init__(self, paths, device):
            self.paths, self.device = paths, device
        def __getitem__(self, i):
            return self._load(self.paths[i])
        def _load(self, path):
            return self._decode(path)
        def _decode(self, path):
            return torch.load(path, map_location="cpu").to(self.device)
        def to_device(self, batch):
            return batch.to(self.device)
    """
    assert findings(code, "DL312") == [12]


def test_a_helper_following_the_tensor_it_is_given_is_silent():
    code = """
    import torch
    from torch import Tensor
    from torch.utils.data import Dataset
    class Digits(Dataset):
        def __getitem__(self, i):
            return self.normalize(torch.rand(28, 28), 0.5, 0.2)
        @staticmethod
        def normalize(tensor: Tensor, mean: float, std: float) -> Tensor:
            mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
            return tensor.sub(mean).div(std)
    """
    assert findings(code, "DL312") == []
