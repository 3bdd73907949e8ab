# source: https://github.com/roboflow/inference/pull/2560
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (compare_embeddings: x_embeddings_norm @ y_embeddings_norm.T)
# bug: the ONNX CLIP model's embed_text tokenizes with clip.tokenize, which returns a CPU tensor,
#      and runs the text session on it without moving it; the I/O-binding helper takes the
#      execution device from the input, so the text embeddings come back on the CPU while
#      embed_images preprocesses onto the model's device and returns GPU embeddings, and the
#      similarity matmul mixes the two. The merged PR moves the tokens to self._device before the
#      forward, as the PyTorch CLIP class already did. The tokenize line is marked (DL203, the
#      closest rule: the model's text input is never moved to its device). onnxruntime and clip
#      are not installed here: the session below computes on whatever device its input is on.
import torch
import torch.nn as nn
import torch.nn.functional as F


def tokenize(texts, context_length=16):
    out = torch.zeros(len(texts), context_length, dtype=torch.int32)
    for i, t in enumerate(texts):
        ids = [min(ord(c), 255) for c in t][:context_length]
        out[i, :len(ids)] = torch.tensor(ids, dtype=torch.int32)
    return out


class FakeSession:
    """Stands in for an onnxruntime session bound through I/O binding: runs where its input is."""

    def __init__(self, module):
        self.module = module

    def run(self, x):
        return self.module.to(x.device)(x)


class TextTower(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.emb = nn.Embedding(256, dim)

    def forward(self, tokens):
        return self.emb(tokens.long()).mean(dim=1)


class ImageTower(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.proj = nn.Linear(3 * 8 * 8, dim)

    def forward(self, pixels):
        return self.proj(pixels.flatten(1))


def run_onnx_session_via_iobinding(session, inputs):
    return session.run(inputs)


class ClipOnnx:
    def __init__(self, device):
        self._device = torch.device(device)
        self._visual_session = FakeSession(ImageTower())
        self._textual_session = FakeSession(TextTower())

    def embed_images(self, images):
        pixels = F.interpolate(images, size=(8, 8)).to(self._device)
        return run_onnx_session_via_iobinding(self._visual_session, pixels)

    def embed_text(self, texts):
        tokens = tokenize(texts)  # expect: DL203
        return run_onnx_session_via_iobinding(self._textual_session, tokens)


def compare_embeddings(x_embeddings, y_embeddings):
    x_embeddings_norm = x_embeddings / x_embeddings.norm(dim=-1, keepdim=True)
    y_embeddings_norm = y_embeddings / y_embeddings.norm(dim=-1, keepdim=True)
    return x_embeddings_norm @ y_embeddings_norm.T


if __name__ == "__main__":
    model = ClipOnnx("cuda" if torch.cuda.is_available() else "cpu")
    image_embeddings = model.embed_images(torch.rand(2, 3, 32, 32))
    text_embeddings = model.embed_text(["a dog", "a cat", "a truck"])
    print(compare_embeddings(image_embeddings, text_embeddings).shape)
