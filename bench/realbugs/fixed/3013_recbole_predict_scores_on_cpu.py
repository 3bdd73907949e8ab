# source: https://github.com/RUCAIBox/RecBole/issues/1984
# fixed twin: PR #1997 (commit b6b90a4a) draws Random's scores with torch.rand(..., device=self.device) and moves the
#             scores ADMMSLIM and SLIMElastic compute on the host .to(self.device).
import numpy as np
import torch
import torch.nn as nn


class Interaction(dict):
    def __len__(self):
        return len(next(iter(self.values())))

    def to(self, device):
        return Interaction({k: v.to(device) for k, v in self.items()})


def add_noise(t, mag=1e-5):
    return t + mag * torch.rand(t.shape)


class GeneralRecommender(nn.Module):
    def __init__(self, config, dataset):
        super().__init__()
        self.USER_ID, self.ITEM_ID = "user_id", "item_id"
        self.n_users, self.n_items = dataset["n_users"], dataset["n_items"]
        self.device = config["device"]


class Random(GeneralRecommender):
    def __init__(self, config, dataset):
        super().__init__(config, dataset)
        self.fake_loss = nn.Parameter(torch.zeros(1))

    def predict(self, interaction):
        return torch.rand(len(interaction), device=self.device).squeeze(-1)


class ADMMSLIM(GeneralRecommender):
    def __init__(self, config, dataset):
        super().__init__(config, dataset)
        self.dummy_param = nn.Parameter(torch.zeros(1))
        self.interaction_matrix = dataset["inter_matrix"]
        self.item_means = self.interaction_matrix.mean(axis=0)
        self.item_similarity = np.random.rand(self.n_items, self.n_items).astype(np.float32)
        self.center_columns = True

    def predict(self, interaction):
        user = interaction[self.USER_ID].cpu().numpy()
        item = interaction[self.ITEM_ID].cpu().numpy()
        user_interactions = self.interaction_matrix[user, :]
        if self.center_columns:
            r = ((user_interactions - self.item_means) * self.item_similarity[:, item].T).sum(axis=1).flatten() + self.item_means[item]
        else:
            r = (user_interactions * self.item_similarity[:, item].T).sum(axis=1).flatten()
        return add_noise(torch.from_numpy(r)).to(self.device)


class SLIMElastic(GeneralRecommender):
    def __init__(self, config, dataset):
        super().__init__(config, dataset)
        self.dummy_param = nn.Parameter(torch.zeros(1))
        self.interaction_matrix = dataset["inter_matrix"]
        self.item_similarity = np.random.rand(self.n_items, self.n_items).astype(np.float32)

    def predict(self, interaction):
        user = interaction[self.USER_ID].cpu().numpy()
        item = interaction[self.ITEM_ID].cpu().numpy()
        r = torch.from_numpy((self.interaction_matrix[user, :] * self.item_similarity[:, item].T).sum(axis=1).flatten()).to(self.device)
        return r


class Trainer:
    def __init__(self, config, model):
        self.config, self.model = config, model
        self.device = config["device"]
        self.tot_item_num = model.n_items

    @torch.no_grad()
    def _neg_sample_batch_eval(self, batched_data):
        interaction, row_idx, positive_u, positive_i = batched_data
        origin_scores = self.model.predict(interaction.to(self.device))
        col_idx = interaction[self.config["ITEM_ID_FIELD"]]
        batch_user_num = positive_u[-1] + 1
        scores = torch.full((batch_user_num, self.tot_item_num), -float("inf"), device=self.device)
        scores[row_idx, col_idx] = origin_scores
        return interaction, scores, positive_u, positive_i

    def evaluate(self, eval_data):
        self.model.eval()
        hits = 0
        for batched_data in eval_data:
            interaction, scores, positive_u, positive_i = self._neg_sample_batch_eval(batched_data)
            top = scores.topk(10, dim=1).indices
            hits += (top[positive_u] == positive_i.unsqueeze(1)).any(dim=1).sum().item()
        return {"hit@10": hits}


def uni100_eval_data(n_users, n_items, device, batches=2, users_per_batch=4):
    data = []
    for _ in range(batches):
        users = torch.arange(users_per_batch).repeat_interleave(101)
        items = torch.randint(0, n_items, (users_per_batch * 101,))
        row_idx = torch.arange(users_per_batch).repeat_interleave(101)
        positive_u = torch.arange(users_per_batch)
        positive_i = items.view(users_per_batch, 101)[:, 0]
        data.append((Interaction(user_id=users, item_id=items), row_idx.to(device), positive_u.to(device),
                     positive_i.to(device)))
    return data


if __name__ == "__main__":
    torch.manual_seed(42)
    config = {"device": torch.device("cuda:0" if torch.cuda.is_available() else "cpu"), "ITEM_ID_FIELD": "item_id"}
    dataset = {"n_users": 20, "n_items": 200, "inter_matrix": (np.random.rand(20, 200) < 0.05).astype(np.float32)}
    for model_class in (Random, ADMMSLIM, SLIMElastic):
        model = model_class(config, dataset).to(config["device"])
        trainer = Trainer(config, model)
        eval_data = uni100_eval_data(dataset["n_users"], dataset["n_items"], config["device"])
        print(model_class.__name__, trainer.evaluate(eval_data))
