# source: https://github.com/ivannz/cplxmodule/pull/3
# error: RuntimeError: Caught RuntimeError in replica 1 on device 1. ... File "./cplxmodule/nn/masked/base.py",
#        line 134, in weight_masked: return self.weight * self.mask
#        RuntimeError: expected device cuda:1 but got device cuda:0
#        (data_parallel(net.cuda(0), x.cuda(0), [0, 1]) for a LinearMasked with a mask set)
# bug: BaseMasked routes every assignment to .mask through mask_(); when the layer already has a mask ("sparse ->
#      sparse"), mask_ updated it in place with self.mask.copy_(mask.detach()). nn.parallel.replicate builds each
#      replica from a shallow copy of the module (its _buffers dict copied, so replica.mask is still the original
#      cuda:0 tensor) and then assigns the replica's broadcast buffer with setattr(replica, "mask", copy_on_gpu_j):
#      mask_ copied that GPU j tensor into the cuda:0 buffer instead of registering it, so every replica kept the
#      mask on cuda:0 and weight_masked multiplied its cuda:1 weight with a cuda:0 mask. The fix (PR #3, commit
#      757cdc4, "copy_ poorly interfaced with nn.parallel.replicate") registers the new tensor as the buffer in both
#      cases, moved to the weight's device; the removed in-place copy is marked (DL201, the closest rule: the copy
#      is what leaves the replica's buffer on another device than its weight, which the multiply then meets).
#      Reductions: only the real LinearMasked is kept (no Cplx layers, sparsity statistics or state-dict hooks).
#      Needs two GPUs to show; on fewer the script runs the layer on one device.
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
        if not self.is_sparse and mask is not None:
            mask = mask.detach().to(self.weight.device, self.weight.dtype)
            mask = mask.expand(self.weight.shape).contiguous()
            self.register_buffer("mask", mask)
        elif self.is_sparse and mask is not None:
            self.mask.copy_(mask.detach())  # expect: DL201
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
