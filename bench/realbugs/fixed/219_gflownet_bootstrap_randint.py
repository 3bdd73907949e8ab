# source: https://github.com/alexhernandezgarcia/gflownet/commit/fc877d2f2cac2a4e938866cb2ec14c205701033d
# error: RuntimeError: Expected all tensors to be on the same device (index_select with a cpu index on cuda logprobs)
# bug: the bootstrap helper draws its resampling indices with torch.randint on the CPU and feeds them
#      to index_select on the tensor it received, which lives on the agent's device (cuda).
import torch


def bootstrap_samples(tensor, num_samples):
    """Bootstraps tensor along the last dimension; returns shape [initial_shape, num_samples]."""
    dim_size = tensor.size(-1)
    bs_indices = torch.randint(0, dim_size, size=(num_samples * dim_size,), device=tensor.device)
    bs_samples = torch.index_select(tensor, -1, index=bs_indices)
    bs_samples = bs_samples.view(tensor.size()[:-1] + (num_samples, dim_size)).transpose(-1, -2)
    return bs_samples


class GFlowNetAgent:
    def __init__(self, env, forward_policy, backward_policy, device="cuda"):
        self.env = env
        self.forward_policy = forward_policy
        self.backward_policy = backward_policy
        self.device = torch.device(device)

    def compute_logprobs_trajectories(self, batch, backward=False):
        policy = self.backward_policy if backward else self.forward_policy
        return policy(batch.to(self.device)).sum(-1)

    @torch.no_grad()
    def estimate_logprobs_data(self, batches, n_trajectories=100, bs_num_samples=10000):
        logprobs_f = torch.full((len(batches), n_trajectories), -torch.inf, device=self.device)
        logprobs_b = torch.full((len(batches), n_trajectories), -torch.inf, device=self.device)
        for i, batch in enumerate(batches):
            logprobs_f[i] = self.compute_logprobs_trajectories(batch, backward=False)
            logprobs_b[i] = self.compute_logprobs_trajectories(batch, backward=True)
        logprobs_estimates = torch.logsumexp(logprobs_f - logprobs_b, dim=1) - torch.log(
            torch.tensor(n_trajectories, device=self.device))
        logprobs_f_b_bs = bootstrap_samples(logprobs_f - logprobs_b, num_samples=bs_num_samples)
        logprobs_estimates_bs = torch.logsumexp(logprobs_f_b_bs, dim=1) - torch.log(
            torch.tensor(n_trajectories, device=self.device))
        logprobs_std = torch.std(logprobs_estimates_bs, dim=-1)
        return logprobs_estimates, logprobs_std
