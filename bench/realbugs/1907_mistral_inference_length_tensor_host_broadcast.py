# source: https://github.com/mistralai/mistral-inference/issues/252
# error: RuntimeError: No backend type associated with device type cpu
# bug: the interactive chat entry point, launched with torchrun over several GPUs, initialises the
#      default (NCCL) process group and pins each rank to its GPU; rank 0 reads the prompt, and the
#      number of prompt tokens is sent to the other ranks in a one-element tensor built on the
#      host (torch.tensor([len(tokens)], dtype=torch.int), torch.tensor([0]) on the other ranks)
#      and handed straight to dist.broadcast, which NCCL cannot do for CPU tensors. The fix PRs 257
#      and 266 (both closed unmerged when the repository was archived) move the length tensor to
#      the rank's CUDA device before the broadcast; since the fix inserts that move, the broadcast
#      it precedes is marked (DL316, a host tensor handed to a collective of an NCCL process group;
#      marked DL201, the closest rule then, until DL316 was added in session 16).
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn


def is_torchrun():
    return "WORLD_SIZE" in os.environ or dist.is_initialized()


class TinyLM(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.embed(tokens))


def encode(text, vocab=32):
    return [ord(c) % vocab for c in text]


def generate(model, tokens, max_tokens, device):
    ids = torch.tensor([tokens], device=device)
    for _ in range(max_tokens):
        next_id = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids[0, len(tokens):].tolist()


def interactive(prompts, max_tokens=5):
    should_print = True
    if is_torchrun():
        rank = dist.get_rank()
        if torch.cuda.is_available():
            torch.cuda.set_device(rank)
        should_print = rank == 0
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    model = TinyLM().to(device)
    outputs = []
    for prompt in prompts:
        if should_print:
            tokens = encode(prompt)
            length_tensor = torch.tensor([len(tokens)], dtype=torch.int)
        else:
            length_tensor = torch.tensor([0], dtype=torch.int)
        if is_torchrun():
            dist.broadcast(length_tensor, src=0)  # expect: DL316
        if not should_print:
            tokens = int(length_tensor.item()) * [0]
        outputs.append(generate(model, tokens, max_tokens, device))
    return outputs


if __name__ == "__main__":
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group(backend, init_method="file://" + store, rank=0, world_size=1)
    print(interactive(["hello", "how are you"]))
    dist.destroy_process_group()
