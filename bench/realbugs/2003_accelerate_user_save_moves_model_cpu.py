# source: https://github.com/huggingface/accelerate/issues/210
# error: RuntimeError: Input, output and indices must be on the current device
# bug: the reporter's training script (placed by accelerate on the GPU) saves the model after each
#      evaluation with model.cpu().state_dict(); Module.cpu() moves the live model in place, so the
#      next epoch's token ids (on the GPU) reach an embedding table on the CPU. The reporter names
#      the .cpu() in the save as the cause (the script itself is not public; its structure here is
#      a minimal stand-in). The fix used is to save without moving the live model (a state dict
#      copied to the host). The save line is marked; no rule covers an in-place host move of a
#      model that keeps training, DL201 (the model's CPU weights meet GPU inputs) is the closest.
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
    torch.save(model.cpu().state_dict(), buffer)  # expect: DL201


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
