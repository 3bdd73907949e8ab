# source: https://github.com/aidos-lab/pytorch-topological/pull/6
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch.stack)
# bug: the Vietoris-Rips layer computes persistence generators with a host library (ripser on a
#      detached CPU copy of the points) and the pairwise distances with torch.cdist on the input's
#      device. For dimension 0 the creation times are zeros_like of a tensor made from the host
#      generators, so they are on the CPU, while the destruction times index the CUDA distance
#      matrix; stacking the two fails for CUDA inputs. The fix (commit 0966de3) passes
#      device=dist.device to the marked zeros_like (DL202: a tensor made without the device it meets;
#      here zeros_like copies the device of a host tensor).
import torch
import torch.nn as nn


def ripser_parallel(points, maxdim=0):
    # stands in for the host library: a minimum spanning tree of the point cloud (Prim), as
    # (vertex, edge end, edge end) triples on the CPU
    n = points.shape[0]
    dist = torch.cdist(points, points)
    in_tree = [0]
    pairs = []
    while len(in_tree) < n:
        rest = [j for j in range(n) if j not in in_tree]
        sub = dist[in_tree][:, rest]
        k = int(torch.argmin(sub))
        i, j = in_tree[k // len(rest)], rest[k % len(rest)]
        pairs.append([j, i, j])
        in_tree.append(j)
    return {"gens": [torch.tensor(pairs, dtype=torch.long)]}


class PersistenceInformation:
    def __init__(self, pairing, diagram, dimension):
        self.pairing, self.diagram, self.dimension = pairing, diagram, dimension


class VietorisRipsComplex(nn.Module):
    def __init__(self, dim=0, p=2):
        super().__init__()
        self.dim, self.p = dim, p

    def forward(self, x):
        generators = ripser_parallel(x.cpu().detach(), maxdim=self.dim)["gens"]
        distances = torch.cdist(x, x, p=self.p)
        return self._extract_generators_and_diagrams(distances, generators, dim0=True)

    def _extract_generators_and_diagrams(self, dist, gens, dim0=False):
        gens = gens[0]
        if dim0:
            creators = torch.zeros_like(torch.as_tensor(gens)[:, 0])  # expect: DL202
            destroyers = dist[gens[:, 1], gens[:, 2]]
            diagram = torch.stack((creators, destroyers), 1)
            return [PersistenceInformation(gens, diagram, 0)]
        return []


def total_persistence(infos):
    return sum(info.diagram[:, 1].sub(info.diagram[:, 0]).abs().sum() for info in infos)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    points = torch.randn(12, 2, device=device, requires_grad=True)
    layer = VietorisRipsComplex(dim=0)
    loss = total_persistence(layer(points))
    loss.backward()
    print(float(loss))
