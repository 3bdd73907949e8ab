# source: https://github.com/davda54/sam/pull/5
# fixed twin: commits cd81f61 and 03c7768 move each gradient norm to a shared device (the first parameter's) before
#             torch.stack, and the scale to each parameter with scale.to(p).
import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"
        defaults = dict(rho=rho, **kwargs)
        super(SAM, self).__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None: continue
                e_w = p.grad * scale.to(p)
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad: self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None: continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad: self.zero_grad()

    def step(self, closure=None):
        raise NotImplementedError("SAM doesn't work like the other optimizers, you should first call `first_step` and the `second_step`")

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device  # put everything on the same device, in case of model parallelism
        norm = torch.norm(torch.stack([p.grad.norm(p=2).to(shared_device) for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)
        return norm


class ModelParallelNet(nn.Module):
    def __init__(self, dev0, dev1, num_classes=10):
        super().__init__()
        self.dev0, self.dev1 = dev0, dev1
        self.seq1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)).to(dev0)
        self.seq2 = nn.Sequential(nn.Flatten(), nn.Linear(16 * 16 * 16, num_classes)).to(dev1)

    def forward(self, x):
        x = self.seq1(x.to(self.dev0))
        return self.seq2(x.to(self.dev1))


if __name__ == "__main__":
    torch.manual_seed(0)
    if torch.cuda.device_count() >= 2:
        dev0, dev1 = torch.device("cuda:0"), torch.device("cuda:1")
    else:
        dev0 = dev1 = torch.device("cpu")
    model = ModelParallelNet(dev0, dev1)
    base_optimizer = torch.optim.SGD
    optimizer = SAM(model.parameters(), base_optimizer, rho=0.05, lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for step in range(3):
        inputs, targets = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,)).to(dev1)
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.first_step(zero_grad=True)
        criterion(model(inputs), targets).backward()
        optimizer.second_step(zero_grad=True)
        print(step, loss.item())
