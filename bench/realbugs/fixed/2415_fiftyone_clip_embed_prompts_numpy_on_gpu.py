# source: https://github.com/voxel51/fiftyone/issues/2852
# fixed twin: embed_prompts copies the embedding to the host first, .detach().cpu().numpy() (the maintainers' fix). numpy must be installed to run it.
import torch
import torch.nn as nn


class TinyCLIP(nn.Module):
    def __init__(self, vocab=500, context_length=16, dim=32):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)
        self.positional_embedding = nn.Parameter(torch.randn(context_length, dim) * 0.01)
        self.text_projection = nn.Linear(dim, dim, bias=False)

    def encode_text(self, text):
        x = self.token_embedding(text) + self.positional_embedding
        eot = text.argmax(dim=-1)
        return self.text_projection(x[torch.arange(x.shape[0], device=x.device), eot])


class SimpleTokenizer:
    def __init__(self):
        self.encoder = {"<|startoftext|>": 498, "<|endoftext|>": 499}

    def encode(self, text):
        return [(sum(map(ord, w)) % 490) + 1 for w in text.lower().split()]


class TorchCLIPModel:
    def __init__(self, context_length=16, text_prompt="A photo of"):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.context_length = context_length
        self.text_prompt = text_prompt
        self._tokenizer = SimpleTokenizer()
        self._model = self._load_model()

    def _load_model(self):
        return TinyCLIP(context_length=self.context_length).to(self.device).float().eval()

    def embed_prompt(self, prompt):
        return self.embed_prompts([prompt])[0]

    def embed_prompts(self, prompts):
        return self._embed_prompts(prompts).detach().cpu().numpy()

    def _embed_prompts(self, prompts):
        sot_token = self._tokenizer.encoder["<|startoftext|>"]
        eot_token = self._tokenizer.encoder["<|endoftext|>"]
        all_tokens = [[sot_token] + self._tokenizer.encode(p) + [eot_token] for p in prompts]
        text_features = torch.zeros(len(all_tokens), self.context_length, dtype=torch.long, device=self.device)
        for i, tokens in enumerate(all_tokens):
            text_features[i, :len(tokens)] = torch.tensor(tokens)
        with torch.no_grad():
            return self._model.encode_text(text_features)


def sort_by_text_similarity(model, image_embeddings, query, k=3):
    query_embedding = model.embed_prompt("%s %s" % (model.text_prompt, query))
    scores = image_embeddings @ torch.from_numpy(query_embedding)
    return scores.topk(k).indices.tolist()


if __name__ == "__main__":
    model = TorchCLIPModel()
    image_embeddings = torch.randn(10, 32)
    print(sort_by_text_similarity(model, image_embeddings, "a dog on the beach"))
