# source: https://github.com/huggingface/transformers/pull/19681
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: CTRL keeps its sinusoidal table as a plain tensor attribute, so model.to(device) leaves it on
#      the CPU; forward then indexes it with position_ids built on the GPU (rejected since torch 1.13).
import numpy as np
import torch
import torch.nn as nn


def angle_defn(pos, i, d_model_size):
    angle_rates = 1 / torch.pow(10000, (2 * (i // 2)) / d_model_size)
    return pos * angle_rates


def positional_encoding(position, d_model_size, dtype):
    angle_rads = angle_defn(
        torch.arange(position, dtype=dtype).unsqueeze(1),
        torch.arange(d_model_size, dtype=dtype).unsqueeze(0),
        d_model_size,
    )
    sines = torch.sin(angle_rads[:, 0::2])
    cosines = torch.cos(angle_rads[:, 1::2])
    return torch.cat([sines, cosines], dim=-1)


class CTRLModel(nn.Module):
    def __init__(self, vocab_size, n_positions, d_model_size, n_layer):
        super().__init__()
        self.d_model_size = d_model_size
        self.pos_encoding = positional_encoding(n_positions, d_model_size, torch.float)
        self.w = nn.Embedding(vocab_size, d_model_size)
        self.h = nn.ModuleList(
            [nn.TransformerEncoderLayer(d_model_size, 4, batch_first=True) for _ in range(n_layer)]
        )
        self.layernorm = nn.LayerNorm(d_model_size)

    def forward(self, input_ids, past_length=0, position_ids=None):
        input_shape = input_ids.size()
        device = input_ids.device
        if position_ids is None:
            position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long, device=device)
            position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])

        inputs_embeds = self.w(input_ids)
        inputs_embeds *= np.sqrt(self.d_model_size)
        pos_embeds = self.pos_encoding[position_ids, :].to(device)  # expect: DL207
        hidden_states = inputs_embeds + pos_embeds
        for block in self.h:
            hidden_states = block(hidden_states)
        return self.layernorm(hidden_states)


if __name__ == "__main__":
    model = CTRLModel(vocab_size=1000, n_positions=256, d_model_size=64, n_layer=2).to("cuda")
    input_ids = torch.randint(0, 1000, (2, 16), device="cuda")
    out = model(input_ids)
