# source: https://github.com/facebookresearch/ReAgent/pull/485
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices
# bug: the n-gram synthetic-reward networks keep their zero padding as a plain tensor attribute made
#      in __init__; moving the network to the GPU leaves it on the CPU, and forward concatenates it
#      with the (GPU) state/action input. The fix moves the padding to the input's device at each call.
import torch
import torch.nn as nn


def ngram(input: torch.Tensor, context_size: int, padding: torch.Tensor) -> torch.Tensor:
    seq_len, batch_size, _ = input.shape
    pieces = []
    for i in range(context_size):
        shift = i - context_size // 2
        if shift < 0:
            piece = torch.cat((padding.tile((-shift, batch_size, 1)), input.narrow(0, 0, seq_len + shift)), dim=0)
        elif shift > 0:
            piece = torch.cat((input.narrow(0, shift, seq_len - shift), padding.tile((shift, batch_size, 1))), dim=0)
        else:
            piece = input
        pieces.append(piece)
    return torch.cat(pieces, dim=-1)


class NGramConvNet(nn.Module):
    def __init__(self, state_dim, action_dim, context_size=3):
        super().__init__()
        self.context_size = context_size
        self.conv = nn.Conv2d(1, 4, kernel_size=(context_size, 1))
        self.head = nn.Linear(4 * (state_dim + action_dim), 1)
        self.ngram_padding = torch.zeros(1, 1, state_dim + action_dim)

    def forward(self, state, action):
        x = torch.cat((state, action), dim=-1)
        grams = ngram(x, self.context_size, self.ngram_padding.to(x.device))
        seq_len, batch_size, _ = grams.shape
        h = self.conv(grams.reshape(seq_len * batch_size, 1, self.context_size, -1))
        return self.head(h.flatten(1)).view(seq_len, batch_size)


class NGramMLP(nn.Module):
    def __init__(self, state_dim, action_dim, context_size=3):
        super().__init__()
        self.context_size = context_size
        self.fc = nn.Linear((state_dim + action_dim) * context_size, 1)
        self.ngram_padding = torch.zeros(1, 1, state_dim + action_dim)

    def forward(self, state, action):
        x = torch.cat((state, action), dim=-1)
        grams = ngram(x, self.context_size, self.ngram_padding.to(x.device))
        return self.fc(grams).transpose(0, 1).squeeze(2)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = NGramMLP(state_dim=5, action_dim=2).to(device)
    state = torch.randn(10, 4, 5, device=device)
    action = torch.randn(10, 4, 2, device=device)
    print(net(state, action).shape)
