# source: https://github.com/seiichiinoue/odcnn/issues/5
# error: RuntimeError: CUDA error: invalid device ordinal (at net = net.to(device) in train.py, on a machine with one GPU)
# bug: the onset-detection training script picks its device as the SECOND GPU whenever CUDA is
#      available ('cuda:1', the author's machine), so on a single-GPU machine moving the network
#      there fails before training starts. The reporter's change, which the maintainer applied
#      ("fixed that code"), selects 'cuda:0'; that line is marked (no rule covers a hard-coded GPU
#      index that may not exist; DL302, a hard-coded CUDA device, is the closest, a stretch).
import sys

import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")  # expect: DL302


class convNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 10, (3, 7))
        self.pool1 = nn.MaxPool2d((3, 1))
        self.conv2 = nn.Conv2d(10, 20, 3)
        self.fc1 = nn.Linear(20 * 4 * 7, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        x = self.pool1(torch.relu(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.fc1(x.flatten(1)))
        return torch.sigmoid(self.fc2(x))

    def train_model(self, feats, answers, epochs, batchsize=8):
        optimizer = optim.SGD(self.parameters(), lr=0.02)
        criterion = nn.MSELoss()
        for _ in range(epochs):
            for i in range(0, len(feats), batchsize):
                x = feats[i : i + batchsize].to(device)
                y = answers[i : i + batchsize].to(device)
                optimizer.zero_grad()
                loss = criterion(self(x), y)
                loss.backward()
                optimizer.step()
        return loss.item()


if __name__ == "__main__":
    net = convNet()
    net = net.to(device)
    feats = torch.randn(32, 3, 80 // 4, 15)
    answers = torch.rand(32, 1)
    mode = sys.argv[1] if len(sys.argv) > 1 else "don"
    print(mode, net.train_model(feats, answers, epochs=2))
