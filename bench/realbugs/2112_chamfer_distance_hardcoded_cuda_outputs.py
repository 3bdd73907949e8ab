# source: https://github.com/otaheri/chamfer_distance/pull/5
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:6 and cuda:0!
# bug: the chamfer-distance autograd function allocates its output buffers on the CPU and, when
#      the point clouds are on a GPU, moves them with a bare .cuda(), which is the current device
#      (cuda:0), not the inputs' GPU; the CUDA kernel then gets inputs on cuda:6 and outputs on
#      cuda:0. The fix (PR 5, merged, commit 5e567f4) passes the inputs' device in and moves the
#      buffers with .to(device). The four moves in forward are marked (DL302: a hard-coded CUDA
#      device in a function of tensor arguments). The compiled extension is replaced by a Python
#      stand-in, and the backward pass (changed the same way upstream) is left out.
import torch


class _CdExtension:
    # stands in for the compiled chamfer_distance extension: fills the buffers in place
    @staticmethod
    def forward(xyz1, xyz2, dist1, dist2, idx1, idx2):
        d = torch.cdist(xyz1, xyz2) ** 2
        v1, i1 = d.min(dim=2)
        v2, i2 = d.min(dim=1)
        dist1.copy_(v1)
        dist2.copy_(v2)
        idx1.copy_(i1)
        idx2.copy_(i2)

    forward_cuda = forward


cd = _CdExtension()


class ChamferDistanceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2):
        batchsize, n, _ = xyz1.size()
        _, m, _ = xyz2.size()
        xyz1 = xyz1.contiguous()
        xyz2 = xyz2.contiguous()
        dist1 = torch.zeros(batchsize, n)
        dist2 = torch.zeros(batchsize, m)
        idx1 = torch.zeros(batchsize, n, dtype=torch.int)
        idx2 = torch.zeros(batchsize, m, dtype=torch.int)

        if not xyz1.is_cuda:
            cd.forward(xyz1, xyz2, dist1, dist2, idx1, idx2)
        else:
            dist1 = dist1.cuda()  # expect: DL302
            dist2 = dist2.cuda()  # expect: DL302
            idx1 = idx1.cuda()  # expect: DL302
            idx2 = idx2.cuda()  # expect: DL302
            cd.forward_cuda(xyz1, xyz2, dist1, dist2, idx1, idx2)

        ctx.save_for_backward(xyz1, xyz2, idx1, idx2)
        return dist1, dist2, idx1, idx2


class ChamferDistance(torch.nn.Module):
    def forward(self, xyz1, xyz2):
        return ChamferDistanceFunction.apply(xyz1, xyz2)


if __name__ == "__main__":
    device = torch.device("cuda:%d" % (torch.cuda.device_count() - 1) if torch.cuda.is_available() else "cpu")
    chamfer = ChamferDistance()
    p1 = torch.rand(2, 50, 3, device=device)
    p2 = torch.rand(2, 40, 3, device=device)
    with torch.no_grad():
        dist1, dist2, _, _ = chamfer(p1, p2)
    print(float(dist1.mean() + dist2.mean()))
