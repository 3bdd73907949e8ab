# source: https://github.com/center-for-humans-and-machines/transformer-heads/issues/22
# fixed twin: each batch's tensors are put on the model's device before the call, as commit 7a1b562 does.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class HeadedModel(nn.Module):
    def __init__(self, vocab_size=50, dim=16, num_labels=3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids).mean(1))
        return nn.functional.cross_entropy(logits, labels)


def evaluate_head_wise(model, ds, batch_size=4):
    loader = DataLoader(ds, batch_size=batch_size)
    losses = []
    model.eval()
    with torch.no_grad():
        for batch in loader:
            device = next(model.parameters()).device
            batch = {key: value.to(device) for key, value in batch.items()}
            loss = model(batch["input_ids"], batch["labels"])
            losses.append(loss.item())
    return sum(losses) / len(losses)


if __name__ == "__main__":
    ds = [{"input_ids": torch.randint(0, 50, (10,)), "labels": torch.tensor(i % 3)} for i in range(8)]
    model = HeadedModel().to("cuda" if torch.cuda.is_available() else "cpu")
    print(evaluate_head_wise(model, ds))
