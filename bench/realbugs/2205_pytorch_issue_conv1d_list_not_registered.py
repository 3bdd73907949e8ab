# source: https://github.com/pytorch/pytorch/issues/1053
# error: (after net.cuda()) the Conv1d layers are still on the CPU: their weights are not the model's parameters, and the forward meets CUDA inputs with CPU weights
# bug: a text CNN keeps its three Conv1d filters (kernel sizes 3, 4, 5) in a plain Python list
#      attribute; the list is not registered, so net.cuda() / net.to(device) does not move them
#      (nor does the optimizer see them). The maintainer's answer: this is expected, use
#      nn.ModuleList. The list assignment is marked (DL105).
import torch
import torch.nn as nn
import torch.nn.functional as F

WORD_VEC_SIZE = 16


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = [  # expect: DL105
            nn.Conv1d(WORD_VEC_SIZE, 1, 3),
            nn.Conv1d(WORD_VEC_SIZE, 1, 4),
            nn.Conv1d(WORD_VEC_SIZE, 1, 5),
        ]
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        pooled = [F.max_pool1d(F.relu(conv(x)), conv_len).squeeze(2)
                  for conv, conv_len in zip(self.conv1d, (x.size(2) - 2, x.size(2) - 3, x.size(2) - 4))]
        return self.fc(torch.cat(pooled, dim=1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Net().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(4, WORD_VEC_SIZE, 20, device=device)
    y = torch.randint(0, 2, (4,), device=device)
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.item(), sum(p.numel() for p in net.parameters()))
