# source: https://github.com/twitter/communitynotes/issues/306
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the matrix-factorization scorer moves its model to a GPU when one exists and builds the rating
#      labels on the model's device; the second (normalized-loss) pass hands those labels to the
#      NormalizedLoss module, whose constructor checks them against the ratings table with .numpy()
#      (the reported failure) and builds the per-rating weights with torch.FloatTensor on the CPU, though
#      it is given the device; forward() then multiplies those weights by the loss on the GPU. The fix
#      (commit 7a843c1, in a larger change) compares against targets.cpu().numpy() and moves targets and
#      weights to the given device after building them (DL204 on the .numpy() line; DL311 on the weights
#      made without the device parameter, the line the inserted move amends). numpy must be installed.
import torch
import torch.nn as nn


class NormalizedLoss(nn.Module):
    def __init__(self, criterion, ratings, targets, label_col, device="cpu"):
        super().__init__()
        self.loss_fn = criterion
        self.targets = targets
        assert len(ratings[label_col]) == len(targets)
        assert all(ratings[label_col] == targets.numpy())  # expect: DL204
        counts = {}
        for note in ratings["noteId"]:
            counts[note] = counts.get(note, 0) + 1
        weight_map = {(r, n): 1.0 / counts[n] for r, n in zip(ratings["raterId"], ratings["noteId"])}
        self.weights = torch.FloatTensor([weight_map[(r, n)] for r, n in zip(ratings["raterId"], ratings["noteId"])])  # expect: DL311
        assert len(self.weights) == len(self.targets)

    def forward(self, pred):
        return (self.weights * self.loss_fn(pred, self.targets)).mean()


class BiasedMF(nn.Module):
    def __init__(self, n_users, n_notes, dim=1):
        super().__init__()
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.user_factors = nn.Embedding(n_users, dim)
        self.note_factors = nn.Embedding(n_notes, dim)
        self.global_intercept = nn.Parameter(torch.zeros(1))

    def forward(self, users, notes):
        dot = (self.user_factors(users) * self.note_factors(notes)).sum(dim=1)
        return dot + self.global_intercept


class MatrixFactorization:
    def __init__(self, ratings, label_col="helpfulNum"):
        self.ratings = ratings
        self.label_col = label_col
        self.criterion = nn.MSELoss(reduction="none")
        self.mf_model = BiasedMF(max(ratings["raterId"]) + 1, max(ratings["noteId"]) + 1)
        self.mf_model.to(self.mf_model.device)
        self._loss_module = None

    def prepare(self):
        dev = self.mf_model.device
        self.rating_labels = torch.FloatTensor(self.ratings[self.label_col]).to(dev)
        self.users = torch.LongTensor(self.ratings["raterId"]).to(dev)
        self.notes = torch.LongTensor(self.ratings["noteId"]).to(dev)

    def fit(self, epochs=5):
        opt = torch.optim.Adam(self.mf_model.parameters(), lr=0.1)
        for _ in range(epochs):
            pred = self.mf_model(self.users, self.notes)
            if self._loss_module is None:
                loss = self.criterion(pred, self.rating_labels).mean()
            else:
                loss = self._loss_module(pred)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return float(loss)

    def run_mf(self):
        self.prepare()
        self.fit()
        self._loss_module = NormalizedLoss(self.criterion, self.ratings, self.rating_labels, self.label_col,
                                           device=self.mf_model.device)
        return self.fit()


if __name__ == "__main__":
    import numpy as np

    ratings = {"raterId": [0, 1, 2, 0, 1], "noteId": [0, 0, 1, 1, 2],
               "helpfulNum": np.array([1.0, 0.0, 1.0, 0.5, 1.0], dtype=np.float32)}
    print(round(MatrixFactorization(ratings).run_mf(), 4))
