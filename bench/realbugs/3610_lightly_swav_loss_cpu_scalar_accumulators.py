# source: https://github.com/lightly-ai/lightly/pull/1858
# error: (PR "Fix CUDA Tests for Losses": "Fix device mismatch error when using CUDA in the test of losses")
#        Expected all tensors to be on the same device, in tests/loss/test_swav_loss.py::test_forward_pass_cuda
# bug: lightly/loss/swav_loss.py's SwaVLoss.forward starts its accumulators as loss = torch.tensor(0.0) and, for
#      every high-resolution crop, subloss = torch.tensor(0.0), both on the CPU, then adds the CUDA sublosses into
#      them in place (subloss += self.subloss(...), loss += subloss / ...); an in-place op whose result is a CPU
#      tensor cannot take a CUDA operand, so the loss fails for GPU outputs. The fix (commit aa7f1f3) starts both
#      with high_resolution_outputs[...].new_zeros(1); the two lines are marked (DL202). (The same PR rewrites
#      VICRegLLoss's torch.tensor(0.0, device=self.device) accumulators; those already took the device of the
#      input and are not part of this reproduction.) Reductions: docstrings and the sinkhorn_gather_distributed
#      check are cut; the driver is test_forward_pass_cuda for one of its parametrizations (n_low_res=2,
#      sinkhorn_iterations=2), its skipif(not torch.cuda.is_available()) kept as an if guard, so without a GPU it
#      does nothing. Its assert converts the loss with .numpy() as the test does; without NumPy (absent here) it
#      stops there.
from typing import List, Union

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


@torch.no_grad()
def sinkhorn(out: Tensor, iterations: int = 3, epsilon: float = 0.05, gather_distributed: bool = False) -> Tensor:
    world_size = 1
    if gather_distributed and dist.is_initialized():
        world_size = dist.get_world_size()

    Q = torch.exp(out / epsilon).t()
    sum_Q = torch.sum(Q)
    if world_size > 1:
        dist.all_reduce(sum_Q)
    Q /= sum_Q

    B = Q.shape[1] * world_size

    for _ in range(iterations):
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        if world_size > 1:
            dist.all_reduce(sum_of_rows)
        Q /= sum_of_rows
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B

    Q *= B
    return Q.t()


class SwaVLoss(nn.Module):
    def __init__(self, temperature: float = 0.1, sinkhorn_iterations: int = 3, sinkhorn_epsilon: float = 0.05,
                 sinkhorn_gather_distributed: bool = False):
        super(SwaVLoss, self).__init__()
        self.temperature = temperature
        self.sinkhorn_iterations = sinkhorn_iterations
        self.sinkhorn_epsilon = sinkhorn_epsilon
        self.sinkhorn_gather_distributed = sinkhorn_gather_distributed

    def subloss(self, z: Tensor, q: Tensor) -> Tensor:
        return -torch.mean(torch.sum(q * F.log_softmax(z / self.temperature, dim=1), dim=1))

    def forward(self, high_resolution_outputs: List[Tensor], low_resolution_outputs: List[Tensor],
                queue_outputs: Union[List[Tensor], None] = None) -> Tensor:
        n_crops = len(high_resolution_outputs) + len(low_resolution_outputs)

        # Multi-crop iterations
        loss = torch.tensor(0.0)  # expect: DL202
        for i in range(len(high_resolution_outputs)):
            # Compute codes of i-th high resolution crop
            with torch.no_grad():
                outputs = high_resolution_outputs[i].detach()

                # Append queue outputs
                if queue_outputs is not None:
                    outputs = torch.cat((outputs, queue_outputs[i].detach()))

                # Compute the codes
                q = sinkhorn(
                    outputs,
                    iterations=self.sinkhorn_iterations,
                    epsilon=self.sinkhorn_epsilon,
                    gather_distributed=self.sinkhorn_gather_distributed,
                )

                # Drop queue similarities
                if queue_outputs is not None:
                    q = q[: len(high_resolution_outputs[i])]

            # Compute subloss for each pair of crops
            subloss = torch.tensor(0.0)  # expect: DL202
            for v in range(len(high_resolution_outputs)):
                if v != i:
                    subloss += self.subloss(high_resolution_outputs[v], q)

            for v in range(len(low_resolution_outputs)):
                subloss += self.subloss(low_resolution_outputs[v], q)

            loss += subloss / (n_crops - 1)

        return loss / len(high_resolution_outputs)


# --- tests/loss/test_swav_loss.py::test_forward_pass_cuda (n_low_res=2, sinkhorn_iterations=2) ---
if __name__ == "__main__":
    if torch.cuda.is_available():
        n = 32
        n_high_res = 2
        high_res = [torch.eye(n, n).cuda() for i in range(n_high_res)]
        criterion = SwaVLoss(sinkhorn_iterations=2)
        low_res = [torch.eye(n, n).cuda() for i in range(2)]
        loss = criterion(high_res, low_res)
        # loss should be almost zero for unit matrix
        assert loss.cpu().numpy() < 0.5
        print(loss)
