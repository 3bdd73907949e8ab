# source: https://github.com/HoyTta0/KnowledgeDistillation/issues/10
# fixed twin: the labels are moved to config.device next to the ids and the mask in both loops, as the fix (commit 9487d4f) does.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Config:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.vocab_size = 50
        self.hidden = 16
        self.num_classes = 3
        self.teacher_num_epochs = 1
        self.learning_rate = 1e-3


class TeacherModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.hidden)
        self.fc = nn.Linear(config.hidden, config.num_classes)

    def forward(self, ids, mask):
        h = self.embed(ids) * mask.unsqueeze(-1)
        return self.fc(h.sum(1) / mask.sum(1, keepdim=True).clamp(min=1))


def build_loader(n=12, seq=6, batch_size=4):
    ids = torch.randint(0, 50, (n, seq))
    mask = torch.ones(n, seq)
    labels = torch.randint(0, 3, (n,))
    return DataLoader(TensorDataset(ids, mask, labels), batch_size=batch_size)


def teacher_evaluate(model, config, test_loader):
    model.eval()
    loss_total = 0.0
    with torch.no_grad():
        for ids, mask, labels in test_loader:
            ids = ids.to(config.device)
            mask = mask.to(config.device)
            labels = labels.to(config.device)
            outputs = model(ids, mask)
            loss = F.cross_entropy(outputs, labels)
            loss_total += loss.item()
    return loss_total / len(test_loader)


def teacher_train(model, config, train_loader, test_loader):
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    model.train()
    for epoch in range(config.teacher_num_epochs):
        for i, (ids, mask, labels) in enumerate(train_loader):
            ids = ids.to(config.device)
            mask = mask.to(config.device)
            labels = labels.to(config.device)
            outputs = model(ids, mask)
            model.zero_grad()
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            optimizer.step()
            if i % 2 == 0:
                dev_loss = teacher_evaluate(model, config, test_loader)
                print(epoch, i, loss.item(), dev_loss)
                model.train()


if __name__ == "__main__":
    config = Config()
    teacher = TeacherModel(config).to(config.device)
    teacher_train(teacher, config, build_loader(), build_loader(8))
