# source: https://github.com/torchkge-team/torchkge/pull/246
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu) (training
#        with the BernoulliNegativeSampler on a GPU: corrupt_batch on a batch of cuda triples)
# bug: BernoulliNegativeSampler computes its per-relation probabilities once, in __init__, as a CPU tensor
#      (tensor(tmp).float()) kept in the plain attribute self.bern_probs. The training loop moves the model and the
#      batches to the GPU (the DataLoader with use_cuda='all' hands cuda heads/tails/relations), and corrupt_batch
#      indexes the CPU bern_probs with the cuda relations. The PR's commit d56e9d8 ("Fixed cuda-related issue with
#      BernoulliNegative Sampler (#246)") inserts self.bern_probs = self.bern_probs.to(device) (device = heads.device)
#      before that line; the indexing line it precedes is marked (DL207: an index on a device PyTorch rejects for the
#      indexed tensor). The KnowledgeGraph, its DataLoader and TransE are reduced; the training loop follows torchkge's
#      tutorial.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import bernoulli, randint, tensor


class KnowledgeGraph:
    def __init__(self, head_idx, tail_idx, relations, n_ent, n_rel):
        self.head_idx, self.tail_idx, self.relations = head_idx, tail_idx, relations
        self.n_ent, self.n_rel, self.n_facts = n_ent, n_rel, len(head_idx)


def get_bernoulli_probs(kg):
    probs = {}
    for r in range(kg.n_rel):
        mask = kg.relations == r
        if mask.any():
            heads, tails = kg.head_idx[mask], kg.tail_idx[mask]
            tph = mask.sum().item() / heads.unique().numel()
            hpt = mask.sum().item() / tails.unique().numel()
            probs[r] = tph / (tph + hpt)
    return probs


class NegativeSampler:
    def __init__(self, kg, kg_val=None, kg_test=None, n_neg=1):
        self.kg = kg
        self.n_ent = kg.n_ent
        self.n_facts = kg.n_facts
        self.n_neg = n_neg


class BernoulliNegativeSampler(NegativeSampler):
    def __init__(self, kg, kg_val=None, kg_test=None, n_neg=1):
        super().__init__(kg, kg_val, kg_test, n_neg)
        self.bern_probs = self.evaluate_probabilities()

    def evaluate_probabilities(self):
        bern_probs = get_bernoulli_probs(self.kg)
        tmp = []
        for i in range(self.kg.n_rel):
            if i in bern_probs.keys():
                tmp.append(bern_probs[i])
            else:
                tmp.append(0.5)
        return tensor(tmp).float()

    def corrupt_batch(self, heads, tails, relations, n_neg=None):
        if n_neg is None:
            n_neg = self.n_neg
        device = heads.device
        assert device == tails.device
        batch_size = heads.shape[0]
        neg_heads = heads.repeat(n_neg)
        neg_tails = tails.repeat(n_neg)
        mask = bernoulli(self.bern_probs[relations].repeat(n_neg)).double()  # expect: DL207
        n_h_cor = int(mask.sum().item())
        neg_heads[mask == 1] = randint(1, self.n_ent, (n_h_cor,), device=device)
        neg_tails[mask == 0] = randint(1, self.n_ent, (batch_size * n_neg - n_h_cor,), device=device)
        return neg_heads.long(), neg_tails.long()


class DataLoader:
    def __init__(self, kg, batch_size, use_cuda=None):
        self.kg, self.batch_size, self.use_cuda = kg, batch_size, use_cuda

    def __iter__(self):
        h, t, r = self.kg.head_idx, self.kg.tail_idx, self.kg.relations
        if self.use_cuda == "all":
            h, t, r = h.cuda(), t.cuda(), r.cuda()
        for i in range(0, self.kg.n_facts, self.batch_size):
            yield h[i:i + self.batch_size], t[i:i + self.batch_size], r[i:i + self.batch_size]


class TransEModel(nn.Module):
    def __init__(self, emb_dim, n_entities, n_relations):
        super().__init__()
        self.ent_emb = nn.Embedding(n_entities, emb_dim)
        self.rel_emb = nn.Embedding(n_relations, emb_dim)

    def scoring_function(self, h, t, r):
        return -(F.normalize(self.ent_emb(h), dim=1) + self.rel_emb(r) - F.normalize(self.ent_emb(t), dim=1)).norm(dim=1)

    def forward(self, heads, tails, negative_heads, negative_tails, relations):
        return self.scoring_function(heads, tails, relations), self.scoring_function(negative_heads, negative_tails,
                                                                                    relations)


class MarginLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.MarginRankingLoss(margin=margin, reduction="sum")

    def forward(self, positive_triplets, negative_triplets):
        return self.loss(positive_triplets, negative_triplets, target=torch.ones_like(positive_triplets))


if __name__ == "__main__":
    torch.manual_seed(0)
    n_ent, n_rel, n_facts = 50, 5, 400
    kg_train = KnowledgeGraph(torch.randint(0, n_ent, (n_facts,)), torch.randint(0, n_ent, (n_facts,)),
                              torch.randint(0, n_rel, (n_facts,)), n_ent, n_rel)
    model = TransEModel(16, kg_train.n_ent, kg_train.n_rel)
    criterion = MarginLoss(0.5)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        model.cuda()
        criterion.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0004, weight_decay=1e-5)
    sampler = BernoulliNegativeSampler(kg_train)
    dataloader = DataLoader(kg_train, batch_size=64, use_cuda="all" if torch.cuda.is_available() else None)
    for epoch in range(3):
        running_loss = 0.0
        for i, batch in enumerate(dataloader):
            h, t, r = batch[0], batch[1], batch[2]
            n_h, n_t = sampler.corrupt_batch(h, t, r)
            optimizer.zero_grad()
            pos, neg = model(h, t, n_h, n_t, r)
            loss = criterion(pos, neg)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(epoch, running_loss)
