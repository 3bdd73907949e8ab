# source: https://github.com/balbasty/cornucopia/pull/22
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (issue 21: augmenting a CUDA image)
# bug: the contrast-lookup augmentation draws its new class means with torch.rand(nk) on the host and
#      scales them by the image's range, (vmax - vmin), which is a 0-dim tensor on the image's device;
#      PyTorch lets 0-dim host tensors join CUDA ones but not the other way round, so a CUDA image
#      fails while the final transform is made (the bin edges from torch.linspace are moved in xform,
#      the means are not used before the failing line). The merged PR (commit a69c96c) appends
#      .to(x); the changed line is marked (DL202: a factory without device= meets a tensor argument).
import torch


class Transform:
    def __init__(self, shared=False):
        self.shared = "channels" if shared else ""

    def get_prm(self):
        return {}

    def __call__(self, x):
        return self.make_final(x).xform(x)


class FinalTransform(Transform):
    def make_final(self, x, max_depth=float("inf")):
        return self


class PerChannelTransform(FinalTransform):
    def __init__(self, transforms, **kwargs):
        super().__init__(**kwargs)
        self.transforms = transforms

    def xform(self, x):
        return torch.cat([t.xform(x[i:i + 1]) for i, t in enumerate(self.transforms)])


class ContrastLookupTransform(Transform):
    class LookupFinalTransform(FinalTransform):
        def __init__(self, edges, mu, **kwargs):
            super().__init__(**kwargs)
            self.edges, self.mu = edges, mu

        def xform(self, x):
            edges, mu = self.edges.to(x), self.mu.to(x)
            mu0 = (edges[:-1] + edges[1:]) / 2
            new_x = x.clone()
            for k in range(len(mu)):
                mask = (edges[k] <= x) & (x < edges[k + 1])
                new_x[mask] += mu[k] - mu0[k]
            return new_x

    def __init__(self, nk=16, keep_background=True, *, shared=False, **kwargs):
        super().__init__(shared=shared, **kwargs)
        self.keep_background = keep_background
        self.nk = nk

    def make_final(self, x, max_depth=float("inf")):
        if max_depth == 0:
            return self
        if "channels" not in self.shared and len(x) > 1:
            return PerChannelTransform([self.make_final(x[i:i + 1], max_depth) for i in range(len(x))],
                                       **self.get_prm()).make_final(x, max_depth - 1)
        vmin, vmax = x.min(), x.max()
        edges = torch.linspace(vmin, vmax, self.nk + 1)
        new_mu = torch.rand(self.nk) * (vmax - vmin) + vmin  # expect: DL202
        return self.LookupFinalTransform(edges, new_mu, **self.get_prm()).make_final(x, max_depth - 1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    image = torch.rand(2, 16, 16, device=device)
    print(ContrastLookupTransform(nk=4)(image).shape)
