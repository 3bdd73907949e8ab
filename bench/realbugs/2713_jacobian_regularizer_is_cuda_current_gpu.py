# source: https://github.com/facebookresearch/jacobian_regularizer/pull/2
# error: no traceback is quoted in the PR; with the model on cuda:1 and the current GPU left at cuda:0, autograd.grad is
#        handed a grad_outputs vector on cuda:0 for outputs on cuda:1 and rejects it (a device mismatch)
# bug: the Jacobian regularizer draws its random projection vector on the host and, when the input is on a GPU, moves
#      it with a bare .cuda(), which picks the current GPU rather than the input's. A model trained on cuda:1 (without
#      changing the current device) gets the vector on cuda:0, and the vector-Jacobian product mixes the two. The open
#      PR replaces the move with v.to(x.device); that line is marked (DL302: hard-coded CUDA on a path taken because a
#      tensor is on a GPU is the current GPU, not the tensor's).
import torch
import torch.autograd as autograd
import torch.nn as nn


class JacobianReg(nn.Module):
    def __init__(self, n=1):
        assert n == -1 or n > 0
        self.n = n
        super().__init__()

    def forward(self, x, y):
        B, C = y.shape
        num_proj = C if self.n == -1 else self.n
        J2 = 0
        for ii in range(num_proj):
            if self.n == -1:
                v = torch.zeros(B, C)
                v[:, ii] = 1
            else:
                v = self._random_vector(C=C, B=B)
            if x.is_cuda:
                v = v.cuda()  # expect: DL302
            Jv = self._jacobian_vector_product(y, x, v, create_graph=True)
            J2 += C * torch.norm(Jv) ** 2 / (num_proj * B)
        return 0.5 * J2

    def _random_vector(self, C, B):
        if C == 1:
            return torch.ones(B)
        v = torch.randn(B, C)
        vnorm = torch.norm(v, 2, 1, True)
        return v / vnorm

    def _jacobian_vector_product(self, y, x, v, create_graph=False):
        flat_y = y.reshape(-1)
        flat_v = v.reshape(-1)
        (grad_x,) = autograd.grad(flat_y, x, flat_v, retain_graph=True, create_graph=create_graph)
        return grad_x


if __name__ == "__main__":
    device = torch.device("cuda:1" if torch.cuda.device_count() > 1 else "cpu")
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    reg = JacobianReg()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(8, 1, 28, 28).to(device)
    target = torch.randint(0, 10, (8,)).to(device)
    data.requires_grad = True
    output = model(data)
    loss = criterion(output, target) + 0.01 * reg(data, output)
    loss.backward()
    optimizer.step()
    print(loss.item())
