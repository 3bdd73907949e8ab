# source: https://github.com/openforcefield/smee/pull/80
# fixed twin: the index offsets and the dispersion counts are made on the device (and with the dtype) of the tensors they meet, through arange_like and tensor_like (commit 894d077, PR 80).
import collections
from dataclasses import dataclass, field
from typing import Dict, List

import torch


def tensor_like(data, other):
    return torch.tensor(data, dtype=other.dtype, device=other.device)


def arange_like(end, other):
    return torch.arange(end, dtype=other.dtype, device=other.device)


@dataclass
class ParameterMap:
    particle_idxs: torch.Tensor
    exclusions: torch.Tensor
    exclusion_scale_idxs: torch.Tensor
    assignment_matrix: torch.Tensor

    def to(self, device):
        return ParameterMap(*(t.to(device) for t in (self.particle_idxs, self.exclusions,
                                                     self.exclusion_scale_idxs, self.assignment_matrix)))


@dataclass
class TensorTopology:
    n_particles: int
    parameters: Dict[str, ParameterMap] = field(default_factory=dict)

    def to(self, device):
        return TensorTopology(self.n_particles, {k: v.to(device) for k, v in self.parameters.items()})


@dataclass
class TensorSystem:
    topologies: List[TensorTopology]
    n_copies: List[int]

    def to(self, device):
        return TensorSystem([t.to(device) for t in self.topologies], self.n_copies)


@dataclass
class TensorPotential:
    type: str
    parameter_keys: List[str]
    parameters: torch.Tensor
    attributes: torch.Tensor

    def to(self, device):
        return TensorPotential(self.type, self.parameter_keys, self.parameters.to(device), self.attributes.to(device))


def broadcast_idxs(system, potential):
    idx_offset = 0
    per_topology_idxs = []
    for topology, n_copies in zip(system.topologies, system.n_copies):
        parameter_map = topology.parameters[potential.type]
        n_interacting_particles = parameter_map.particle_idxs.shape[-1]
        idxs = parameter_map.particle_idxs
        offset = idx_offset + arange_like(n_copies, idxs) * topology.n_particles
        if len(idxs) > 0:
            idxs = offset[:, None, None] + idxs[None, :, :]
            per_topology_idxs.append(idxs.reshape(-1, n_interacting_particles))
        idx_offset += n_copies * topology.n_particles
    return torch.vstack(per_topology_idxs)


def _broadcast_exclusions(system, potential):
    idx_offset = 0
    per_topology_exclusion_idxs = []
    per_topology_exclusion_scales = []
    for topology, n_copies in zip(system.topologies, system.n_copies):
        exclusion_idxs = topology.parameters[potential.type].exclusions
        exclusion_offset = idx_offset + arange_like(n_copies, exclusion_idxs) * topology.n_particles
        idx_offset += n_copies * topology.n_particles
        if len(exclusion_idxs) == 0:
            continue
        exclusion_idxs = exclusion_offset[:, None, None] + exclusion_idxs[None, :, :]
        exclusion_scales = potential.attributes[topology.parameters[potential.type].exclusion_scale_idxs]
        exclusion_scales = torch.broadcast_to(exclusion_scales, (n_copies, *exclusion_scales.shape))
        per_topology_exclusion_idxs.append(exclusion_idxs.reshape(-1, 2))
        per_topology_exclusion_scales.append(exclusion_scales.reshape(-1))
    return torch.vstack(per_topology_exclusion_idxs), torch.cat(per_topology_exclusion_scales)


def _compute_dispersion_correction(system, potential, volume):
    n_by_type = collections.defaultdict(int)
    for topology, n_copies in zip(system.topologies, system.n_copies):
        parameter_counts = topology.parameters["vdW"].assignment_matrix.abs().sum(dim=0)
        for key, count in zip(potential.parameter_keys, parameter_counts):
            n_by_type[key] += count.item() * n_copies
    counts = tensor_like([n_by_type[key] for key in potential.parameter_keys], potential.parameters)
    n_ii_interactions = (counts * (counts + 1.0)) / 2.0
    eps_ii, sig_ii = potential.parameters[:, 0], potential.parameters[:, 1]
    return (n_ii_interactions * eps_ii * sig_ii ** 6).sum() / volume


def compute_vdw_energy(system, potential, coords):
    idxs = broadcast_idxs(system, potential)
    exclusion_idxs, exclusion_scales = _broadcast_exclusions(system, potential)
    distances = (coords[idxs[:, 0]] - coords[idxs[:, 1]]).norm(dim=-1)
    excluded = (coords[exclusion_idxs[:, 0]] - coords[exclusion_idxs[:, 1]]).norm(dim=-1)
    energy = (1.0 / distances ** 6).sum() - (exclusion_scales / excluded ** 6).sum()
    return energy + _compute_dispersion_correction(system, potential, volume=1000.0)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    water = TensorTopology(3, {"vdW": ParameterMap(
        particle_idxs=torch.tensor([[0, 1], [0, 2], [1, 2]]),
        exclusions=torch.tensor([[0, 1]]),
        exclusion_scale_idxs=torch.tensor([0]),
        assignment_matrix=torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]))})
    system = TensorSystem([water], [4]).to(device)
    potential = TensorPotential("vdW", ["O", "H"], torch.tensor([[0.15, 3.1], [0.01, 1.0]]),
                                torch.tensor([0.5])).to(device)
    coords = (torch.arange(12, dtype=torch.float32)[:, None] * torch.tensor([1.0, 0.5, 0.25])).to(device)
    print(compute_vdw_energy(system, potential, coords).item())
