# source: https://github.com/datamol-io/molfeat/pull/88
# error: none raised: with device="cuda" the featurizer still runs the transformer on the CPU (issue 87: the model was
#        not loaded on the GPU for inference)
# bug: the pretrained HF featurizer takes a `device` argument and hands it to its base class, but the transformer it
#      loads from the model store is never moved there and the tokenized inputs stay on the host, so featurization runs
#      on the CPU whatever the caller asked. The merged fix (PR 88, commit c4eb5df) keeps the device, moves the model in
#      _preload and the inputs in _embed, and converts to NumPy with .cpu() at the end. No error points anywhere; the
#      model call that runs on the CPU is marked (DL311: a device argument ignored; the closest rule).
import torch
import torch.nn as nn

try:
    import numpy  # noqa: F401  (the featurizer returns NumPy arrays)
except ImportError:
    numpy = None


class TinyEncoder(nn.Module):
    def __init__(self, vocab=40, dim=16, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))

    def forward(self, input_ids, attention_mask=None, output_hidden_states=True):
        h = self.embed(input_ids)
        hidden_states = [h]
        for layer in self.layers:
            h = torch.tanh(layer(h))
            hidden_states.append(h)
        return {"hidden_states": hidden_states}


class HFExperiment:
    def __init__(self, model, tokenizer):
        self.model, self.tokenizer = model, tokenizer

    @classmethod
    def load(cls, path):
        model = TinyEncoder()
        tokenizer = lambda seqs: [[min(ord(c) - 32, 39) for c in s] for s in seqs]
        return cls(model, tokenizer)


class PretrainedMolTransformer:
    def __init__(self, dtype=None, device=None, n_jobs=1):
        self.dtype, self.n_jobs = dtype, n_jobs
        self._model_device = device

    def _preload(self):
        pass


def mean_pool(emb, input_ids, mask=None, ignore_padding=True):
    if mask is None or not ignore_padding:
        return emb.mean(dim=1)
    return (emb * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


class PretrainedHFTransformer(PretrainedMolTransformer):
    def __init__(self, kind="ChemBERTa-77M-MLM", concat_layers=-1, dtype=None, device="cpu", ignore_padding=True):
        super().__init__(dtype=dtype, device=device)
        self.kind = kind
        self.concat_layers = [concat_layers]
        self.ignore_padding = ignore_padding
        self.featurizer = HFExperiment.load(kind)
        self._pooling_obj = mean_pool

    def _preload(self):
        super()._preload()
        self.featurizer.max_length = 64

    def _convert(self, seqs):
        ids = self.featurizer.tokenizer(seqs)
        width = max(len(i) for i in ids)
        input_ids = torch.tensor([i + [0] * (width - len(i)) for i in ids])
        return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long()}

    def _embed(self, inputs):
        self._preload()
        attention_mask = inputs.get("attention_mask", None)
        if attention_mask is not None and self.ignore_padding:
            attention_mask = attention_mask.unsqueeze(-1)
        else:
            attention_mask = None
        with torch.no_grad():
            out_dict = self.featurizer.model(output_hidden_states=True, **inputs)  # expect: DL311
            hidden_state = out_dict["hidden_states"]
            emb_layers = []
            for layer in self.concat_layers:
                emb = hidden_state[layer].detach().cpu()
                emb = self._pooling_obj(emb, inputs["input_ids"], mask=attention_mask, ignore_padding=self.ignore_padding)
                emb_layers.append(emb)
            emb = torch.cat(emb_layers, dim=1)
        return emb.numpy()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    transformer = PretrainedHFTransformer(device=device)
    inputs = transformer._convert(["CCO", "c1ccccc1O", "CC(=O)N"])
    print("model on", next(transformer.featurizer.model.parameters()).device, "asked for", device)
    if numpy is None:
        print("NumPy is absent: the embedding step is skipped")
    else:
        print(transformer._embed(inputs).shape)
