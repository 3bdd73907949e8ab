# source: https://github.com/alexhernandezgarcia/gflownet/pull/449
# error: RuntimeError: Expected all tensors to be on the same device (Grid.states2policy with device=cuda, issue #307)
# bug: the one-hot policy encoding of grid states builds its column offsets and row ids with
#      torch.arange on the CPU while the states were converted onto the env's device (cuda).
import torch


def tlong(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device=device, dtype=torch.long)
    return torch.tensor(x, dtype=torch.long, device=device)


class Grid:
    def __init__(self, n_dim=2, length=3, device="cuda", float_precision=32):
        self.n_dim = n_dim
        self.length = length
        self.device = torch.device(device)
        self.float = torch.float32 if float_precision == 32 else torch.float64
        self.source = [0] * n_dim

    def states2policy(self, states):
        """One-hot encodes each dimension of a batch of grid states and concatenates them."""
        states = tlong(states, device=self.device)
        n_states = states.shape[0]
        device = states.device
        index_dtype = states.dtype
        cols = states + torch.arange(self.n_dim, device=device, dtype=index_dtype) * self.length
        rows = torch.repeat_interleave(torch.arange(n_states, device=device, dtype=index_dtype), self.n_dim)
        states_policy = torch.zeros(
            (n_states, self.length * self.n_dim), dtype=self.float, device=device
        )
        states_policy[rows, cols.flatten()] = 1.0
        return states_policy


if __name__ == "__main__":
    env = Grid(n_dim=3, length=5, device="cuda")
    encoded = env.states2policy([[0, 1, 2], [4, 4, 0]])
