# source: https://github.com/pykeen/pykeen/issues/49
# fixed twin: the training triples are moved to the model's device in the novelty comparison, as PR 50 does.
import torch
import torch.nn as nn


class TriplesFactory:
    def __init__(self, triples):
        entities = sorted({h for h, _, _ in triples} | {t for _, _, t in triples})
        relations = sorted({r for _, r, _ in triples})
        self.entity_to_id = {e: i for i, e in enumerate(entities)}
        self.relation_to_id = {r: i for i, r in enumerate(relations)}
        self.mapped_triples = torch.tensor(
            [[self.entity_to_id[h], self.relation_to_id[r], self.entity_to_id[t]] for h, r, t in triples],
            dtype=torch.long)
        self.num_entities, self.num_relations = len(entities), len(relations)


class TransE(nn.Module):
    def __init__(self, triples_factory, dim=8):
        super().__init__()
        self.triples_factory = triples_factory
        self.entity_embeddings = nn.Embedding(triples_factory.num_entities, dim)
        self.relation_embeddings = nn.Embedding(triples_factory.num_relations, dim)

    @property
    def device(self):
        return self.entity_embeddings.weight.device

    def score_hrt(self, hrt):
        h = self.entity_embeddings(hrt[:, 0])
        r = self.relation_embeddings(hrt[:, 1])
        t = self.entity_embeddings(hrt[:, 2])
        return -(h + r - t).norm(dim=-1)

    def predict_scores_all_tails(self, hr_batch):
        h = self.entity_embeddings(hr_batch[:, 0])
        r = self.relation_embeddings(hr_batch[:, 1])
        return -(h + r).unsqueeze(1).sub(self.entity_embeddings.weight.unsqueeze(0)).norm(dim=-1)

    def predict_tails(self, head_label, relation_label):
        head_id = self.triples_factory.entity_to_id[head_label]
        relation_id = self.triples_factory.relation_to_id[relation_label]
        batch = torch.tensor([[head_id, relation_id]], dtype=torch.long, device=self.device)
        with torch.no_grad():
            scores = self.predict_scores_all_tails(batch)[0]
        rows = []
        for label, entity_id in self.triples_factory.entity_to_id.items():
            rows.append((entity_id, label, scores[entity_id].item(), self._novel(head_id, relation_id, entity_id)))
        return sorted(rows, key=lambda row: -row[2])

    def _novel(self, h, r, t):
        triple = torch.tensor(data=[h, r, t], dtype=torch.long, device=self.device).view(1, 3)
        return not (triple == self.triples_factory.mapped_triples.to(self.device)).all(dim=1).any().item()


def train(model, epochs=5, device=torch.device("cpu")):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    positives = model.triples_factory.mapped_triples.to(device)
    for _ in range(epochs):
        negatives = positives.clone()
        negatives[:, 2] = torch.randint(0, model.triples_factory.num_entities, (len(positives),), device=device)
        loss = torch.relu(1 + model.score_hrt(negatives) - model.score_hrt(positives)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def main():
    facts = [("uk", "conferences", "brazil"), ("usa", "conferences", "uk"), ("brazil", "treaties", "usa"),
             ("china", "treaties", "uk"), ("usa", "treaties", "china")]
    model = TransE(TriplesFactory(facts))
    train(model, device=torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    for row in model.predict_tails("uk", "conferences")[:3]:
        print(row[1], round(row[2], 3), row[3])


if __name__ == "__main__":
    main()
