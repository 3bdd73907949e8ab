# source: https://github.com/OpenNMT/OpenNMT-py/pull/127
# error: (PR "fix cpu model in transformer - cuda is now only called when opt.gpus is set.", no traceback; built
#        here without a GPU: AssertionError: Torch not compiled with CUDA enabled)
# bug: onmt/Models.py's Embeddings.__init__ builds the positional-encoding table with .cuda() unconditionally, and
#      onmt/modules/Transformer.py's TransformerDecoder.__init__ does the same for its subsequent-position mask, so a
#      transformer model cannot be built without CUDA, and a CPU run (no -gpus) on a GPU machine would add a CUDA
#      table to CPU embeddings. The fix (PR #127, commits 6074ecc/03cccd0 "fix cpu model") drops
#      both .cuda() calls and moves the tensors only when len(opt.gpus) > 0; the two changed lines are marked
#      (DL302, hard-coded cuda in a module's constructor).
#      Reductions: Embeddings keeps the word table and positional encoding (the feature embeddings and their MLP are
#      dropped); TransformerDecoder keeps its mask construction and use, with onmt's MultiHeadedAttention and
#      BottleLinear/BottleLayerNorm feed-forward replaced by a small masked dot-product attention and nn.Linear/
#      nn.LayerNorm; Decoder keeps the embedding-then-transformer-layers path of its "transformer" decoder_layer;
#      the driver builds the model with the options of a CPU run (gpus=[]) and, under len(opt.gpus) > 0, moves it
#      and the random src/context/tgt batches with .cuda() as train.py's model.cuda(), onmt.Dataset's
#      "if self.cuda: b = b.cuda()" and the encoder (context on the model's device) do. NumPy is imported as upstream
#      (absent here), so the file does not run on this machine.
import math
from argparse import Namespace

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

PAD = 0


def aeq(*args):
    base = args[0]
    for a in args[1:]:
        assert a == base, str(args)


# --- onmt/Models.py ---
class Embeddings(nn.Module):
    def __init__(self, opt, dicts, feature_dicts=None):
        self.positional_encoding = opt.position_encoding
        if self.positional_encoding:
            self.pe = self.make_positional_encodings(opt.word_vec_size, 5000) \
                          .cuda()  # expect: DL302

        self.word_vec_size = opt.word_vec_size

        super(Embeddings, self).__init__()
        self.word_lut = nn.Embedding(dicts.size(),
                                     opt.word_vec_size,
                                     padding_idx=PAD)
        self.dropout = nn.Dropout(p=opt.dropout)
        self.feature_dicts = feature_dicts

    def make_positional_encodings(self, dim, max_len):
        pe = torch.FloatTensor(max_len, 1, dim).fill_(0)
        for i in range(dim):
            for j in range(max_len):
                k = float(j) / (10000.0 ** (2.0*i / float(dim)))
                pe[j, 0, i] = math.cos(k) if i % 2 == 1 else math.sin(k)
        return pe

    def forward(self, src_input):
        word = self.word_lut(src_input[:, :, 0])
        emb = word
        if self.positional_encoding:
            emb = emb + Variable(self.pe[:emb.size(0), :1, :emb.size(2)]
                                 .expand_as(emb))
            emb = self.dropout(emb)
        return emb


# --- onmt/modules/Transformer.py ---
def get_attn_padding_mask(seq_q, seq_k):
    ''' Indicate the padding-related part to mask '''
    assert seq_q.dim() == 2 and seq_k.dim() == 2
    mb_size, len_k = seq_k.size()
    mb_size_, len_q = seq_q.size()
    aeq(mb_size, mb_size_)
    # bx1xsk
    pad_attn_mask = seq_k.data.eq(PAD).unsqueeze(1) \
        .expand(mb_size, len_q, len_k)
    return pad_attn_mask


def get_attn_subsequent_mask(size):
    ''' Get an attention mask to avoid using the subsequent info.'''
    attn_shape = (1, size, size)
    subsequent_mask = np.triu(np.ones(attn_shape), k=1).astype('uint8')
    subsequent_mask = torch.from_numpy(subsequent_mask)
    return subsequent_mask


class MultiHeadedAttention(nn.Module):
    """Stand-in for onmt.modules.MultiHeadedAttention: one head, masked dot product."""
    def __init__(self, head_count, model_dim, p=0.1):
        super(MultiHeadedAttention, self).__init__()
        self.proj = nn.Linear(model_dim, model_dim)

    def forward(self, key, value, query, mask=None):
        scores = torch.bmm(query, key.transpose(1, 2)) / math.sqrt(key.size(2))
        if mask is not None:
            scores = scores.masked_fill(mask.bool(), -1e18)
        attn = torch.softmax(scores, -1)
        return self.proj(torch.bmm(attn, value)), attn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_hid, d_inner_hid, dropout=0.1):
        super(PositionwiseFeedForward, self).__init__()
        self.w_1 = nn.Linear(d_hid, d_inner_hid)
        self.w_2 = nn.Linear(d_inner_hid, d_hid)
        self.layer_norm = nn.LayerNorm(d_hid)
        self.dropout = nn.Dropout(dropout)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        output = self.dropout(self.w_2(self.relu(self.w_1(x))))
        return self.layer_norm(output + residual)


class TransformerDecoder(nn.Module):
    def __init__(self, hidden_size, opt, n_head=8, d_inner=2048):
        super(TransformerDecoder, self).__init__()
        self.self_attn = MultiHeadedAttention(n_head, hidden_size, p=opt.dropout)
        self.context_attn = MultiHeadedAttention(n_head, hidden_size, p=opt.dropout)
        self.feed_forward = PositionwiseFeedForward(hidden_size, d_inner, opt.dropout)
        self.dropout = opt.dropout
        self.mask = get_attn_subsequent_mask(5000).cuda()  # expect: DL302

    def forward(self, input, context, src_words, tgt_words):
        # CHECKS
        n_batch, t_len, _ = input.size()
        n_batch_, s_len, _ = context.size()
        n_batch__, s_len_ = src_words.size()
        n_batch___, t_len_ = tgt_words.size()
        aeq(n_batch, n_batch_, n_batch__, n_batch___)
        aeq(s_len, s_len_)
        aeq(t_len, t_len_)
        # END CHECKS

        attn_mask = get_attn_padding_mask(tgt_words, tgt_words)
        dec_mask = torch.gt(attn_mask + self.mask[:, :attn_mask.size(1),
                                                  :attn_mask.size(1)]
                            .expand_as(attn_mask), 0)

        pad_mask = get_attn_padding_mask(tgt_words, src_words)
        query, attn = self.self_attn(input, input, input, mask=dec_mask)
        mid, attn = self.context_attn(context, context, query, mask=pad_mask)
        output = self.feed_forward(mid)

        return output, attn


# --- onmt/Models.py Decoder, transformer path ---
class Decoder(nn.Module):
    def __init__(self, opt, dicts):
        self.layers = opt.layers
        self.decoder_layer = opt.decoder_layer
        self.hidden_size = opt.rnn_size

        super(Decoder, self).__init__()
        self.embeddings = Embeddings(opt, dicts, None)

        if self.decoder_layer == "transformer":
            self.transformer = nn.ModuleList(
                [TransformerDecoder(self.hidden_size, opt)
                 for _ in range(opt.layers)])

    def forward(self, input, src, context):
        emb = self.embeddings(input.unsqueeze(2))
        output = emb.transpose(0, 1).contiguous()
        src_context = context.transpose(0, 1).contiguous()
        for i in range(self.layers):
            output, attn = self.transformer[i](output, src_context,
                                               src[:, :, 0].transpose(0, 1),
                                               input.transpose(0, 1))
        return output.transpose(0, 1).contiguous()


class Dict(object):
    def __init__(self, n):
        self.n = n

    def size(self):
        return self.n


if __name__ == "__main__":
    opt = Namespace(position_encoding=True, word_vec_size=32, rnn_size=32, dropout=0.1, layers=2,
                    decoder_layer="transformer", gpus=[])
    decoder = Decoder(opt, Dict(50))
    src = torch.randint(1, 50, (7, 3, 1))
    context = torch.randn(7, 3, 32)
    tgt = torch.randint(1, 50, (5, 3))
    if len(opt.gpus) > 0:
        decoder.cuda()
        src, context, tgt = src.cuda(), context.cuda(), tgt.cuda()
    print(decoder(tgt, src, context).shape)
