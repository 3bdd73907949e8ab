# source: https://github.com/pykeen/pykeen/pull/658
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (when checking argument for argument index in method wrapper__index_select) (pykeen#654: the documented
#        predict_triples_df(model=result.model, triples=("uk", "conferences", "brazil"), triples_factory=result.training)
#        with CUDA available)
# bug: Model resolves its device in __init__ and moves itself there (to_device_), but the predict_* methods hand the
#      batches they receive straight to the score_* functions; predict_triples_df passes the triples factory's
#      mapped_triples, which live on the CPU, and users pass CPU batches too. The fix (commit 506ffdd) moves the
#      batch to self.device in predict_hrt (in place) and adds the move before scoring in predict_h, predict_t and
#      predict_r; the four scoring lines are marked (DL203: a model on a device called on batches that never were).
#      Reduced to a TransE-like model without slicing or inverse triples; data frames are lists of rows here.
from typing import Optional, Sequence, Tuple

import torch
import torch.nn as nn


def resolve_device(device: Optional[str] = None) -> torch.device:
    if device is None or device == "gpu":
        device = "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        device = "cpu"
    return torch.device(device)


class TriplesFactory:
    def __init__(self, labeled: Sequence[Tuple[str, str, str]]):
        self.entity_to_id = {e: i for i, e in enumerate(sorted({x for h, _, t in labeled for x in (h, t)}))}
        self.relation_to_id = {r: i for i, r in enumerate(sorted({r for _, r, _ in labeled}))}
        self.mapped_triples = self.map_triples(labeled)

    def map_triples(self, labeled):
        return torch.tensor([[self.entity_to_id[h], self.relation_to_id[r], self.entity_to_id[t]] for h, r, t in labeled],
                            dtype=torch.long)

    def tensor_to_df(self, tensor, score):
        return [(int(h), int(r), int(t), float(s)) for (h, r, t), s in zip(tensor.tolist(), score.tolist())]


class Model(nn.Module):
    def __init__(self, triples_factory, predict_with_sigmoid=False, preferred_device=None):
        super().__init__()
        self.device = resolve_device(device=preferred_device)
        self.num_entities = len(triples_factory.entity_to_id)
        self.num_relations = len(triples_factory.relation_to_id)
        self.predict_with_sigmoid = predict_with_sigmoid

    def to_device_(self):
        self.to(self.device)
        return self

    def predict_hrt(self, hrt_batch: torch.LongTensor) -> torch.FloatTensor:
        self.eval()
        scores = self.score_hrt(hrt_batch)  # expect: DL203
        if self.predict_with_sigmoid:
            scores = torch.sigmoid(scores)
        return scores

    def predict_h(self, rt_batch: torch.LongTensor) -> torch.FloatTensor:
        self.eval()
        scores = self.score_h(rt_batch)  # expect: DL203
        if self.predict_with_sigmoid:
            scores = torch.sigmoid(scores)
        return scores

    def predict_t(self, hr_batch: torch.LongTensor) -> torch.FloatTensor:
        self.eval()
        scores = self.score_t(hr_batch)  # expect: DL203
        if self.predict_with_sigmoid:
            scores = torch.sigmoid(scores)
        return scores

    def predict_r(self, ht_batch: torch.LongTensor) -> torch.FloatTensor:
        self.eval()
        scores = self.score_r(ht_batch)  # expect: DL203
        if self.predict_with_sigmoid:
            scores = torch.sigmoid(scores)
        return scores


class TransE(Model):
    def __init__(self, triples_factory, embedding_dim=16, **kwargs):
        super().__init__(triples_factory, **kwargs)
        self.entity_embeddings = nn.Embedding(self.num_entities, embedding_dim)
        self.relation_embeddings = nn.Embedding(self.num_relations, embedding_dim)

    def score_hrt(self, hrt_batch):
        h, r, t = (self.entity_embeddings(hrt_batch[:, 0]), self.relation_embeddings(hrt_batch[:, 1]),
                   self.entity_embeddings(hrt_batch[:, 2]))
        return -torch.norm(h + r - t, dim=-1, keepdim=True)

    def score_t(self, hr_batch):
        hr = self.entity_embeddings(hr_batch[:, 0]) + self.relation_embeddings(hr_batch[:, 1])
        return -torch.cdist(hr, self.entity_embeddings.weight)

    def score_h(self, rt_batch):
        rt = self.entity_embeddings(rt_batch[:, 1]) - self.relation_embeddings(rt_batch[:, 0])
        return -torch.cdist(rt, self.entity_embeddings.weight)

    def score_r(self, ht_batch):
        diff = self.entity_embeddings(ht_batch[:, 1]) - self.entity_embeddings(ht_batch[:, 0])
        return -torch.cdist(diff, self.relation_embeddings.weight)


def _predict_triples(model, mapped_triples, batch_size=None):
    if batch_size is None or batch_size >= mapped_triples.shape[0]:
        return model.predict_hrt(hrt_batch=mapped_triples)
    return torch.cat([model.predict_hrt(hrt_batch=hrt_batch)
                      for hrt_batch in mapped_triples.split(split_size=batch_size, dim=0)], dim=0)


def predict_triples_df(model, *, triples=None, triples_factory=None, batch_size=None):
    if triples is None:
        triples = triples_factory.mapped_triples
    if not isinstance(triples, torch.Tensor):
        if isinstance(triples[0], str):
            triples = [triples]
        triples = triples_factory.map_triples(triples)
    scores = _predict_triples(model=model, mapped_triples=triples, batch_size=batch_size).squeeze(dim=1)
    return triples_factory.tensor_to_df(tensor=triples, score=scores)


if __name__ == "__main__":
    torch.manual_seed(0)
    labeled = [("uk", "conferences", "brazil"), ("usa", "treaties", "uk"), ("brazil", "embassy", "usa"),
               ("china", "conferences", "usa"), ("uk", "treaties", "china")]
    training = TriplesFactory(labeled)
    model = TransE(training).to_device_()
    print(predict_triples_df(model=model, triples=("uk", "conferences", "brazil"), triples_factory=training))
    print(predict_triples_df(model=model, triples_factory=training, batch_size=2)[:2])
    print(model.predict_t(torch.tensor([[0, 1]])).shape, model.predict_h(torch.tensor([[1, 2]])).shape,
          model.predict_r(torch.tensor([[0, 3]])).shape)
