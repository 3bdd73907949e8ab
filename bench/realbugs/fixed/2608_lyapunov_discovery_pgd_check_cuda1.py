# source: https://github.com/JieFeng-cse/Analytical-Lyapunov-Function-Discovery/issues/1
# fixed twin: pgd_check puts the derivative module, the start points and the bounds on DEVICE instead of "cuda:1" (the change the maintainer confirmed in the issue), so it runs on the GPU the rest of training uses.
import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class PolynomialModule(nn.Module):
    """Stand-in for sympytorch.SymPyModule: evaluates sum_i c_i * x_i ** p_i."""

    def __init__(self, coefficients, powers):
        super().__init__()
        self.register_buffer("coefficients", torch.tensor(coefficients))
        self.register_buffer("powers", torch.tensor(powers))

    def forward(self, **xs):
        x = torch.cat([xs[f"x{i + 1}"] for i in range(len(xs))], dim=1)
        return (self.coefficients * x ** self.powers).sum(dim=1, keepdim=True).unsqueeze(1)


def lie_derivative(candidate):
    coefficients, powers = candidate
    return [-c * p for c, p in zip(coefficients, powers)], [p for p in powers]


def pgd_attack(x0, f, eps, steps=10, lower_boundary=None, upper_boundary=None):
    step_size = eps / steps * 2
    lower_boundary = torch.max(lower_boundary, x0 - eps)
    upper_boundary = torch.min(upper_boundary, x0 + eps)
    x = x0.detach().clone().requires_grad_()
    best_x = torch.clone(x).detach()
    best_loss = torch.full((x.size(0),), float("inf"), device=x.device, dtype=x.dtype)
    for i in range(steps):
        output = f(**{f"x{j + 1}": x[:, [j]] for j in range(x.shape[1])}).squeeze(1).squeeze(1)
        output.mean().backward()
        improved = output <= best_loss
        best_x[improved] = x[improved]
        best_loss[improved] = output[improved]
        noise = torch.randn_like(x0) * step_size / (i + 1)
        x = torch.clamp(x - torch.sign(x.grad) * step_size + noise, min=lower_boundary,
                        max=upper_boundary).detach().requires_grad_()
    return best_x


def pgd_check(candidate, X, low_bound, up_bound):
    module = PolynomialModule(*lie_derivative(candidate)).to(DEVICE)
    data = torch.rand((X.shape[0], X.shape[1])).to(DEVICE)
    result = pgd_attack(data, module, min(up_bound) * 0.8, steps=20, lower_boundary=torch.tensor(low_bound).to(DEVICE), upper_boundary=torch.tensor(up_bound).to(DEVICE))
    evaluation = module(**{f"x{i + 1}": result[:, [i]] for i in range(result.shape[1])}).squeeze(1).squeeze(1)
    result = result[evaluation < -1e-10]
    return len(result) == 0, result.cpu().detach()


if __name__ == "__main__":
    encoder_input = torch.tensor([0, 1, 2, 23, 24, 25]).long().to(DEVICE).tile(4, 1)
    print(encoder_input.shape, encoder_input.device)
    candidates = [([1.0, 1.0], [2.0, 2.0]), ([1.0, -0.5], [2.0, 1.0])]
    if torch.cuda.is_available():
        pgd_initial = torch.rand(64, 2)
        for candidate in candidates:
            valid, counter_examples = pgd_check(candidate, pgd_initial, [-1.0, -1.0], [1.0, 1.0])
            print(valid, counter_examples.shape)
