# source: https://github.com/doccano/spacy-partial-tagger/pull/25
# error: RuntimeError: Expected all tensors to be on the same device
# bug: the transformer tok2vec layer tokenizes the docs' texts into a batch of CPU tensors and feeds
#      it to the wrapped transformer, which thinc has placed on the GPU; the batch is never moved.
#      The fix fetches thinc's default torch device and moves the tokenized batch there.
from typing import Any, List

import torch
from thinc.api import Model, require_gpu
from transformers import AutoModel, AutoTokenizer


def forward(model: Model, X: List[Any], is_train: bool):
    tokenizer = model.attrs["tokenizer"]
    transformer = model.attrs["transformer"]
    texts = [doc.text for doc in X]
    max_length = model.attrs["max_length"]
    padding = "max_length" if max_length is not None else True
    batch = tokenizer(
        texts,
        add_special_tokens=False,
        return_offsets_mapping=tokenizer.is_fast,
        return_tensors="pt",
        padding=padding,
        max_length=max_length,
        truncation=False,
    )  # expect: DL203
    batch.pop("offset_mapping", None)
    outputs = transformer(**batch)
    return outputs.last_hidden_state, lambda d: d


if __name__ == "__main__":
    require_gpu()
    name = "roberta-base"
    transformer = AutoModel.from_pretrained(name).to("cuda")
    layer = Model("tok2vec_transformer", forward,
                  attrs={"tokenizer": AutoTokenizer.from_pretrained(name), "transformer": transformer,
                         "max_length": None})

    class Doc:
        text = "spaCy partial tagger"

    hidden, _ = layer.begin_update([Doc()])
