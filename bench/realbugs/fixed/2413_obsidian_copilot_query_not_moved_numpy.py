# source: https://github.com/eugeneyan/obsidian-copilot/pull/4
# fixed twin: the tokenized query is moved with .to(DEVICE) and the query embedding is copied to the host with .cpu() before .numpy() (commit 14ef2d0, PR 4). numpy must be installed to run it.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoding(dict):
    def to(self, device):
        return Encoding({k: v.to(device) for k, v in self.items()})


class ToyTokenizer:
    def __call__(self, texts, max_length=32, padding=False, truncation=True, return_tensors="pt"):
        texts = [texts] if isinstance(texts, str) else texts
        ids = [[(sum(map(ord, w)) % 999) + 1 for w in t.split()][:max_length] for t in texts]
        width = max(len(row) for row in ids)
        input_ids = torch.tensor([row + [0] * (width - len(row)) for row in ids])
        return Encoding(input_ids=input_ids, attention_mask=(input_ids != 0).long())


class Output:
    def __init__(self, last_hidden_state):
        self.last_hidden_state = last_hidden_state


class ToyEncoder(nn.Module):
    def __init__(self, vocab=1000, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layer = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        return Output(torch.tanh(self.layer(self.embed(input_ids))))


def average_pool(last_hidden_states, attention_mask):
    last_hidden = last_hidden_states.masked_fill(~attention_mask[..., None].bool(), 0.0)
    return last_hidden.sum(dim=1) / attention_mask.sum(dim=1)[..., None]


def get_batch_embeddings(document_batch, tokenizer, model):
    docs_tokenized = tokenizer(document_batch, padding=True, truncation=True, return_tensors="pt")
    docs_tokenized = {key: val.to(DEVICE) for key, val in docs_tokenized.items()}
    outputs = model(**docs_tokenized)
    embeddings = average_pool(outputs.last_hidden_state, docs_tokenized["attention_mask"])
    return F.normalize(embeddings, p=2, dim=1).detach().cpu().numpy()


def query_semantic(query, tokenizer, model, doc_embeddings_array, n_results=3):
    query_tokenized = tokenizer(f"query: {query}", padding=False, truncation=True, return_tensors="pt").to(DEVICE)
    outputs = model(**query_tokenized)
    query_embedding = average_pool(outputs.last_hidden_state, query_tokenized["attention_mask"])
    query_embedding = F.normalize(query_embedding, p=2, dim=1).detach().cpu().numpy()
    cos_sims = np.dot(doc_embeddings_array, query_embedding.T).flatten()
    return np.argsort(cos_sims)[-n_results:][::-1]


if __name__ == "__main__":
    docs = ["passage: bandits in recommendation", "passage: notes on attention", "passage: cooking pasta",
            "passage: a b test design", "passage: reinforcement learning for ads"]
    tokenizer = ToyTokenizer()
    model = ToyEncoder()
    model.to(DEVICE)
    doc_embeddings_array = np.concatenate([get_batch_embeddings(docs[i:i + 2], tokenizer, model)
                                           for i in range(0, len(docs), 2)], axis=0)
    print(query_semantic("Examples of bandits in industry", tokenizer, model, doc_embeddings_array))
