# source: https://github.com/NVIDIA/apex/issues/222
# fixed twin: torch.load is given a map_location (the host; the model is then moved to the worker's GPU).
import os
import tempfile

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.body(x)


def load_pretrained(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    return model


def worker(local_rank, checkpoint_path):
    model = load_pretrained(Net(), checkpoint_path)
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(8, 16, device=device), torch.randint(0, 4, (8,), device=device)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def save_rank0_checkpoint(path):
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    torch.save({"model": Net().to(device).state_dict()}, path)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "pretrained.pth")
    save_rank0_checkpoint(path)
    print(worker(int(os.environ.get("LOCAL_RANK", 0)), path))
