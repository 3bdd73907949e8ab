# source: https://github.com/jeshraghian/snntorch/pull/188
# error: RuntimeError: Expected all tensors to be on the same device (mse_membrane_loss on membrane potentials from a
#        network on "mps" or a GPU other than the current one: the loss accumulator is made on another device)
# bug: LossFunctions._prediction_check names the device from the prediction: "cpu" unless spk_out.is_cuda, then
#      "cuda" (the current GPU). mse_membrane_loss makes its loss accumulator with torch.zeros(..., device=device), so
#      for membrane potentials on MPS it lands on the CPU (and on cuda:0 for a network on cuda:1) and loss += ...
#      mixes devices. The PR was closed in favour of the cleaner fix the maintainer named, in _prediction_check: the
#      fixed loss.py in the index returns spk_out.device (the old lines kept as comments). The fix replaces the
#      three-line choice; the marker is on the hard-coded device name it removes (DL302: a device chosen by name
#      because the input is on a GPU, in a function of tensor arguments, instead of the tensor's own device).
import torch
import torch.nn as nn
import torch.nn.functional as F

dtype = torch.float


def targets_convert(targets, num_classes, on_target=1, off_target=0):
    one_hot = F.one_hot(targets, num_classes).to(dtype)
    return one_hot * (on_target - off_target) + off_target


class LossFunctions:
    def _prediction_check(self, spk_out):
        device = "cpu"
        if spk_out.is_cuda:
            device = "cuda"  # expect: DL302

        num_steps = spk_out.size(0)
        num_outputs = spk_out.size(-1)

        return device, num_steps, num_outputs


class mse_membrane_loss(LossFunctions):
    def __init__(self, time_var_targets=False, on_target=1, off_target=0):
        self.time_var_targets = time_var_targets
        self.on_target = on_target
        self.off_target = off_target
        self.__name__ = "mse_membrane_loss"

    def __call__(self, mem_out, targets):
        device, num_steps, num_outputs = self._prediction_check(mem_out)
        targets = targets_convert(targets, num_classes=num_outputs, on_target=self.on_target, off_target=self.off_target)
        loss = torch.zeros((1), dtype=dtype, device=device)
        loss_fn = nn.MSELoss()

        if self.time_var_targets:
            for step in range(num_steps):
                loss += loss_fn(mem_out[step], targets[step])
        else:
            for step in range(num_steps):
                loss += loss_fn(mem_out[step], targets)

        return loss / num_steps


class Leaky(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input_, mem):
        mem = self.beta * mem + input_
        spk = (mem > self.threshold).to(mem.dtype)
        return spk, mem - spk * self.threshold


class Net(nn.Module):
    def __init__(self, num_inputs=20, num_hidden=32, num_outputs=10, num_steps=8):
        super().__init__()
        self.num_steps = num_steps
        self.fc1, self.lif1 = nn.Linear(num_inputs, num_hidden), Leaky()
        self.fc2, self.lif2 = nn.Linear(num_hidden, num_outputs), Leaky()

    def forward(self, x):
        mem1 = torch.zeros(x.size(0), self.fc1.out_features, device=x.device)
        mem2 = torch.zeros(x.size(0), self.fc2.out_features, device=x.device)
        mem2_rec = []
        for _ in range(self.num_steps):
            spk1, mem1 = self.lif1(self.fc1(x), mem1)
            _, mem2 = self.lif2(self.fc2(spk1), mem2)
            mem2_rec.append(mem2)
        return torch.stack(mem2_rec, dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    net = Net().to(device)
    loss_fn = mse_membrane_loss(on_target=1.0, off_target=0.0)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(3):
        data, targets = torch.randn(16, 20, device=device), torch.randint(0, 10, (16,), device=device)
        mem_rec = net(data)
        loss_val = loss_fn(mem_rec, targets)
        optimizer.zero_grad()
        loss_val.backward()
        optimizer.step()
        print(step, loss_val.item())
