# source: https://github.com/facebookresearch/schedule_free/pull/42
# error: (PR description; first opened as PR #41) "Avoids error relating to different devices like `RuntimeError:
#        Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!` ... During
#        evaluation-only mode, I noticed that state['z'] was loaded on cpu when p.data is in cuda."
# bug: AdamWScheduleFree keeps the z sequence of every parameter in the optimizer state and, in eval()/train(), swaps
#      the parameters between the x and y points with p.data.lerp_(end=state['z'], ...). Normally z is born in
#      step() as torch.clone(p.data), on the parameter's device; but when the state comes from a checkpoint and is
#      loaded while the parameters are still on the CPU (optimizer.load_state_dict casts state to each parameter's
#      device at load time), the model's later .to(device) moves the parameters and not the state, and the first
#      optimizer.eval() - before any step() - lerps CUDA parameters towards CPU z. PR #42 (merged, commit fa1f091)
#      lerps towards state['z'].to(p.data.device) in both eval() and train(); both lines are marked (DL201: the lerp_
#      mixes the parameter's device with the state's). Reductions: SGDScheduleFree's identical change is not
#      reproduced; the step keeps only the non-foreach branch; the driver (the PR does not show the author's program)
#      is a stand-in for the evaluation-only flow the PR describes: a checkpoint taken during training (train mode),
#      then model and optimizer built, the checkpoint loaded with map_location='cpu', the model moved to the run's
#      device, and model.eval()/optimizer.eval() before evaluating (a checkpoint stored in eval mode, as the README
#      advises, would reach the same lerp through optimizer.train() instead).
import math
import os

import torch
import torch.nn as nn
import torch.optim


class AdamWScheduleFree(torch.optim.Optimizer):
    def __init__(self, params, lr=0.0025, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 warmup_steps=0, r=0.0, weight_lr_power=2.0):
        defaults = dict(lr=lr, betas=betas, eps=eps, r=r, k=0, warmup_steps=warmup_steps,
                        train_mode=True, weight_sum=0.0, lr_max=-1.0,
                        weight_lr_power=weight_lr_power, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def eval(self):
        for group in self.param_groups:
            train_mode = group['train_mode']
            beta1, _ = group['betas']
            if train_mode:
                for p in group['params']:
                    state = self.state[p]
                    if 'z' in state:
                        # Set p.data to x
                        p.data.lerp_(end=state['z'], weight=1-1/beta1)  # expect: DL201
                group['train_mode'] = False

    def train(self):
        for group in self.param_groups:
            train_mode = group['train_mode']
            beta1, _ = group['betas']
            if not train_mode:
                for p in group['params']:
                    state = self.state[p]
                    if 'z' in state:
                        # Set p.data to y
                        p.data.lerp_(end=state['z'], weight=1-beta1)  # expect: DL201
                group['train_mode'] = True

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            eps = group['eps']
            beta1, beta2 = group['betas']
            decay = group['weight_decay']
            k = group['k']
            r = group['r']
            warmup_steps = group['warmup_steps']
            weight_lr_power = group['weight_lr_power']
            sched = (k + 1) / warmup_steps if k < warmup_steps else 1.0
            bias_correction2 = 1 - beta2 ** (k + 1)
            lr = group['lr'] * sched * math.sqrt(bias_correction2)
            lr_max = group['lr_max'] = max(lr, group['lr_max'])
            weight = ((k + 1) ** r) * (lr_max ** weight_lr_power)
            weight_sum = group['weight_sum'] = group['weight_sum'] + weight
            try:
                ckp1 = weight / weight_sum
            except ZeroDivisionError:
                ckp1 = 0
            if not group['train_mode']:
                raise Exception("Not in train mode!")
            active_p = [p for p in group['params'] if p.grad is not None]
            for p in active_p:
                if 'z' not in self.state[p]:
                    self.state[p]['z'] = torch.clone(p.data)
                    self.state[p]['exp_avg_sq'] = torch.zeros_like(p.data)
            for p in active_p:
                y = p.data
                grad = p.grad.data
                state = self.state[p]
                z = state['z']
                exp_avg_sq = state['exp_avg_sq']
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2)
                denom = exp_avg_sq.sqrt().add_(eps)
                grad_normalized = grad.div_(denom)
                if decay != 0:
                    grad_normalized.add_(y, alpha=decay)
                y.lerp_(end=z, weight=ckp1)
                y.add_(grad_normalized, alpha=lr*(beta1*(1-ckp1)-1))
                z.sub_(grad_normalized, alpha=lr)
            group['k'] = k + 1
        return loss


def train_and_save(path):
    model = nn.Linear(8, 2)
    optimizer = AdamWScheduleFree(model.parameters(), lr=0.01)
    model.train()
    optimizer.train()
    for _ in range(5):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path)


def evaluate(path):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = nn.Linear(8, 2)
    optimizer = AdamWScheduleFree(model.parameters(), lr=0.01)
    checkpoint = torch.load(path, map_location='cpu')
    model.load_state_dict(checkpoint['model'])
    optimizer.load_state_dict(checkpoint['optimizer'])
    model.to(device)
    model.eval()
    optimizer.eval()
    with torch.no_grad():
        print(model(torch.randn(4, 8, device=device)))


if __name__ == "__main__":
    path = "/tmp/schedulefree_ckpt.pt"
    if not os.path.exists(path):
        train_and_save(path)
    evaluate(path)
