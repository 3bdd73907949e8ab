# source: https://github.com/MinishLab/model2vec/pull/86
# error: (the PR quotes no message) "We didn't move the tensor to cpu before trying to dump it, which causes an error
#        if the model is on another device." - PyTorch's TypeError: can't convert cuda:0 device type tensor to numpy
# bug: StaticModel is an nn.Module whose encode path follows wherever the user puts it (ids and offsets go to
#      self.device, the means come back with .cpu().numpy()), but save_pretrained hands
#      self.embedding.weight.numpy() to utils.save_pretrained, so a model moved to a GPU cannot be saved. The fix
#      (commit 909852d, merged as 5c1ba32) inserts .cpu() there; that line is marked (DL204). Reductions: StaticModel
#      keeps __init__ (vectors from NumPy, the shared Embedding/EmbeddingBag, the unk token, the config), the device
#      property, save_pretrained, forward_mean, tokenize, encode and _encode_batch; the normalize setter's warning,
#      encode_as_sequence, from_pretrained, push_to_hub and the model card are dropped; utils.save_pretrained writes
#      the safetensors file, the tokenizer and the config. The driver builds a word-level tokenizer and random
#      vectors, moves the model to cuda when available, encodes and saves. NumPy, tokenizers and safetensors are
#      imported as upstream (absent here), so the file does not run on this machine.
from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import numpy as np
import torch
from safetensors.numpy import save_file
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from torch import nn
from torch.nn import Embedding, EmbeddingBag


# --- model2vec/utils.py ---
def save_pretrained(folder_path: Path, embeddings: np.ndarray, tokenizer: Tokenizer, config: dict[str, Any],
                    **kwargs: Any) -> None:
    folder_path.mkdir(exist_ok=True, parents=True)
    save_file({"embeddings": embeddings}, folder_path / "model.safetensors")
    tokenizer.save(str(folder_path / "tokenizer.json"))
    json.dump(config, open(folder_path / "config.json", "w"))


# --- model2vec/model.py ---
class StaticModel(nn.Module):
    def __init__(self, vectors: np.ndarray, tokenizer: Tokenizer, config: dict[str, Any] | None = None,
                 normalize: bool | None = None, base_model_name: str | None = None) -> None:
        super().__init__()
        tokens, _ = zip(*sorted(tokenizer.get_vocab().items(), key=lambda x: x[1]))
        self.tokens = tokens
        tensor = torch.from_numpy(vectors)
        # two modules over the same memory
        self.embedding_bag = EmbeddingBag.from_pretrained(tensor, mode="mean")
        self.embedding = Embedding.from_pretrained(tensor)
        self.tokenizer = tokenizer
        if hasattr(self.tokenizer.model, "unk_token") and self.tokenizer.model.unk_token is not None:
            self.unk_token_id = tokenizer.get_vocab()[self.tokenizer.model.unk_token]
        else:
            self.unk_token_id = None
        self.median_token_length = int(np.median([len(token) for token in self.tokens]))
        self.config = config or {}
        self.base_model_name = base_model_name
        self.normalize = normalize if normalize is not None else self.config.get("normalize", False)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def save_pretrained(self, path, model_name: str | None = None) -> None:
        save_pretrained(
            folder_path=Path(path),
            embeddings=self.embedding.weight.numpy(),  # expect: DL204
            tokenizer=self.tokenizer,
            config=self.config,
            base_model_name=self.base_model_name,
            model_name=model_name,
        )

    def forward_mean(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        means = self.embedding_bag(ids, offsets)
        if self.normalize:
            return torch.nn.functional.normalize(means)
        return means

    def tokenize(self, sentences: list[str], max_length: int | None = None):
        if max_length is not None:
            m = max_length * self.median_token_length
            sentences = [sentence[:m] for sentence in sentences]
        encodings = self.tokenizer.encode_batch(sentences, add_special_tokens=False)
        encodings_ids = [encoding.ids for encoding in encodings]
        if self.unk_token_id is not None:
            encodings_ids = [[t for t in token_ids if t != self.unk_token_id] for token_ids in encodings_ids]
        if max_length is not None:
            encodings_ids = [token_ids[:max_length] for token_ids in encodings_ids]
        offsets = torch.from_numpy(np.cumsum([0] + [len(token_ids) for token_ids in encodings_ids[:-1]]))
        ids = torch.tensor([token_id for token_ids in encodings_ids for token_id in token_ids], dtype=torch.long)
        return ids, offsets

    def encode(self, sentences: list[str] | str, max_length: int | None = 512, batch_size: int = 1024) -> np.ndarray:
        was_single = False
        if isinstance(sentences, str):
            sentences = [sentences]
            was_single = True
        out_arrays = [self._encode_batch(sentences[i:i + batch_size], max_length)
                      for i in range(0, len(sentences), batch_size)]
        out_array = np.concatenate(out_arrays, axis=0)
        return out_array[0] if was_single else out_array

    @torch.no_grad()
    def _encode_batch(self, sentences: list[str], max_length: int | None) -> np.ndarray:
        ids, offsets = self.tokenize(sentences, max_length)
        ids = ids.to(self.device)
        offsets = offsets.to(self.device)
        return self.forward_mean(ids, offsets).cpu().numpy()


# --- a user's session (driver) ---
if __name__ == "__main__":
    vocab = {"[UNK]": 0, "static": 1, "embeddings": 2, "are": 3, "fast": 4, "and": 5, "small": 6}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    vectors = np.random.rand(len(vocab), 16).astype(np.float32)
    model = StaticModel(vectors, tokenizer, config={"normalize": True})
    model = model.to("cuda" if torch.cuda.is_available() else "cpu")
    print(model.encode(["static embeddings are fast", "and small"]).shape)
    with TemporaryDirectory() as folder:
        model.save_pretrained(folder)
