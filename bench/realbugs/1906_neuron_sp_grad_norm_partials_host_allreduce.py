# source: https://github.com/dylanyunlon/Neuron_SP/issues/150
# error: RuntimeError: No backend type associated with device type cpu
# bug: the heterogeneous-GPU gradient-norm skip check collects each rank's partial squared
#      gradient norm into a one-element tensor built explicitly on the CPU and all-reduces it over
#      the training process group, which uses the NCCL backend: NCCL has no CPU implementation, so
#      the first clip_grad_norm step crashes on every rank. The fix named in the issue moves the
#      partial tensor to the GPU before the all_reduce (the norms are GPU values to begin with); the
#      host construction is marked (DL316, a host tensor handed to a collective of an NCCL process
#      group; marked DL201, the closest rule then, until DL316 was added in session 16).
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn


class HeteroGradNormSkip:
    def __init__(self, process_group, max_norm=1.0, skip_factor=10.0):
        self._pg = process_group
        self.max_norm = max_norm
        self.skip_factor = skip_factor

    def _local_partial(self, params):
        total = 0.0
        for p in params:
            if p.grad is not None:
                total += float(p.grad.detach().float().norm(2) ** 2)
        return total

    def _maybe_allreduce_partials(self, partial_val):
        partial_tensor = torch.tensor([partial_val], dtype=torch.float64, device="cpu")  # expect: DL316
        dist.all_reduce(partial_tensor, op=dist.ReduceOp.SUM, group=self._pg)
        return partial_tensor.item() ** 0.5

    def should_skip(self, params):
        global_norm = self._maybe_allreduce_partials(self._local_partial(params))
        return global_norm > self.max_norm * self.skip_factor, global_norm


def train_step(model, optimizer, skipper, batch, device):
    x, y = batch
    loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    skip, norm = skipper.should_skip(model.parameters())
    if not skip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), skipper.max_norm)
        optimizer.step()
    return loss.item(), norm


def main():
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group(backend, init_method="file://" + store, rank=0, world_size=1)
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    model = nn.Linear(8, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    skipper = HeteroGradNormSkip(dist.group.WORLD)
    print(train_step(model, optimizer, skipper, (torch.randn(4, 8), torch.randn(4, 1)), device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
