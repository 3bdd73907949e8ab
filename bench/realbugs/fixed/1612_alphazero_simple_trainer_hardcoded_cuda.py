# source: https://github.com/JoshVarty/AlphaZeroSimple/issues/7
# fixed twin: the batches are moved to self.model.device instead of the default GPU, as the issue proposes.
import os
import random
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Connect2Model(nn.Module):
    def __init__(self, board_size, action_size, device):
        super().__init__()
        self.device = device
        self.size = board_size
        self.action_size = action_size
        self.fc1 = nn.Linear(board_size, 16)
        self.fc2 = nn.Linear(16, 16)
        self.action_head = nn.Linear(16, action_size)
        self.value_head = nn.Linear(16, 1)
        self.to(device)

    def forward(self, x):
        x = F.relu(self.fc2(F.relu(self.fc1(x))))
        return F.softmax(self.action_head(x), dim=1), torch.tanh(self.value_head(x))

    def predict(self, board):
        board = torch.tensor(board, dtype=torch.float32).to(self.device).view(1, self.size)
        self.eval()
        with torch.no_grad():
            pi, v = self.forward(board)
        return pi.cpu()[0].tolist(), v.cpu()[0].item()


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args

    def execute_episode(self):
        examples = []
        for _ in range(4):
            board = [random.choice([-1, 0, 1]) for _ in range(self.model.size)]
            pi, v = self.model.predict(board)
            examples.append((board, pi, random.choice([-1.0, 1.0])))
        return examples

    def train(self, examples):
        optimizer = optim.Adam(self.model.parameters(), lr=5e-4)
        for epoch in range(self.args["epochs"]):
            self.model.train()
            batch_idx = 0
            while batch_idx < int(len(examples) / self.args["batch_size"]):
                sample = [examples[random.randrange(len(examples))] for _ in range(self.args["batch_size"])]
                boards, pis, vs = list(zip(*sample))
                boards = torch.FloatTensor(boards)
                target_pis = torch.FloatTensor(pis)
                target_vs = torch.FloatTensor(vs)
                boards = boards.contiguous().to(self.model.device)
                target_pis = target_pis.contiguous().to(self.model.device)
                target_vs = target_vs.contiguous().to(self.model.device)
                out_pi, out_v = self.model(boards)
                total_loss = self.loss_pi(target_pis, out_pi) + self.loss_v(target_vs, out_v)
                optimizer.zero_grad()
                total_loss.backward()
                optimizer.step()
                batch_idx += 1
            print("epoch", epoch, float(total_loss))

    def loss_pi(self, targets, outputs):
        return -(targets * torch.log(outputs)).sum(dim=1).mean()

    def loss_v(self, targets, outputs):
        return torch.sum((targets - outputs.view(-1)) ** 2) / targets.size()[0]

    def learn(self):
        examples = []
        for _ in range(self.args["numEps"]):
            examples.extend(self.execute_episode())
        self.train(examples)
        torch.save({"state_dict": self.model.state_dict()}, os.path.join(tempfile.mkdtemp(), "latest.pth"))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Connect2Model(4, 4, device)
    Trainer(model, {"batch_size": 4, "numEps": 4, "epochs": 2}).learn()
