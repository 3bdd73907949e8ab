# source: https://github.com/bohaohuang/mrs/pull/47
# fixed twin: load_epoch takes the device and moves every optimizer state tensor to it after load_state_dict, as commit 9da5424 does.
import os
import tempfile

import torch
import torch.nn as nn
from torch import optim


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def set_train_params(self, learn_rate):
        return [{"params": self.encoder.parameters(), "lr": learn_rate[0]},
                {"params": self.decoder.parameters(), "lr": learn_rate[1]}]


def save_epoch(save_dir, epoch, model, optm):
    torch.save({"state_dict": model.state_dict(), "opt_dict": optm.state_dict()},
               os.path.join(save_dir, "epoch-" + str(epoch) + ".pth.tar"))


def load_epoch(save_dir, resume_epoch, model, optm, device):
    checkpoint = torch.load(os.path.join(save_dir, "epoch-" + str(resume_epoch - 1) + ".pth.tar"),
                            map_location=lambda storage, loc: storage)
    model.load_state_dict(checkpoint["state_dict"])
    optm.load_state_dict(checkpoint["opt_dict"])
    for state in optm.state.values():
        for k, v in state.items():
            if isinstance(v, torch.Tensor):
                state[k] = v.to(device)


def train_model(save_dir, device, resume_epoch=0, epochs=2):
    model = EncoderDecoder()
    train_params = model.set_train_params((1e-4, 1e-3))
    optm = optim.Adam(train_params, lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    if resume_epoch > 0:
        load_epoch(save_dir, resume_epoch, model, optm, device)
    model.to(device)
    criterion.to(device)
    for epoch in range(resume_epoch, epochs):
        image = torch.rand(2, 3, 16, 16, device=device)
        label = torch.randint(0, 2, (2, 16, 16), device=device)
        optm.zero_grad()
        loss = criterion(model(image), label)
        loss.backward()
        optm.step()
        save_epoch(save_dir, epoch, model, optm)
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    save_dir = tempfile.mkdtemp()
    train_model(save_dir, torch.device("cpu"), resume_epoch=0, epochs=1)
    print(train_model(save_dir, device, resume_epoch=1, epochs=3))
