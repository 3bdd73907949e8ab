# source: https://github.com/Project-MONAI/GenerativeModels/pull/371
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0
# bug: the patch adversarial loss builds its real/fake target and its hinge zero tensor from a
#      0-dim CPU tensor cast with .type(input.type()); a type string such as "torch.cuda.FloatTensor"
#      names no device index, so the label lands on the current GPU (cuda:0) while a discriminator
#      trained on cuda:1 produced the logits it is compared with. The fix (commit 4aee21a) appends
#      .to(input[0].device) to both casts; both lines are marked with DL313 (type-string cast).
import torch
import torch.nn as nn


class PatchDiscriminator(nn.Module):
    def __init__(self, in_channels=1, channels=8, num_layers=3):
        super().__init__()
        layers, c = [], in_channels
        for i in range(num_layers):
            layers += [nn.Conv2d(c, channels * 2**i, 4, stride=2, padding=1), nn.LeakyReLU(0.2)]
            c = channels * 2**i
        layers.append(nn.Conv2d(c, 1, 3, padding=1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return [self.net(x)]


class PatchAdversarialLoss(nn.Module):
    def __init__(self, criterion="least_squares"):
        super().__init__()
        self.criterion = criterion
        self.real_label = 1.0
        self.fake_label = -1.0 if criterion == "hinge" else 0.0
        self.activation = nn.LeakyReLU(0.05) if criterion == "least_squares" else nn.Tanh()
        self.loss_fct = nn.MSELoss()

    def get_target_tensor(self, input, target_is_real):
        filling_label = self.real_label if target_is_real else self.fake_label
        label_tensor = torch.tensor(1).fill_(filling_label).type(input.type())  # expect: DL313
        label_tensor.requires_grad_(False)
        return label_tensor.expand_as(input)

    def get_zero_tensor(self, input):
        zero_label_tensor = torch.tensor(0).type(input[0].type())  # expect: DL313
        zero_label_tensor.requires_grad_(False)
        return zero_label_tensor.expand_as(input)

    def forward_single(self, input, target):
        if self.criterion == "hinge":
            return -torch.mean(torch.min(input - 1, self.get_zero_tensor(input)))
        return self.loss_fct(input, target)

    def forward(self, input, target_is_real, for_discriminator):
        if not for_discriminator:
            target_is_real = True
        if not isinstance(input, list):
            input = [input]
        targets = []
        for disc_out in input:
            if self.criterion != "hinge":
                targets.append(self.get_target_tensor(disc_out, target_is_real))
            else:
                targets.append(self.get_zero_tensor(disc_out))
        losses = []
        for disc_out, target in zip(input, targets):
            disc_out = self.activation(disc_out)
            if self.criterion == "hinge" and not target_is_real:
                disc_out = -disc_out
            losses.append(self.forward_single(disc_out, target))
        return torch.mean(torch.stack(losses))


if __name__ == "__main__":
    if torch.cuda.device_count() > 1:
        device = torch.device("cuda:1")
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    disc = PatchDiscriminator().to(device)
    real = torch.randn(2, 1, 32, 32, device=device)
    fake = torch.randn(2, 1, 32, 32, device=device)
    for criterion in ("least_squares", "hinge"):
        adv = PatchAdversarialLoss(criterion=criterion)
        loss_d = adv(disc(fake), target_is_real=False, for_discriminator=True)
        loss_d = loss_d + adv(disc(real), target_is_real=True, for_discriminator=True)
        loss_g = adv(disc(fake), target_is_real=True, for_discriminator=False)
        print(criterion, loss_d.item(), loss_g.item())
