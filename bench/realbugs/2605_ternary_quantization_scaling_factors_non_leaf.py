# source: https://github.com/vinsis/ternary-quantization/issues/4
# error: ValueError: can't optimize a non-leaf Tensor
# bug: trained ternary quantization keeps, per quantized weight, a trainable pair of scaling
#      factors. They are made as requires_grad leaves on the host and moved with .to(device); on a
#      GPU the move returns a copy computed from the leaf, and the Adam optimizer built over them
#      rejects it. (The full-precision copies, made from parameters already on the device, are not
#      affected: .to() returns them unchanged.) The reporter's fix, acknowledged by the maintainer,
#      builds them with torch.ones(2, requires_grad=True, device=device); the changed line is marked
#      (DL102, the closest rule: a move that returns a non-leaf copy of a tensor meant to be
#      optimised; DL102 itself names nn.Parameter).
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super(ConvNet, self).__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2))
        self.layer2 = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(8 * 2 * 2, num_classes)

    def forward(self, x):
        out = self.layer2(self.layer1(x))
        return self.fc(out.reshape(out.size(0), -1))


def quantize(kernel, w_p, w_n, t=0.05):
    delta = t * kernel.abs().max()
    a = (kernel > delta).float()
    b = (kernel < -delta).float()
    return w_p * a + (-w_n * b)


model_to_quantify = ConvNet().to(device)

bn_weights = [param for name, param in model_to_quantify.named_parameters() if '.1' in name]
weights_to_be_quantized = [param for name, param in model_to_quantify.named_parameters() if '.1' not in name]

full_precision_copies = [param.data.clone().requires_grad_().to(device) for param in weights_to_be_quantized]
scaling_factors = [torch.ones(2, requires_grad=True).to(device) for _ in range(len(weights_to_be_quantized))]  # expect: DL102

optimizer_main = torch.optim.Adam([{'params': bn_weights}, {'params': weights_to_be_quantized}], lr=0.001)
optimizer_full_precision_weights = torch.optim.Adam(full_precision_copies, lr=0.0001)
optimizer_scaling_factors = torch.optim.Adam(scaling_factors, lr=0.0001)


def train(steps=3):
    for _ in range(steps):
        images = torch.rand(4, 1, 8, 8).to(device)
        labels = torch.randint(0, 10, (4,)).to(device)
        for index, weight in enumerate(weights_to_be_quantized):
            w_p, w_n = scaling_factors[index]
            weight.data = quantize(full_precision_copies[index].data, w_p.data, w_n.data)
        loss = F.cross_entropy(model_to_quantify(images), labels)
        optimizer_main.zero_grad()
        loss.backward()
        for index, weight in enumerate(weights_to_be_quantized):
            w_p, w_n = scaling_factors[index]
            delta = 0.05 * full_precision_copies[index].data.abs().max()
            a = (full_precision_copies[index].data > delta).float()
            b = (full_precision_copies[index].data < -delta).float()
            scaling_factors[index].grad = torch.stack([(a * weight.grad).sum(), (-b * weight.grad).sum()])
            full_precision_copies[index].grad = weight.grad.data.clone()
        optimizer_main.step()
        optimizer_full_precision_weights.step()
        optimizer_scaling_factors.step()
    return loss.item()


if __name__ == '__main__':
    print(train())
