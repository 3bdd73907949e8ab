# source: https://github.com/antoniorv6/SMT/pull/6
# error: (on a machine with a GPU, a model kept on the CPU or moved to another GPU) RuntimeError: Expected all tensors to be on the same device, in the 2D encoding's x + self.pe
# bug: both positional encodings build their sine table as a plain tensor attribute, placed at
#      construction time on "cuda if available else cpu" rather than where the model goes. The
#      model's .to() does not move it: the 2D encoding adds it to the encoder features as it is,
#      and the 1D one copies a slice to the input's device on every call (and not at all on its
#      per-sample branch). The fix (PR 6, commit 8121aa1) registers both tables as non-persistent
#      buffers and drops the per-call copy; the two table constructions are marked (DL103: a
#      module's plain tensor attribute not moved by model.to). The PR also changed the tables'
#      layout (channels last), which this file keeps as it was.
import torch
import torch.nn as nn


class PositionalEncoding2D(nn.Module):
    def __init__(self, dim, h_max, w_max):
        super().__init__()
        self.h_max, self.max_w, self.dim = h_max, w_max, dim
        self.pe = torch.zeros((1, dim, h_max, w_max), device=torch.device("cuda" if torch.cuda.is_available() else "cpu"), requires_grad=False)  # expect: DL103
        div = torch.exp(-torch.arange(0.0, dim // 2, 2) / dim * torch.log(torch.tensor(10000.0))).unsqueeze(1)
        w_pos = torch.arange(0.0, w_max)
        h_pos = torch.arange(0.0, h_max)
        self.pe[:, :dim // 2:2, :, :] = torch.sin(h_pos * div).unsqueeze(0).unsqueeze(3).repeat(1, 1, 1, w_max)
        self.pe[:, 1:dim // 2:2, :, :] = torch.cos(h_pos * div).unsqueeze(0).unsqueeze(3).repeat(1, 1, 1, w_max)
        self.pe[:, dim // 2::2, :, :] = torch.sin(w_pos * div).unsqueeze(0).unsqueeze(2).repeat(1, 1, h_max, 1)
        self.pe[:, dim // 2 + 1::2, :, :] = torch.cos(w_pos * div).unsqueeze(0).unsqueeze(2).repeat(1, 1, h_max, 1)

    def forward(self, x):
        return x + self.pe[:, :, :x.size(2), :x.size(3)]


class PositionalEncoding1D(nn.Module):
    def __init__(self, dim, len_max):
        super().__init__()
        self.len_max, self.dim = len_max, dim
        self.pe = torch.zeros((1, dim, len_max), device=torch.device("cuda" if torch.cuda.is_available() else "cpu"), requires_grad=False)  # expect: DL103
        div = torch.exp(-torch.arange(0.0, dim, 2) / dim * torch.log(torch.tensor(10000.0))).unsqueeze(1)
        l_pos = torch.arange(0.0, len_max)
        self.pe[:, ::2, :] = torch.sin(l_pos * div).unsqueeze(0)
        self.pe[:, 1::2, :] = torch.cos(l_pos * div).unsqueeze(0)

    def forward(self, x, start):
        if isinstance(start, int):
            return x + self.pe[:, :, start:start + x.size(2)].to(x.device)
        for i in range(x.size(0)):
            x[i] = x[i] + self.pe[0, :, start[i]:start[i] + x.size(2)]
        return x


class Decoder(nn.Module):
    def __init__(self, d_model, vocab, max_seq_length):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.position_encoding = PositionalEncoding1D(dim=d_model, len_max=max_seq_length)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, decoder_input, memory):
        x = self.embedding(decoder_input).permute(0, 2, 1).contiguous()
        x = self.position_encoding(x, start=0).permute(0, 2, 1).contiguous()
        return self.out(x + memory.mean(1, keepdim=True))


class SMTModel(nn.Module):
    def __init__(self, d_model=16, maxh=8, maxw=8, vocab=20, max_seq_length=12):
        super().__init__()
        self.encoder = nn.Conv2d(1, d_model, 3, padding=1)
        self.pos2D = PositionalEncoding2D(dim=d_model, h_max=maxh, w_max=maxw)
        self.decoder = Decoder(d_model, vocab, max_seq_length)

    def forward(self, x, decoder_input):
        encoder_output = self.encoder(x)
        encoder_output_2D = self.pos2D(encoder_output)
        memory = encoder_output_2D.flatten(2).permute(0, 2, 1)
        return self.decoder(decoder_input, memory)


if __name__ == "__main__":
    device = torch.device("cpu")  # e.g. CPU inference on a machine that has a GPU
    model = SMTModel().to(device)
    logits = model(torch.randn(2, 1, 6, 6, device=device), torch.randint(0, 20, (2, 5), device=device))
    print(logits.shape, model.pos2D.pe.device)
