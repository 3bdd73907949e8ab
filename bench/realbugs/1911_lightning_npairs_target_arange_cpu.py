# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2400
# error: RuntimeError: Expected object of device type cuda but got device type cpu for argument #2 'target' in call to _thnn_nll_loss_forward
# bug: a sentence-pair model trained with an N-pairs loss: the trainer moves the module (and the
#      loss module it holds) and every batch to the GPU, but training_step builds the matching
#      targets - row i of the similarity matrix belongs to class i - with torch.arange on the host
#      and hands them to the cross-entropy with the GPU similarities. The thread's answer is not in
#      the stored text; the fix used here makes the targets on the batch's device. The arange line
#      is marked (DL202: a tensor made without device= that meets the model's tensors).
import torch
from torch import nn


class NPairsLoss(nn.Module):
    def __init__(self, alpha=100):
        super().__init__()
        self.ce = nn.CrossEntropyLoss()
        self.alpha = alpha

    def similarities(self, x1, x2):
        x1 = nn.functional.normalize(x1, dim=1)
        x2 = nn.functional.normalize(x2, dim=1)
        return self.alpha * x1 @ x2.t()

    def forward(self, predict, target):
        x1, x2 = predict
        return self.ce(self.similarities(x1, x2), target)


class PairEncoder(nn.Module):
    def __init__(self, vocab=100, dim=16):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.loss_fn = NPairsLoss()

    def forward(self, x1, x2):
        return self.proj(self.embed(x1)), self.proj(self.embed(x2))

    def training_step(self, batch, batch_idx):
        x1, x2 = batch["x1"], batch["x2"]
        predict = self(x1, x2)
        target = torch.arange(x1.size()[0])  # expect: DL202
        loss = self.loss_fn(predict, target)
        return {"loss": loss}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def fit(model, batches, device):
    model.to(device)
    optimizer = model.configure_optimizers()
    for i, batch in enumerate(batches):
        batch = {k: v.to(device) for k, v in batch.items()}
        loss = model.training_step(batch, i)["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    batches = [{"x1": torch.randint(0, 100, (8, 5)), "x2": torch.randint(0, 100, (8, 5))} for _ in range(3)]
    print(fit(PairEncoder(), batches, device))
