"""Which files are worth parsing: those that may run PyTorch code.

A file is linted when it mentions ``torch`` (which covers ``torchvision``, ``torchaudio``,
``pytorch_lightning``) or imports a library that runs PyTorch underneath: a script that only
does ``from transformers import AutoModel``, moves the model with ``.to("cuda")`` and feeds it
a tokenizer's host tensors has the same device bugs as one that imports torch itself. Every
other file costs a text scan, not a parse.
"""

from __future__ import annotations

import re

#: libraries whose models, pipelines and batches are PyTorch objects (their facts live in
#: devicelint.analysis.torch_api and the library-fact modules)
PYTORCH_LIBRARIES = ("transformers", "diffusers", "lightning", "timm", "accelerate", "peft", "sentence_transformers", "allennlp")

_LIBRARY_IMPORT = re.compile(rf"^[ \t]*(?:from|import)[ \t]+(?:{'|'.join(PYTORCH_LIBRARIES)})\b", re.MULTILINE)


def may_use_pytorch(text: str) -> bool:
    """Does the source mention torch, or import a library built on it?"""
    return "torch" in text or _LIBRARY_IMPORT.search(text) is not None
