# source: https://github.com/rballester/tntorch/issues/46
# error: (reported) tntorch.cat of tensor-train tensors whose cores live on CUDA fails with a device mismatch: "Expected all tensors to be on the same device"
# bug: cat pads each input's core (or factor matrix) along the concatenated dimension by
#      allocating a larger zero block with torch.zeros, which lands on the CPU by default, and
#      then adds the input's CUDA core into a slice of it. The issue names the torch.zeros calls;
#      it is open and no fix was made upstream, so there is no twin. The three allocations are
#      marked (DL202: a factory without device= meeting a tensor argument's tensors).
import torch


class TT:
    """A tiny tensor-train tensor: cores[n] has shape (r_{n}, I_n, r_{n+1}); Us are optional factors."""

    def __init__(self, cores, Us=None):
        self.cores = list(cores)
        self.Us = list(Us) if Us is not None else [None] * len(self.cores)

    def dim(self):
        return len(self.cores)

    @property
    def shape(self):
        return [c.shape[-2] if u is None else u.shape[0] for c, u in zip(self.cores, self.Us)]

    def clone(self):
        return TT([c.clone() for c in self.cores], [None if u is None else u.clone() for u in self.Us])

    def __add__(self, other):
        cores = []
        n = self.dim()
        for i, (a, b) in enumerate(zip(self.cores, other.cores)):
            if i == 0:
                cores.append(torch.cat([a, b], dim=2))
            elif i == n - 1:
                cores.append(torch.cat([a, b], dim=0))
            else:
                top = torch.cat([a, torch.zeros_like(a[:, :, :1]).expand(-1, -1, b.shape[2])], dim=2)
                bottom = torch.cat([torch.zeros_like(b[:, :, :1]).expand(-1, -1, a.shape[2]), b], dim=2)
                cores.append(torch.cat([top, bottom], dim=0))
        return TT(cores)

    def full(self):
        out = self.cores[0]
        for c in self.cores[1:]:
            out = torch.tensordot(out, c, dims=([out.dim() - 1], [0]))
        return out.squeeze(0).squeeze(-1)


def cat(*ts, dim):
    if hasattr(ts[0], "__len__") and not isinstance(ts[0], TT):
        ts = ts[0]
    if len(ts) == 1:
        return ts[0].clone()
    shapes = [t.shape[dim] for t in ts]
    sumshapes = [0]
    for s in shapes:
        sumshapes.append(sumshapes[-1] + s)
    for i in range(len(ts)):
        t = ts[i].clone()
        if t.Us[dim] is None:
            if t.cores[dim].dim() == 2:
                t.cores[dim] = torch.zeros(sumshapes[-1], t.cores[dim].shape[-1])  # expect: DL202
            else:
                t.cores[dim] = torch.zeros(t.cores[dim].shape[0], sumshapes[-1], t.cores[dim].shape[-1])  # expect: DL202
            t.cores[dim][..., sumshapes[i]:sumshapes[i + 1], :] += ts[i].cores[dim]
        else:
            t.Us[dim] = torch.zeros(sumshapes[-1], t.Us[dim].shape[-1])  # expect: DL202
            t.Us[dim][sumshapes[i]:sumshapes[i + 1], :] += ts[i].Us[dim]
        if i == 0:
            result = t
        else:
            result = result + t
    return result


def random_tt(shape, rank, device):
    ranks = [1] + [rank] * (len(shape) - 1) + [1]
    return TT([torch.randn(ranks[n], shape[n], ranks[n + 1], device=device) for n in range(len(shape))])


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    a = random_tt([3, 4, 5], 2, device)
    b = random_tt([3, 2, 5], 2, device)
    c = cat(a, b, dim=1)
    print(c.shape, c.full().shape, torch.allclose(c.full(), torch.cat([a.full(), b.full()], dim=1), atol=1e-5))
