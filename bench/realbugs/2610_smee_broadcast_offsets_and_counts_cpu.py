# source: https://github.com/openforcefield/smee/pull/80
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: once a force field and system have been moved to the GPU (the .to() functions of PR 79), the
#      energy code still builds some of its own tensors on the host: the per-copy index offsets in
#      broadcast_idxs and _broadcast_exclusions come from torch.arange(n_copies), and the
#      per-type particle counts of the dispersion correction from torch.tensor([...]); each then
#      meets the GPU particle indices or LJ parameters. The merged fix (commit 894d077) makes them
#      with helpers that take the device of the tensor they meet (arange_like, tensor_like). Those
#      three changed lines are marked (DL202: factories without device= that meet tensors of the
#      model); the fix's other changes (coordinates read back from a trajectory file, PME moduli) are
#      not reproduced.
import collections
from dataclasses import dataclass, field
from typing import Dict, List

import torch


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
        offset = idx_offset + torch.arange(n_copies) * topology.n_particles  # expect: DL202
        parameter_map = topology.parameters[potential.type]
        n_interacting_particles = parameter_map.particle_idxs.shape[-1]
        idxs = parameter_map.particle_idxs
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
        exclusion_offset = idx_offset + torch.arange(n_copies) * topology.n_particles  # expect: DL202
        idx_offset += n_copies * topology.n_particles
        exclusion_idxs = topology.parameters[potential.type].exclusions
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
    counts = torch.tensor([n_by_type[key] for key in potential.parameter_keys], dtype=torch.float32)  # expect: DL202
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
