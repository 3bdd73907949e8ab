# source: https://github.com/center-for-humans-and-machines/transformer-heads/issues/22
# error: RuntimeError: Expected all tensors to be on the same device (model on cuda, evaluation batches on cpu)
# bug: the evaluation helper formats the dataset with with_format(type="torch"), which yields host
#      tensors, and calls the model (placed on the GPU) on each collated batch as is. The fix
#      (commit 7a1b562) puts each batch's tensors on the model's device on the fly; the model call
#      is marked. A list of host
#      tensors stands in for the torch-formatted dataset.
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
            loss = model(batch["input_ids"], batch["labels"])  # expect: DL203
            losses.append(loss.item())
    return sum(losses) / len(losses)


if __name__ == "__main__":
    ds = [{"input_ids": torch.randint(0, 50, (10,)), "labels": torch.tensor(i % 3)} for i in range(8)]
    model = HeadedModel().to("cuda" if torch.cuda.is_available() else "cpu")
    print(evaluate_head_wise(model, ds))
