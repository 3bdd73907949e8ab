# source: https://github.com/huggingface/transformers/issues/45859
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument mat2 in method wrapper_CUDA_bmm)
# bug: the multimodal rotary embedding of the Qwen3-VL family expands its inv_freq buffer and
#      multiplies it with the position ids without moving it to the activations' device (the
#      Llama rotary moves it with .to(x.device)). Under FSDP2 CPU offload only parameters are
#      brought to the GPU for compute; the parameter-less rotary module's buffer stays on the
#      host, while the position ids are made on the GPU. The fix (PR 45861, merged) adds
#      .to(x.device) to that line, which is marked. No rule covers a buffer an offloading wrapper
#      leaves on the host; DL201 (the CPU inv_freq meets the GPU position ids) is the closest.
#      A stand-in below moves each parameterised leaf to the GPU for its forward, as FSDP2 does.
import torch
import torch.nn as nn


class TextRotaryEmbedding(nn.Module):
    def __init__(self, head_dim=16, base=10000.0, mrope_section=(4, 2, 2)):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.mrope_section = mrope_section

    @torch.no_grad()
    def forward(self, x, position_ids):
        if position_ids.ndim == 2:
            position_ids = position_ids[None, ...].expand(3, position_ids.shape[0], -1)
        inv_freq_expanded = self.inv_freq[None, None, :, None].float().expand(3, position_ids.shape[1], -1, 1)  # expect: DL201
        position_ids_expanded = position_ids[:, :, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(2, 3)
        t, h, w = self.mrope_section
        freqs = torch.cat((freqs[0, ..., :t], freqs[1, ..., t:t + h], freqs[2, ..., t + h:]), dim=-1)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


class TextModel(nn.Module):
    def __init__(self, vocab=50, hidden=32, head_dim=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.q_proj = nn.Linear(hidden, head_dim)
        self.rotary_emb = TextRotaryEmbedding(head_dim)
        self.lm_head = nn.Linear(head_dim, vocab)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        position_ids = torch.arange(input_ids.shape[1], device=x.device)[None].expand(input_ids.shape[0], -1)
        cos, sin = self.rotary_emb(x, position_ids)
        q = self.q_proj(x)
        q = q * cos + torch.cat((-q[..., 8:], q[..., :8]), dim=-1) * sin
        return self.lm_head(q)


def fully_shard_cpu_offload(model, device):
    # FSDP2 with CPUOffloadPolicy, in small: parameters live on the host and are brought to the
    # device for each forward that uses them; the rest of the module stays where it was built
    def pre(module, args):
        module.to(device)

    def post(module, args, output):
        module.to("cpu")

    for module in model.modules():
        if any(True for _ in module.parameters(recurse=False)):
            module.register_forward_pre_hook(pre)
            module.register_forward_hook(post)
    return model


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = fully_shard_cpu_offload(TextModel(), device)
    input_ids = torch.randint(0, 50, (2, 7), device=device)
    print(model(input_ids).shape)
