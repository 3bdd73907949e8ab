# source: https://github.com/huggingface/accelerate/issues/210
# fixed twin: the checkpoint is a host copy of the state dict; the live model stays where it is.
import io

import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=50, dim=16, classes=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, input_ids):
        return self.head(self.embedding(input_ids).mean(dim=1))


def batches(device, n=3):
    for _ in range(n):
        yield torch.randint(0, 50, (4, 7)).to(device), torch.randint(0, 3, (4,)).to(device)


def evaluate(model, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for input_ids, labels in batches(device):
            correct += (model(input_ids).argmax(-1) == labels).sum().item()
    return correct


def save_checkpoint(model, buffer):
    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, buffer)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TextClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    buffer = io.BytesIO()
    for epoch in range(2):
        model.train()
        for input_ids, labels in batches(device):
            loss = nn.functional.cross_entropy(model(input_ids), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, device))
        save_checkpoint(model, buffer)


if __name__ == "__main__":
    main()
