# source: https://github.com/mozilla/TTS/pull/549
# error: RuntimeError: expected all tensors on the same device (guided attention loss, issue #473)
# bug: the guided-attention mask is built from torch.arange(olen)/torch.arange(ilen) on the CPU and
#      then divided by ilen/olen, which are 0-dim CUDA tensors taken from the length batch.
import torch
from torch.nn import functional


def sequence_mask(sequence_length, max_len=None):
    if max_len is None:
        max_len = sequence_length.data.max()
    seq_range = torch.arange(max_len, dtype=sequence_length.dtype, device=sequence_length.device)
    return seq_range.unsqueeze(0) < sequence_length.unsqueeze(1)


class GuidedAttentionLoss(torch.nn.Module):
    def __init__(self, sigma=0.4):
        super(GuidedAttentionLoss, self).__init__()
        self.sigma = sigma

    def _make_ga_masks(self, ilens, olens):
        B = len(ilens)
        max_ilen = max(ilens)
        max_olen = max(olens)
        ga_masks = torch.zeros((B, max_olen, max_ilen))
        for idx, (ilen, olen) in enumerate(zip(ilens, olens)):
            ga_masks[idx, :olen, :ilen] = self._make_ga_mask(ilen, olen, self.sigma)
        return ga_masks

    def forward(self, att_ws, ilens, olens):
        ga_masks = self._make_ga_masks(ilens, olens).to(att_ws.device)
        seq_masks = self._make_masks(ilens, olens).to(att_ws.device)
        losses = ga_masks * att_ws
        loss = torch.mean(losses.masked_select(seq_masks))
        return loss

    @staticmethod
    def _make_ga_mask(ilen, olen, sigma):
        grid_x, grid_y = torch.meshgrid(torch.arange(olen), torch.arange(ilen))  # expect: DL202
        grid_x, grid_y = grid_x.float(), grid_y.float()
        return 1.0 - torch.exp(-(grid_y / ilen - grid_x / olen)**2 / (2 * (sigma**2)))

    @staticmethod
    def _make_masks(ilens, olens):
        in_masks = sequence_mask(ilens)
        out_masks = sequence_mask(olens)
        return out_masks.unsqueeze(-1) & in_masks.unsqueeze(-2)


class TacotronLoss(torch.nn.Module):
    def __init__(self, ga_alpha=5.0, ga_sigma=0.4):
        super(TacotronLoss, self).__init__()
        self.ga_alpha = ga_alpha
        self.criterion_ga = GuidedAttentionLoss(sigma=ga_sigma)

    def forward(self, postnet_output, mel_input, alignments, text_lengths, mel_lengths):
        loss = functional.l1_loss(postnet_output, mel_input)
        ga_loss = self.criterion_ga(alignments, text_lengths, mel_lengths)
        return loss + self.ga_alpha * ga_loss
