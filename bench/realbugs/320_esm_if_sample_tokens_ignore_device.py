# source: https://github.com/facebookresearch/esm/pull/488
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (sampling with the model on a GPU)
# bug: sample() takes a device and builds the coordinates batch there, but the token buffer it
#      decodes into is made with torch.full without it, so the decoder's embedding on the GPU
#      receives CPU token ids.
import torch
import torch.nn as nn
import torch.nn.functional as F

from esm.inverse_folding.features import GVPTransformerEncoder
from esm.inverse_folding.transformer_decoder import TransformerDecoder
from esm.inverse_folding.util import CoordBatchConverter


class GVPTransformerModel(nn.Module):
    def __init__(self, args, alphabet):
        super().__init__()
        encoder_embed = nn.Embedding(len(alphabet), args.encoder_embed_dim, padding_idx=alphabet.padding_idx)
        decoder_embed = nn.Embedding(len(alphabet), args.decoder_embed_dim, padding_idx=alphabet.padding_idx)
        self.args = args
        self.encoder = GVPTransformerEncoder(args, alphabet, encoder_embed)
        self.decoder = TransformerDecoder(args, alphabet, decoder_embed)

    def forward(self, coords, padding_mask, confidence, prev_output_tokens):
        encoder_out = self.encoder(coords, padding_mask, confidence)
        logits, extra = self.decoder(prev_output_tokens, encoder_out)
        return logits, extra

    def sample(self, coords, partial_seq=None, temperature=1.0, confidence=None, device=None):
        length = len(coords)
        converter = CoordBatchConverter(self.decoder.dictionary)
        batch_coords, confidence, _, _, padding_mask = converter([(coords, confidence, None)], device=device)

        mask_idx = self.decoder.dictionary.get_idx("<mask>")
        sampled_tokens = torch.full((1, 1 + length), mask_idx, dtype=int)  # expect: DL202
        sampled_tokens[0, 0] = self.decoder.dictionary.get_idx("<cath>")
        if partial_seq is not None:
            for i, c in enumerate(partial_seq):
                sampled_tokens[0, i + 1] = self.decoder.dictionary.get_idx(c)

        incremental_state = dict()
        encoder_out = self.encoder(batch_coords, padding_mask, confidence)

        for i in range(1, length + 1):
            logits, _ = self.decoder(sampled_tokens[:, :i], encoder_out, incremental_state=incremental_state)
            logits = logits[0].transpose(0, 1)
            logits /= temperature
            probs = F.softmax(logits, dim=-1)
            if sampled_tokens[0, i] == mask_idx:
                sampled_tokens[:, i] = torch.multinomial(probs, 1).squeeze(-1)
        sampled_seq = sampled_tokens[0, 1:]
        return "".join([self.decoder.dictionary.get_tok(a) for a in sampled_seq])
