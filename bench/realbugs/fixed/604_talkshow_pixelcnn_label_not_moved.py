# source: https://github.com/yhw-yhw/TalkSHOW/issues/36
# error: RuntimeError: Expected all tensors to be on the same device (running the demo scripts)
# bug: the body generator moves the audio features to its device but takes the speaker id as the
#      demo passes it (a CPU tensor; it only builds one on the device when no id is given), and the
#      gated PixelCNN feeds that id to its class-conditioning embedding on the GPU. The fix posted
#      in the thread moves the conditioning input to the embedding's device before the lookup (an
#      inserted line; the marker sits on the lookup it precedes; no rule covers an argument that is
#      not moved, DL203 is the closest).
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedMaskedConv2d(nn.Module):
    def __init__(self, dim, n_classes=4):
        super().__init__()
        self.class_cond_embedding = nn.Embedding(n_classes, 2 * dim)
        self.vert_stack = nn.Conv2d(dim, 2 * dim, 3, padding=1)

    def forward(self, x_v, h):
        h = h.to(self.class_cond_embedding.weight.device)
        h = self.class_cond_embedding(h)
        out = self.vert_stack(x_v) + h[:, :, None, None]
        a, b = out.chunk(2, dim=1)
        return torch.tanh(a) * torch.sigmoid(b)


class GatedPixelCNN(nn.Module):
    def __init__(self, input_dim=16, dim=8, n_layers=2):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, dim)
        self.layers = nn.ModuleList(GatedMaskedConv2d(dim) for _ in range(n_layers))
        self.output_conv = nn.Conv2d(dim, input_dim, 1)

    def forward(self, x, label):
        x = self.embedding(x).permute(0, 3, 1, 2)
        for layer in self.layers:
            x = layer(x, label)
        return self.output_conv(x)

    def generate(self, label, shape=(4, 2), batch_size=2):
        param = next(self.parameters())
        x = torch.zeros((batch_size, *shape), dtype=torch.int64, device=param.device)
        for i in range(shape[0]):
            for j in range(shape[1]):
                probs = F.softmax(self.forward(x, label)[:, :, i, j], -1)
                x.data[:, i, j].copy_(probs.multinomial(1).squeeze().data)
        return x


class BodyGenerator(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device
        self.generator = GatedPixelCNN()

    def infer_on_audio(self, aud_feat, id=None, B=2):
        aud_feat = torch.tensor(aud_feat, dtype=torch.float32).to(self.device)
        if id is None:
            id = torch.tensor([0]).to(self.device)
        else:
            id = id.repeat(B)
        with torch.no_grad():
            return self.generator.generate(id, shape=[aud_feat.shape[1] // 4, 2], batch_size=B)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = BodyGenerator(device).to(device).eval()
    print(model.infer_on_audio([[0.1] * 16], id=torch.tensor([1])).shape)
