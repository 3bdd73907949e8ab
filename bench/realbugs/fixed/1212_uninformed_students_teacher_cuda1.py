# source: https://github.com/LuyaooChen/uninformed-students-pytorch/issues/3
# fixed twin: the script uses the first GPU, 'cuda:0', as the maintainer's answer says (with the same CPU fallback as the buggy copy).
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
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


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
