# source: https://github.com/openforcefield/smee/pull/80
# fixed twin: both offsets are made with an arange_like helper on the index tensor's device and dtype, as commit 894d077 does.
import dataclasses

import torch


@dataclasses.dataclass
class ParameterMap:
    particle_idxs: torch.Tensor
    exclusions: torch.Tensor
    exclusion_scale_idxs: torch.Tensor

    def to(self, device):
        return ParameterMap(*(t.to(device) for t in dataclasses.astuple(self)))


@dataclasses.dataclass
class TensorTopology:
    n_particles: int
    parameters: dict

    def to(self, device):
        return TensorTopology(self.n_particles, {k: v.to(device) for k, v in self.parameters.items()})


@dataclasses.dataclass
class TensorSystem:
    topologies: list
    n_copies: list

    def to(self, device):
        return TensorSystem([t.to(device) for t in self.topologies], list(self.n_copies))


def arange_like(end, other):
    return torch.arange(end, dtype=other.dtype, device=other.device)


def broadcast_idxs(system, potential_type):
    idx_offset = 0
    per_topology_idxs = []
    for topology, n_copies in zip(system.topologies, system.n_copies):
        idxs = topology.parameters[potential_type].particle_idxs
        offset = idx_offset + arange_like(n_copies, idxs) * topology.n_particles
        n_interacting = idxs.shape[-1]
        if len(idxs) > 0:
            idxs = offset[:, None, None] + idxs[None, :, :]
            per_topology_idxs.append(idxs.reshape(-1, n_interacting))
        idx_offset += n_copies * topology.n_particles
    return torch.vstack(per_topology_idxs)


def broadcast_exclusions(system, potential_type, scales):
    idx_offset = 0
    all_idxs, all_scales = [], []
    for topology, n_copies in zip(system.topologies, system.n_copies):
        parameter_map = topology.parameters[potential_type]
        exclusion_offset = idx_offset + arange_like(n_copies, parameter_map.exclusions) * topology.n_particles
        idx_offset += n_copies * topology.n_particles
        exclusion_idxs = exclusion_offset[:, None, None] + parameter_map.exclusions[None, :, :]
        exclusion_scales = scales[parameter_map.exclusion_scale_idxs]
        exclusion_scales = torch.broadcast_to(exclusion_scales, (n_copies, *exclusion_scales.shape))
        all_idxs.append(exclusion_idxs.reshape(-1, 2))
        all_scales.append(exclusion_scales.reshape(-1))
    return torch.vstack(all_idxs), torch.cat(all_scales)


def compute_energy(system, conformer, k, scales):
    bonds = broadcast_idxs(system, "Bonds")
    lengths = (conformer[bonds[:, 0]] - conformer[bonds[:, 1]]).norm(dim=-1)
    bond_energy = (k * (lengths - 1.0) ** 2).sum()
    pairs, pair_scales = broadcast_exclusions(system, "vdW", scales)
    r = (conformer[pairs[:, 0]] - conformer[pairs[:, 1]]).norm(dim=-1)
    return bond_energy + (pair_scales / r.pow(6)).sum()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    water = TensorTopology(3, {
        "Bonds": ParameterMap(torch.tensor([[0, 1], [0, 2]]), torch.zeros(0, 2, dtype=torch.long), torch.zeros(0, dtype=torch.long)),
        "vdW": ParameterMap(torch.zeros(0, 2, dtype=torch.long), torch.tensor([[0, 1], [0, 2], [1, 2]]), torch.tensor([0, 0, 1])),
    })
    system = TensorSystem([water], [4]).to(device)
    k = torch.tensor(450.0, device=device, requires_grad=True)
    scales = torch.tensor([0.0, 0.5], device=device)
    conformer = torch.randn(12, 3, device=device)
    energy = compute_energy(system, conformer, k, scales)
    energy.backward()
    print(float(energy), float(k.grad))
