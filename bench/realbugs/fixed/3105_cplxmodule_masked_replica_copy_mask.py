# source: https://github.com/ivannz/cplxmodule/pull/3
# fixed twin: commit 757cdc4 drops the in-place self.mask.copy_(...) update: a new mask, whether or not one is already
#             set, is detached, moved to the weight's device and dtype, expanded and registered as the buffer, so the
#             replica's broadcast mask becomes its own buffer.
import torch
import torch.nn.functional as F
from torch.nn import Linear
from torch.nn.parallel.data_parallel import data_parallel


class BaseMasked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", None)

    @property
    def is_sparse(self):
        return isinstance(self.mask, torch.Tensor)

    def mask_(self, mask):
        if mask is not None and not isinstance(mask, torch.Tensor):
            raise TypeError(f"`mask` must be either a Tensor or `None`. Got {type(mask).__name__}.")
        if mask is not None:
            mask = mask.detach().to(self.weight.device, self.weight.dtype)
            mask = mask.expand(self.weight.shape).contiguous()
            self.register_buffer("mask", mask)
        elif self.is_sparse and mask is None:
            del self.mask
            self.register_buffer("mask", None)
        return self

    def __setattr__(self, name, value):
        if name != "mask":
            return super().__setattr__(name, value)
        self.mask_(value)


class MaskedWeightMixin():
    @property
    def weight_masked(self):
        if not self.is_sparse:
            raise RuntimeError(f"`{type(self).__name__}` has no sparsity mask.")
        return self.weight * self.mask


class _BaseRealMixin(MaskedWeightMixin, BaseMasked):
    pass


class LinearMasked(Linear, _BaseRealMixin):
    def forward(self, input):
        return F.linear(input, self.weight_masked, self.bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    net, x = LinearMasked(15, 30), torch.randn(64, 8, 15)
    net.mask = torch.randint(0, 2, size=(30, 1))
    if torch.cuda.device_count() >= 2:
        out = data_parallel(net.cuda(0), x.cuda(0), [0, 1])
    else:
        out = net(x)
    print(tuple(out.shape), float(net.mask.mean()))
