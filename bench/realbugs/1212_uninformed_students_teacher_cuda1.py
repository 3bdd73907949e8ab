# source: https://github.com/LuyaooChen/uninformed-students-pytorch/issues/3
# error: RuntimeError: CUDA error: invalid device ordinal (at model = _Teacher(patch_size).to(device) in teacher_train.py)
# bug: the teacher-distillation script fixes its device at module level to the second GPU of the
#      author's two-GPU machine, and moves the teacher, the frozen ResNet and every batch there; on
#      a one-GPU machine the first move fails. The maintainer's answer (issue closed) is to use
#      'cuda:0' (or 'cpu') instead; that line is marked. The original line has no CPU fallback;
#      one is added here so the reproduction runs on a CPU-only machine. (No rule covers a
#      hard-coded GPU index that may not exist; DL302, a hard-coded CUDA device, is the closest,
#      a stretch.)
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

patch_size = 17
batch_size = 8
lr = 2e-4
epochs = 1
work_dir = tempfile.mkdtemp() + "/"
device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")  # expect: DL302


class _Teacher(nn.Module):
    def __init__(self, patch_size):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 5), nn.LeakyReLU(), nn.Conv2d(16, 32, 5), nn.LeakyReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 64))

    def forward(self, x):
        return self.net(x)


dataset = TensorDataset(torch.randn(32, 3, patch_size, patch_size), torch.zeros(32, dtype=torch.long))
dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=True)

model = _Teacher(patch_size).to(device)
pretrained = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 128)).to(device)
pretrained.eval()
optim = torch.optim.Adam(model.parameters(), lr=lr)

for i in range(epochs):
    for data, labels in dataloader:
        data = data.to(device)
        output = model(data)
        with torch.no_grad():
            target = pretrained(data)[:, :64]
        loss_k = F.smooth_l1_loss(output, target, reduction="sum")
        optim.zero_grad()
        loss_k.backward()
        optim.step()
    print("epoch: {}, loss_k: {}".format(i + 1, loss_k.item()))

if not os.path.exists(work_dir):
    os.mkdir(work_dir)
torch.save(model.state_dict(), work_dir + "_teacher" + str(patch_size) + ".pth")
