# source: https://github.com/pykeen/pykeen/issues/799
# fixed twin: PR #801 (commit 144f65cdf) makes NegativeSampler an nn.Module (super().__init__() first, so the filterer is
#             a registered submodule) and SLCWATrainingLoop moves the sampler it makes .to(self.device).
import math
from abc import abstractmethod

import torch
from torch import nn


class Filterer(nn.Module):
    def forward(self, negative_batch):
        return ~self.contains(batch=negative_batch)

    @abstractmethod
    def contains(self, batch):
        raise NotImplementedError


class BloomFilterer(Filterer):
    def __init__(self, mapped_triples, error_rate=0.001):
        super().__init__()
        self.ideal_num_elements = mapped_triples.shape[0]
        size = self.num_bits(num=self.ideal_num_elements, error_rate=error_rate)
        self.register_buffer(name="bit_array", tensor=torch.zeros(size, dtype=torch.bool))
        self.register_buffer(name="mersenne", tensor=torch.as_tensor(data=[2 ** x - 1 for x in [17, 19, 31]],
                                                                     dtype=torch.long).unsqueeze(dim=0))
        self.rounds = self.num_probes(num_elements=self.ideal_num_elements, num_bits=size)
        self.add(triples=mapped_triples)

    @staticmethod
    def num_bits(num, error_rate=0.01):
        return int(math.ceil(-num * math.log(error_rate) / math.log(2) ** 2))

    @staticmethod
    def num_probes(num_elements, num_bits):
        return int(math.ceil(num_bits / num_elements * math.log(2)))

    def probe(self, batch):
        x = (self.mersenne * batch).sum(dim=-1)
        for _ in range(self.rounds):
            x = x ^ (x >> 16)
            x = x * 0x7FEB352D
            x = x ^ (x >> 15)
            yield x % self.bit_array.shape[0]

    def add(self, triples):
        for i in self.probe(batch=triples):
            self.bit_array[i] = True

    def contains(self, batch):
        result = batch.new_ones(batch.shape[:-1], dtype=torch.bool)
        for i in self.probe(batch):
            result &= self.bit_array[i]
        return result


class CoreTriplesFactory:
    def __init__(self, mapped_triples, num_entities, num_relations):
        self.mapped_triples, self.num_entities, self.num_relations = mapped_triples, num_entities, num_relations


class NegativeSampler(nn.Module):
    def __init__(self, triples_factory, num_negs_per_pos=None, filtered=False, filterer=None):
        super().__init__()
        self.num_entities = triples_factory.num_entities
        self.num_relations = triples_factory.num_relations
        self.num_negs_per_pos = num_negs_per_pos if num_negs_per_pos is not None else 1
        self.filterer = BloomFilterer(mapped_triples=triples_factory.mapped_triples) if filterer is not None or filtered else None

    def sample(self, positive_batch):
        negative_batch = self.corrupt_batch(positive_batch=positive_batch)
        if self.filterer is None:
            return negative_batch, None
        return negative_batch, self.filterer(negative_batch=negative_batch)

    @abstractmethod
    def corrupt_batch(self, positive_batch):
        raise NotImplementedError


class BasicNegativeSampler(NegativeSampler):
    def corrupt_batch(self, positive_batch):
        batch_shape = positive_batch.shape[:-1]
        negative_batch = positive_batch.view(-1, 3).repeat_interleave(self.num_negs_per_pos, dim=0)
        column = torch.randint(0, 2, (negative_batch.shape[0],), device=positive_batch.device) * 2
        rows = torch.arange(negative_batch.shape[0], device=positive_batch.device)
        negative_batch[rows, column] = torch.randint(0, self.num_entities, (negative_batch.shape[0],),
                                                     device=positive_batch.device)
        return negative_batch.view(*batch_shape, self.num_negs_per_pos, 3)


class TransE(nn.Module):
    def __init__(self, num_entities, num_relations, dim=16):
        super().__init__()
        self.entity = nn.Embedding(num_entities, dim)
        self.relation = nn.Embedding(num_relations, dim)

    @property
    def device(self):
        return self.entity.weight.device

    def score_hrt(self, hrt):
        return -(self.entity(hrt[..., 0]) + self.relation(hrt[..., 1]) - self.entity(hrt[..., 2])).norm(dim=-1)


class SLCWATrainingLoop:
    def __init__(self, model, triples_factory, optimizer, negative_sampler_kwargs=None):
        self.model, self.triples_factory, self.optimizer = model, triples_factory, optimizer
        self.negative_sampler = BasicNegativeSampler(triples_factory=triples_factory, **(negative_sampler_kwargs or {})).to(self.device)

    @property
    def device(self):
        return self.model.device

    def _process_batch(self, batch):
        positive_batch = batch.to(device=self.device)
        negative_batch, filter_mask = self.negative_sampler.sample(positive_batch=positive_batch)
        positive_scores = self.model.score_hrt(positive_batch)
        negative_scores = self.model.score_hrt(negative_batch).squeeze(-1)
        if filter_mask is not None:
            negative_scores = negative_scores.masked_fill(~filter_mask.squeeze(-1), 0.0)
        return torch.relu(1.0 + negative_scores - positive_scores).mean()

    def train(self, num_epochs=2, batch_size=32):
        for epoch in range(num_epochs):
            for batch in self.triples_factory.mapped_triples.split(batch_size):
                loss = self._process_batch(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    num_entities, num_relations = 40, 4
    triples = torch.stack([torch.randint(0, num_entities, (200,)), torch.randint(0, num_relations, (200,)),
                           torch.randint(0, num_entities, (200,))], dim=1)
    tf = CoreTriplesFactory(triples, num_entities, num_relations)
    model = TransE(num_entities, num_relations).to("cuda" if torch.cuda.is_available() else "cpu")
    loop = SLCWATrainingLoop(model, tf, torch.optim.Adam(model.parameters(), lr=1e-2),
                             negative_sampler_kwargs=dict(filtered=True))
    loop.train()
