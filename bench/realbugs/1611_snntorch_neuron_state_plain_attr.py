# source: https://github.com/jeshraghian/snntorch/pull/317
# error: (issue 316) RuntimeError: Expected all tensors to be on the same device, after net.to(device) on a network of spiking neurons
# bug: every neuron model creates its hidden state (membrane potential, synaptic current) as a
#      plain tensor attribute, torch.zeros(1) on the CPU; reset_mem and the first forward
#      re-create it with zeros_like(..., device=self.mem.device), i.e. on the CPU again, so after
#      net.to(device) the state update beta * mem + input mixes the CPU state with the GPU input.
#      The fix (PR 317, commit 3b4f023) registers the states as non-persistent buffers in all
#      eight neuron classes; this file keeps Leaky and Synaptic, whose state lines are marked
#      (DL103: a module's plain tensor attribute, not moved by model.to).
import torch
import torch.nn as nn


class ATan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x > 0).float()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + (torch.pi * x) ** 2)


class LIF(nn.Module):
    def __init__(self, beta, threshold=1.0, init_hidden=False, output=False):
        super().__init__()
        self.register_buffer("beta", torch.as_tensor(beta, dtype=torch.float32))
        self.register_buffer("threshold", torch.as_tensor(threshold, dtype=torch.float32))
        self.init_hidden = init_hidden
        self.output = output

    def fire(self, mem):
        return ATan.apply(mem - self.threshold)

    def mem_reset(self, mem):
        return (mem - self.threshold > 0).float().detach()


class Leaky(LIF):
    def __init__(self, beta, **kwargs):
        super().__init__(beta, **kwargs)
        self._init_mem()

    def _init_mem(self):
        self.mem = torch.zeros(1)  # expect: DL103

    def reset_mem(self):
        self.mem = torch.zeros_like(self.mem, device=self.mem.device)

    def forward(self, input_, mem=None):
        if mem is not None:
            self.mem = mem
        if not self.mem.shape == input_.shape:
            self.mem = torch.zeros_like(input_, device=self.mem.device)
        self.reset = self.mem_reset(self.mem)
        self.mem = self.beta.clamp(0, 1) * self.mem + input_ - self.reset * self.threshold
        spk = self.fire(self.mem)
        if self.output or not self.init_hidden:
            return spk, self.mem
        return spk


class Synaptic(LIF):
    def __init__(self, alpha, beta, **kwargs):
        super().__init__(beta, **kwargs)
        self.register_buffer("alpha", torch.as_tensor(alpha, dtype=torch.float32))
        self._init_mem()

    def _init_mem(self):
        self.syn = torch.zeros(1)  # expect: DL103
        self.mem = torch.zeros(1)  # expect: DL103

    def reset_mem(self):
        self.syn = torch.zeros_like(self.syn, device=self.syn.device)
        self.mem = torch.zeros_like(self.mem, device=self.mem.device)

    def forward(self, input_):
        if not self.syn.shape == input_.shape:
            self.syn = torch.zeros_like(input_, device=self.syn.device)
        if not self.mem.shape == input_.shape:
            self.mem = torch.zeros_like(input_, device=self.mem.device)
        self.reset = self.mem_reset(self.mem)
        self.syn = self.alpha.clamp(0, 1) * self.syn + input_
        self.mem = self.beta.clamp(0, 1) * self.mem + self.syn - self.reset * self.threshold
        spk = self.fire(self.mem)
        if self.output or not self.init_hidden:
            return spk, self.mem
        return spk


def reset(net):
    for m in net.modules():
        if isinstance(m, LIF):
            m.reset_mem()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Sequential(nn.Linear(10, 16), Synaptic(alpha=0.8, beta=0.9, init_hidden=True),
                        nn.Linear(16, 4), Leaky(beta=0.9, init_hidden=True, output=True)).to(device)
    data = torch.rand(5, 3, 10, device=device)
    reset(net)
    spikes = []
    for step in range(data.size(0)):
        spk, mem = net(data[step])
        spikes.append(spk)
    print(torch.stack(spikes).sum().item(), net[3].mem.device)
