# source: https://github.com/meta-llama/llama-cookbook/issues/90
# error: RuntimeError: CUDA error: invalid device ordinal (3 nodes x 2 GPUs, fine-tuning with FSDP)
# bug: the fine-tuning script reads both LOCAL_RANK and RANK from torchrun but selects the GPU with the
# global rank; every node but the first asks for a GPU index it does not have.
import os

import fire
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from transformers import LlamaForCausalLM

from configs import train_config
from utils.train_utils import clear_gpu_cache, setup, setup_environ_flags, train


def main(**kwargs):
    torch.cuda.manual_seed(train_config.seed)
    torch.manual_seed(train_config.seed)

    if train_config.enable_fsdp:
        setup()
        # torchrun sets these
        local_rank = int(os.environ["LOCAL_RANK"])
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])

    if torch.distributed.is_initialized():
        torch.cuda.set_device(rank)  # expect: DL309
        clear_gpu_cache(local_rank)
        setup_environ_flags(rank)

    model = LlamaForCausalLM.from_pretrained(train_config.model_name)
    if train_config.enable_fsdp:
        model = FSDP(model, device_id=torch.cuda.current_device())
    else:
        model.to("cuda")

    results = train(model, train_config, local_rank if train_config.enable_fsdp else None, rank if train_config.enable_fsdp else None)
    if not train_config.enable_fsdp or rank == 0:
        print(results)


if __name__ == "__main__":
    fire.Fire(main)
