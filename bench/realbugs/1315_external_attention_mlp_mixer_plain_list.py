# source: https://github.com/xmu-xiaoma666/External-Attention-pytorch/issues/94
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the MLP-Mixer keeps its mixer blocks in a plain Python list, so they are not registered as
#      submodules: model.to("cuda") (and the optimizer, and state_dict) never sees them, and the first
#      block gets CUDA tokens with CPU weights. The reporter's fix (issue open, not applied upstream)
#      makes the attribute an nn.ModuleList; that line is marked (DL105).
import torch
from torch import nn


class MlpBlock(nn.Module):
    def __init__(self, input_dim, mlp_dim=512):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, mlp_dim)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(mlp_dim, input_dim)

    def forward(self, x):
        return self.fc2(self.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, tokens_mlp_dim=16, channels_mlp_dim=64, tokens_hidden_dim=32, channels_hidden_dim=64):
        super().__init__()
        self.ln = nn.LayerNorm(channels_mlp_dim)
        self.tokens_mlp_block = MlpBlock(tokens_mlp_dim, mlp_dim=tokens_hidden_dim)
        self.channels_mlp_block = MlpBlock(channels_mlp_dim, mlp_dim=channels_hidden_dim)

    def forward(self, x):
        y = self.ln(x).transpose(1, 2)
        y = self.tokens_mlp_block(y).transpose(1, 2)
        out = x + y
        return out + self.channels_mlp_block(self.ln(out))


class MlpMixer(nn.Module):
    def __init__(self, num_classes, num_blocks, patch_size, tokens_hidden_dim, channels_hidden_dim, tokens_mlp_dim, channels_mlp_dim):
        super().__init__()
        self.num_blocks = num_blocks
        self.tokens_mlp_dim = tokens_mlp_dim
        self.embd = nn.Conv2d(3, channels_mlp_dim, kernel_size=patch_size, stride=patch_size)
        self.ln = nn.LayerNorm(channels_mlp_dim)
        self.mlp_blocks = []  # expect: DL105
        for _ in range(num_blocks):
            self.mlp_blocks.append(MixerBlock(tokens_mlp_dim, channels_mlp_dim, tokens_hidden_dim, channels_hidden_dim))
        self.fc = nn.Linear(channels_mlp_dim, num_classes)

    def forward(self, x):
        y = self.embd(x)
        bs, c, h, w = y.shape
        y = y.view(bs, c, -1).transpose(1, 2)
        if self.tokens_mlp_dim != y.shape[1]:
            raise ValueError("Tokens_mlp_dim is not correct.")
        for i in range(self.num_blocks):
            y = self.mlp_blocks[i](y)
        y = self.ln(y)
        return self.fc(torch.mean(y, dim=1, keepdim=False))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    mlp_mixer = MlpMixer(num_classes=10, num_blocks=2, patch_size=10, tokens_hidden_dim=32,
                         channels_hidden_dim=64, tokens_mlp_dim=16, channels_mlp_dim=64).to(device)
    output = mlp_mixer(torch.randn(5, 3, 40, 40).to(device))
    print(output.shape)
