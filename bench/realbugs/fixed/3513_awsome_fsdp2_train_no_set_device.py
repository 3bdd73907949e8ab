# source: https://github.com/awslabs/awsome-distributed-ai/issues/1041
# fixed twin: PR #1046 (commit 04d3f3d, "Fix FSDP2 train.py: add missing torch.cuda.set_device() call") inserts
#             torch.cuda.set_device(device) after the local device is computed.
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch import optim
from torch.distributed.fsdp import fully_shard


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, h):
        return h + self.mlp(self.norm(h))


class CausalLM(nn.Module):
    def __init__(self, vocab=1000, dim=64, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([Block(dim) for _ in range(n_layers)])
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h = self.embed(input_ids)
        for layer in self.layers:
            h = layer(h)
        logits = self.head(h)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return {"loss": loss, "logits": logits}


def train(model, optimizer, train_dataloader, global_rank, world_size, max_steps=4):
    model.train()
    for batch_idx, input_data in enumerate(train_dataloader):
        optimizer.zero_grad(set_to_none=True)
        step_start = time.time()
        loss = model(input_ids=input_data, attention_mask=None, labels=input_data)["loss"]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        throughput = input_data.shape[0] * world_size / (time.time() - step_start)
        if global_rank == 0:
            print("Batch %d Loss: %.5f, Speed: %.2f samples/sec" % (batch_idx, loss.item(), throughput))
        if batch_idx + 1 >= max_steps:
            break


def main():
    dist.init_process_group()
    global_rank = dist.get_rank()
    device = global_rank % torch.cuda.device_count()
    torch.cuda.set_device(device)
    world_size = dist.get_world_size()

    # initialize the model on the meta device
    with torch.device("meta"):
        model = CausalLM()

    for module in model.modules():
        if isinstance(module, Block):
            fully_shard(module, reshard_after_forward=True)
    fully_shard(model, reshard_after_forward=True)

    # materialize the sharded model on CUDA
    model.to_empty(device=torch.device("cuda"))

    optimizer = optim.AdamW(model.parameters(), betas=(0.9, 0.95), lr=1e-4, weight_decay=0.2)
    train_dataloader = [torch.randint(0, 1000, (2, 32)) for _ in range(4)]
    train(model, optimizer, train_dataloader, global_rank, world_size)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
