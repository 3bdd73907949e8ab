# source: https://github.com/microsoft/Cream/issues/2
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:2 and cpu!
#        (resuming supernet training with AUTO_RESUME; raised in SGD's step, buf.mul_(momentum).add_(d_p, ...),
#        from optimizer.step() in lib/core/train.py's train_epoch)
# bug: tools/train.py resumes before it places the model: resume_checkpoint (timm's, which loads the checkpoint
#      mapped to the CPU) fills the model, the optimizer is built on the model's CPU parameters and
#      optimizer.load_state_dict(optimizer_state['optimizer']) casts the momentum buffers to those parameters'
#      device, the CPU; only then is the model moved with model.cuda(). The optimizer state stays on the CPU and the
#      first step on the GPU mixes devices. The issue was closed with no answer and the code was never changed (no
#      fix, so no twin); the cause is read from the repository. The marker is on the optimizer.step() the traceback
#      points to (DL407: optimizer state restored before the model is moved).
import os
import tempfile

import torch
import torch.nn as nn


class Supernet(nn.Module):
    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1) for _ in range(3)])
        self.classifier = nn.Linear(width, num_classes)

    def forward(self, x, cand=0):
        x = self.stem(x)
        x = torch.relu(self.blocks[cand](x))
        return self.classifier(x.mean(dim=(2, 3)))


def gen_supernet(num_classes):
    return Supernet(num_classes)


def resume_checkpoint(model, checkpoint_path):
    checkpoint = torch.load(checkpoint_path, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    other_state = {"optimizer": checkpoint["optimizer"]}
    return other_state, checkpoint["epoch"] + 1


def create_optimizer_supernet(cfg, model):
    return torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)


def train_epoch(epoch, model, loader, optimizer, loss_fn, device):
    model.train()
    for step, (inputs, target) in enumerate(loader):
        inputs, target = inputs.to(device), target.to(device)
        cand = step % 3
        loss = loss_fn(model(inputs, cand), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # expect: DL407
    return {"loss": loss.item()}


def make_loader(n=4, batch=8, num_classes=10):
    return [(torch.randn(batch, 3, 16, 16), torch.randint(0, num_classes, (batch,))) for _ in range(n)]


def save_checkpoint(model, optimizer, epoch, path):
    torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def main(cfg, local_rank=0):
    device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    model = gen_supernet(cfg["num_classes"])

    optimizer_state = None
    resume_epoch = None
    if cfg["AUTO_RESUME"]:
        optimizer_state, resume_epoch = resume_checkpoint(model, cfg["RESUME_PATH"])

    optimizer = create_optimizer_supernet(cfg, model)
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state["optimizer"])
    model = model.to(device)

    train_loss_fn = nn.CrossEntropyLoss().to(device)
    start_epoch = resume_epoch if resume_epoch is not None else 0
    for epoch in range(start_epoch, cfg["epochs"]):
        metrics = train_epoch(epoch, model, make_loader(), optimizer, train_loss_fn, device)
        save_checkpoint(model, optimizer, epoch, os.path.join(cfg["SAVE_PATH"], "checkpoint-%d.pth.tar" % epoch))
        print(epoch, metrics)


if __name__ == "__main__":
    torch.manual_seed(0)
    save_path = tempfile.mkdtemp()
    cfg = {"num_classes": 10, "lr": 0.1, "epochs": 1, "AUTO_RESUME": False, "RESUME_PATH": "", "SAVE_PATH": save_path}
    main(cfg)
    cfg.update(epochs=2, AUTO_RESUME=True, RESUME_PATH=os.path.join(save_path, "checkpoint-0.pth.tar"))
    main(cfg)
