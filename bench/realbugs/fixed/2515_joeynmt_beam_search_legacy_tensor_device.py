# source: https://github.com/joeynmt/joeynmt/pull/21
# fixed twin: the initial beam scores are made with the factory torch.tensor([...], device=encoder_output.device) instead of the legacy torch.Tensor constructor (PR 21, commit 84857ea).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def tile(x: Tensor, count: int, dim=0) -> Tensor:
    perm = list(range(len(x.size())))
    if dim != 0:
        perm[0], perm[dim] = perm[dim], perm[0]
        x = x.permute(perm).contiguous()
    out_size = list(x.size())
    out_size[0] *= count
    batch = x.size(0)
    x = x.view(batch, -1).transpose(0, 1).repeat(count, 1).transpose(0, 1).contiguous().view(*out_size)
    if dim != 0:
        x = x.permute(perm).contiguous()
    return x


class Decoder(nn.Module):
    def __init__(self, emb_size=8, hidden_size=16, output_size=12):
        super().__init__()
        self.output_size = output_size
        self.rnn = nn.GRUCell(emb_size + hidden_size, hidden_size)
        self.bridge = nn.Linear(hidden_size, hidden_size)
        self.output_layer = nn.Linear(hidden_size, output_size)

    def _init_hidden(self, encoder_hidden):
        return torch.tanh(self.bridge(encoder_hidden))

    def forward(self, encoder_output, trg_embed, hidden):
        context = encoder_output.mean(dim=1)
        hidden = self.rnn(torch.cat([trg_embed.squeeze(1), context], dim=-1), hidden)
        return self.output_layer(hidden).unsqueeze(1), hidden


def beam_search(decoder: Decoder, size: int, bos_index: int, eos_index: int, encoder_output: Tensor,
                encoder_hidden: Tensor, src_mask: Tensor, max_output_length: int, alpha: float,
                embed: nn.Embedding):
    batch_size = src_mask.size(0)
    hidden = tile(decoder._init_hidden(encoder_hidden), size, dim=0)
    encoder_output = tile(encoder_output.contiguous(), size, dim=0)
    beam_offset = torch.arange(0, batch_size * size, step=size, dtype=torch.long,
                               device=encoder_output.device)
    alive_seq = torch.full([batch_size * size, 1], bos_index, dtype=torch.long,
                           device=encoder_output.device)
    topk_log_probs = (torch.tensor([0.0] + [float("-inf")] * (size - 1),
                                   device=encoder_output.device).repeat(batch_size))
    for step in range(max_output_length):
        decoder_input = alive_seq[:, -1].view(-1, 1)
        out, hidden = decoder(encoder_output=encoder_output, trg_embed=embed(decoder_input), hidden=hidden)
        log_probs = F.log_softmax(out, dim=-1).squeeze(1)
        log_probs += topk_log_probs.view(-1).unsqueeze(1)
        curr_scores = log_probs
        if alpha > -1:
            length_penalty = ((5.0 + (step + 1)) / 6.0) ** alpha
            curr_scores = curr_scores / length_penalty
        curr_scores = curr_scores.reshape(-1, size * decoder.output_size)
        topk_scores, topk_ids = curr_scores.topk(size, dim=-1)
        topk_log_probs = topk_scores * length_penalty if alpha > -1 else topk_scores
        topk_beam_index = topk_ids.div(decoder.output_size, rounding_mode="floor")
        topk_ids = topk_ids.fmod(decoder.output_size)
        select_indices = (topk_beam_index + beam_offset[:topk_beam_index.size(0)].unsqueeze(1)).view(-1)
        alive_seq = torch.cat([alive_seq.index_select(0, select_indices), topk_ids.view(-1, 1)], -1)
        hidden = hidden.index_select(0, select_indices)
        if topk_ids[:, 0].eq(eos_index).all():
            break
    return alive_seq.view(batch_size, size, -1)[:, 0, 1:]


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    decoder = Decoder().to(device)
    embed = nn.Embedding(12, 8).to(device)
    encoder_output = torch.randn(2, 5, 16, device=device)
    encoder_hidden = torch.randn(2, 16, device=device)
    src_mask = torch.ones(2, 1, 5, dtype=torch.bool, device=device)
    with torch.no_grad():
        hyps = beam_search(decoder, 3, 1, 2, encoder_output, encoder_hidden, src_mask, 6, 1.0, embed)
    print(hyps.tolist())
