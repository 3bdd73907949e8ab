# source: https://github.com/zhangxiann/BertPractice/pull/1
# error: RuntimeError: Expected all tensors to be on the same device (logits on cuda:0, labels on cpu)
# bug: the sentiment fine-tuning script moves the tokenized text to the device but takes each
#      batch's labels from the loader as they are, on the host, and passes them to the CUDA
#      model as labels= (and to the loss and the accuracy). The PR moves the labels to the device
#      in the training and evaluation loops; both changed lines are marked.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class SentimentDataset(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, idx):
        return {"input_ids": torch.randint(0, 100, (20,)), "label": idx % 2}


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(100, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, input_ids, labels):
        logits = self.out(self.embed(input_ids))
        return nn.functional.cross_entropy(logits, labels), logits


def train(model, dataloader, optimizer, criterion, device):
    model.train()
    for batch in dataloader:
        label = batch["label"]  # expect: DL203
        input_ids = batch["input_ids"].to(device)
        optimizer.zero_grad()
        output = model(input_ids, labels=label)
        loss = criterion(output[1].view(-1, 2), label.view(-1))
        loss.backward()
        optimizer.step()


def evaluate(model, iterator, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in iterator:
            label = batch["label"]  # expect: DL203
            input_ids = batch["input_ids"].to(device)
            output = model(input_ids, labels=label)
            correct += (output[1].argmax(dim=1) == label.view(-1)).sum().item()
    return correct / len(iterator.dataset)


model = Classifier()
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = DataLoader(SentimentDataset(), batch_size=8, shuffle=True)
train(model, loader, optimizer, nn.CrossEntropyLoss(), device)
print(evaluate(model, loader, device))
