# source: https://github.com/anucvml/ddn/pull/12
# error: RuntimeError: Expected all tensors to be on the same device (torch.cat in OptimalTransportFcn.backward)
# bug: the differentiable optimal-transport layer computes its gradient with respect to the row
#      marginals r by implicit differentiation; the backward pass pads the multipliers v1 with a
#      column of zeros made by torch.zeros(B, 1) - on the host - and concatenates it with v1, which is
#      on the device of the cost matrix. On a GPU the backward pass fails whenever r requires grad.
#      The merged fix (commit 5ce13ed) passes device=r.device to that torch.zeros; the changed line is
#      marked (DL202: a factory without device= meets the function's tensors).
import torch
import torch.nn as nn


def _sinkhorn_inline(M, r, c, gamma, eps=1.0e-6, maxiters=200):
    B, H, W = M.shape
    P = torch.exp(-1.0 * gamma * (M - torch.amin(M, 2, keepdim=True)))
    P = P / torch.sum(P, dim=(1, 2), keepdim=True)
    for _ in range(maxiters):
        alpha = torch.sum(P, 2)
        P = P * (r / alpha).view(B, H, 1)
        beta = torch.sum(P, 1)
        if torch.max(torch.abs(beta - c)) <= eps:
            break
        P = P * (c / beta).view(B, 1, W)
    return P


class OptimalTransportFcn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, M, r, c, gamma=1.0):
        with torch.no_grad():
            ctx.inv_r_sum = 1.0 / torch.sum(r, dim=1, keepdim=True)
            r = ctx.inv_r_sum * r
            ctx.inv_c_sum = 1.0 / torch.sum(c, dim=1, keepdim=True)
            c = ctx.inv_c_sum * c
            P = _sinkhorn_inline(M, r, c, gamma)
        ctx.save_for_backward(M, r, c, P)
        ctx.gamma = gamma
        return P

    @staticmethod
    def backward(ctx, dJdP):
        M, r, c, P = ctx.saved_tensors
        B, H, W = M.shape
        dJdM = -1.0 * ctx.gamma * P * dJdP
        dJdr = None if not ctx.needs_input_grad[1] else torch.zeros_like(r)
        dJdc = None if not ctx.needs_input_grad[2] else torch.zeros_like(c)

        alpha = torch.sum(P, dim=2)
        beta = torch.sum(P, dim=1)
        vHAt1 = torch.sum(dJdM[:, 1:H, 0:W], dim=2)
        vHAt2 = torch.sum(dJdM, dim=1)

        AinvHAt = torch.empty((B, H + W - 1, H + W - 1), device=M.device, dtype=M.dtype)
        AinvHAt[:, 0:H - 1, 0:H - 1] = torch.diag_embed(alpha[:, 1:H])
        AinvHAt[:, H - 1:H + W - 1, H - 1:H + W - 1] = torch.diag_embed(beta)
        AinvHAt[:, 0:H - 1, H - 1:H + W - 1] = P[:, 1:H, 0:W]
        AinvHAt[:, H - 1:H + W - 1, 0:H - 1] = P[:, 1:H, 0:W].transpose(1, 2)
        v = torch.einsum("bi,bij->bj", torch.cat((vHAt1, vHAt2), dim=1), torch.inverse(AinvHAt))
        v1 = v[:, 0:H - 1]
        v2 = v[:, H - 1:H + W - 1]

        dJdM[:, 1:H, 0:W] -= v1.view(B, H - 1, 1) * P[:, 1:H, 0:W]
        dJdM -= v2.view(B, 1, W) * P

        if dJdr is not None:
            dJdr = ctx.inv_r_sum.view(r.shape[0], 1) / ctx.gamma * \
                (torch.sum(r[:, 1:H] * v1, dim=1, keepdim=True) - torch.cat((torch.zeros(B, 1), v1), dim=1))  # expect: DL202
        if dJdc is not None:
            dJdc = ctx.inv_c_sum.view(c.shape[0], 1) / ctx.gamma * (torch.sum(c * v2, dim=1, keepdim=True) - v2)
        return dJdM, dJdr, dJdc, None


class OptimalTransportLayer(nn.Module):
    def __init__(self, gamma=1.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, M, r, c):
        return OptimalTransportFcn.apply(M, r, c, self.gamma)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    B, H, W = 2, 4, 5
    M = torch.randn(B, H, W, device=device, requires_grad=True)
    r = torch.rand(B, H, device=device, requires_grad=True)
    c = torch.rand(B, W, device=device, requires_grad=True)
    P = OptimalTransportLayer(gamma=2.0)(M, r, c)
    (P * torch.randn_like(P)).sum().backward()
    print(M.grad.shape, r.grad.shape, c.grad.shape)
