# source: https://github.com/bohaohuang/mrs/pull/47
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (first optimizer step after resuming)
# bug: train_model builds the model and its Adam optimizer on the CPU, and when resuming it loads
#      the snapshot (mapped to the CPU) into both before model.to(device); load_state_dict casts the
#      Adam moments to the parameters' device at that moment, the CPU, and moving the model later
#      does not move the optimizer state, so the first step on the GPU mixes devices. The fix
#      (commit 9da5424) passes the device to load_epoch and moves every state tensor after
#      optm.load_state_dict; that line (the one the inserted loop follows) is marked. No rule covers
#      restored optimizer state; DL407 (optimizer made before the model is moved) is the closest.
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


def load_epoch(save_dir, resume_epoch, model, optm):
    checkpoint = torch.load(os.path.join(save_dir, "epoch-" + str(resume_epoch - 1) + ".pth.tar"),
                            map_location=lambda storage, loc: storage)
    model.load_state_dict(checkpoint["state_dict"])
    optm.load_state_dict(checkpoint["opt_dict"])  # expect: DL407


def train_model(save_dir, device, resume_epoch=0, epochs=2):
    model = EncoderDecoder()
    train_params = model.set_train_params((1e-4, 1e-3))
    optm = optim.Adam(train_params, lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    if resume_epoch > 0:
        load_epoch(save_dir, resume_epoch, model, optm)
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
