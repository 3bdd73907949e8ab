# source: https://github.com/sooftware/conformer/issues/27
# error: AssertionError: Torch not compiled with CUDA enabled (Conformer(device='cpu') on a machine without a GPU; on a GPU machine the inputs of some blocks are sent to cuda:0 whatever device was chosen)
# bug: every Conformer module takes a device (default 'cuda'), stores it, and its forward moves
#      its input there (inputs.to(self.device)) instead of following the input. ConformerBlock
#      passes its own device to the first feed-forward module but builds the attention module, the
#      convolution module and the second feed-forward module without it, so those keep the 'cuda'
#      default: with device='cpu' (or model.cpu()) their forwards still send the activations to the
#      GPU, and on a machine without one they raise. Issue 27 was resolved by PR 28 (commit
#      e6513f9), which hands device=device to the three constructions; those three lines are marked
#      (DL206: forward moves tensors with a device stored in __init__ instead of the input's device
#      - here a stored device that a construction left at its hard-coded default, DL302's ground,
#      the other rule that fits). This bug file raises on a CPU-only machine, as the bug does.
import torch
import torch.nn as nn
from torch import Tensor


class FeedForwardModule(nn.Module):
    def __init__(self, encoder_dim=16, expansion_factor=2, dropout_p=0.1, device: torch.device = "cuda"):
        super().__init__()
        self.device = device
        self.sequential = nn.Sequential(
            nn.LayerNorm(encoder_dim),
            nn.Linear(encoder_dim, encoder_dim * expansion_factor),
            nn.SiLU(),
            nn.Dropout(dropout_p),
            nn.Linear(encoder_dim * expansion_factor, encoder_dim),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs.to(self.device))


class MultiHeadedSelfAttentionModule(nn.Module):
    def __init__(self, d_model=16, num_heads=2, dropout_p=0.1, device: torch.device = "cuda"):
        super().__init__()
        self.device = device
        self.layer_norm = nn.LayerNorm(d_model)
        self.attention = nn.MultiheadAttention(d_model, num_heads, dropout=dropout_p, batch_first=True)

    def forward(self, inputs: Tensor) -> Tensor:
        inputs = self.layer_norm(inputs).to(self.device)
        outputs, _ = self.attention(inputs, inputs, inputs)
        return outputs


class ConformerConvModule(nn.Module):
    def __init__(self, in_channels=16, kernel_size=3, expansion_factor=2, dropout_p=0.1, device: torch.device = "cuda"):
        super().__init__()
        self.device = device
        self.layer_norm = nn.LayerNorm(in_channels)
        self.sequential = nn.Sequential(
            nn.Conv1d(in_channels, in_channels * expansion_factor, 1),
            nn.GLU(dim=1),
            nn.Conv1d(in_channels, in_channels, kernel_size, padding=kernel_size // 2, groups=in_channels),
            nn.BatchNorm1d(in_channels),
            nn.SiLU(),
            nn.Conv1d(in_channels, in_channels, 1),
            nn.Dropout(dropout_p),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        inputs = self.layer_norm(inputs).transpose(1, 2)
        return self.sequential(inputs.to(self.device)).transpose(1, 2)


class ResidualConnectionModule(nn.Module):
    def __init__(self, module: nn.Module, module_factor: float = 1.0):
        super().__init__()
        self.module = module
        self.module_factor = module_factor

    def forward(self, inputs: Tensor) -> Tensor:
        return self.module(inputs) * self.module_factor + inputs


class ConformerBlock(nn.Module):
    def __init__(self, encoder_dim=16, num_attention_heads=2, conv_kernel_size=3, dropout_p=0.1, device: torch.device = "cuda"):
        super().__init__()
        self.device = device
        self.sequential = nn.Sequential(
            ResidualConnectionModule(FeedForwardModule(encoder_dim, dropout_p=dropout_p, device=device), module_factor=0.5),
            ResidualConnectionModule(MultiHeadedSelfAttentionModule(encoder_dim, num_attention_heads, dropout_p)),  # expect: DL206
            ResidualConnectionModule(ConformerConvModule(encoder_dim, conv_kernel_size, dropout_p=dropout_p)),  # expect: DL206
            ResidualConnectionModule(FeedForwardModule(encoder_dim, dropout_p=dropout_p), module_factor=0.5),  # expect: DL206
            nn.LayerNorm(encoder_dim),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs.to(self.device))


class ConformerEncoder(nn.Module):
    def __init__(self, input_dim=8, encoder_dim=16, num_layers=2, device: torch.device = "cuda"):
        super().__init__()
        self.input_projection = nn.Linear(input_dim, encoder_dim)
        self.layers = nn.ModuleList([ConformerBlock(encoder_dim, device=device).to(device) for _ in range(num_layers)])

    def forward(self, inputs: Tensor) -> Tensor:
        outputs = self.input_projection(inputs)
        for layer in self.layers:
            outputs = layer(outputs)
        return outputs


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = ConformerEncoder(device=device).to(device)
    features = torch.randn(2, 10, 8, device=device)
    print(encoder(features).shape)
