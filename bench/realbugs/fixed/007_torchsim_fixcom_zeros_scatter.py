# source: https://github.com/TorchSim/torch-sim/pull/583
# error: crash on CUDA when the FixCom constraint is used (CPU accumulator scattered with CUDA indices/masses)
# bug: the centre-of-mass helpers allocate their per-system accumulators with torch.zeros
#      and no device, then scatter_add_ CUDA masses and positions into them.
import torch


def get_centers_of_mass(positions, masses, system_idx, n_systems):
    coms = torch.zeros((n_systems, 3), dtype=positions.dtype, device=positions.device).scatter_add_(
        0,
        system_idx.unsqueeze(-1).expand(-1, 3),
        masses.unsqueeze(-1) * positions,
    )
    system_masses = torch.zeros((n_systems,), dtype=positions.dtype, device=positions.device).scatter_add_(
        0, system_idx, masses
    )
    return coms / system_masses.unsqueeze(-1)


class FixCom:
    def __init__(self, system_idx):
        self.system_idx = system_idx
        self.coms = None

    def adjust_positions(self, state, new_positions):
        system_idx = state.system_idx
        dtype = state.positions.dtype
        device = state.device
        system_mass = torch.zeros(state.n_systems, dtype=dtype, device=device).scatter_add_(
            0, system_idx, state.masses
        )
        if self.coms is None:
            self.coms = get_centers_of_mass(state.positions, state.masses, system_idx, state.n_systems)
        new_com = torch.zeros((state.n_systems, 3), dtype=dtype, device=device).scatter_add_(
            0,
            system_idx.unsqueeze(-1).expand(-1, 3),
            state.masses.unsqueeze(-1) * new_positions,
        )
        new_com /= system_mass.unsqueeze(-1)
        displacement = torch.zeros(state.n_systems, 3, dtype=dtype, device=device)
        displacement[self.system_idx] = -new_com[self.system_idx] + self.coms[self.system_idx]
        new_positions.add_(displacement[system_idx])
