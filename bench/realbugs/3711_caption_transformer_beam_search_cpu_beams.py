# source: https://github.com/kaylode/caption-transformer/issues/3
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
#        (in beam_search.k_best_ouputs)
# bug: models/transformer/search.py's beam_search takes the device from the model (next(model.parameters()).device)
#      and runs the decoder there, but init_vars builds the beam of token ids as torch.zeros(batch_size, k,
#      max_len).long() on the CPU and returns it unmoved; k_best_outputs then indexes those CPU beams with row, which
#      comes from topk over the decoder's CUDA scores, at outputs[:, :i] = outputs[row, :i]. The reporter: "You can
#      add outputs = outputs.to(device) at this place ... you need to pass the device argument into this function".
#      The issue is open and search.py unchanged at the head (1572c7f), so the indexing line is marked (DL207), the
#      CPU factory in init_vars being where the beams are left behind.
#      Reductions: the captioning Transformer becomes an encoder (a linear projection of the image features), a
#      one-layer TransformerDecoder and the output head, called as search.py calls them; the Hugging Face tokenizer
#      becomes a stand-in with the attributes convert_ids_to_toks uses; top_k_top_p_filtering and the greedy/sampling
#      searches are cut. NumPy is imported as upstream (absent here), so the file does not run on this machine.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def convert_ids_to_toks(token_ids, tokenizer):
    special_tokens = tokenizer.special_tokens_map_extended.values()
    results = []
    for tok_ids in token_ids:
        tok_words = tokenizer.convert_ids_to_tokens(tok_ids)
        result_toks = []
        for word in tok_words:
            if word == tokenizer.sep_token:
                break
            if word not in special_tokens:
                result_toks.append(word)
        results.append(' '.join(result_toks))
    return results


def subsequent_mask(batch_size, size):
    attn_shape = (batch_size, size, size)
    subsequent_mask = np.triu(np.ones(attn_shape), k=1).astype('uint8')
    return torch.from_numpy(subsequent_mask) == 0


def beam_search(model, src, src_mask, tokenizer, src_loc=None, max_len=None, k=5, alpha=0.6):

    def init_vars(model, src_text, src_loc, src_mask, tgt_tokenizer, max_len=64, k=5, device = None):
        batch_size = src_text.shape[0]
        start_symbol = tgt_tokenizer.cls_token_id

        # Encoded inputs
        if src_loc is not None:
            memory = model.encoder(src_text, src_loc)
        else:
            memory = model.encoder(src_text)

        # Result tokens
        ys = torch.ones(batch_size, 1).fill_(start_symbol).long()

        # Target masks
        ys_mask = subsequent_mask(batch_size, ys.size(1)).type_as(src_mask.data)

        # Decoder output
        out = model.decoder(Variable(ys).to(device),
                            memory, src_mask,
                            Variable(ys_mask).to(device))

        # Probability
        prob = model.out(out[:, -1])
        out = F.softmax(prob, dim=-1)
        probs, ix = out.data.topk(k, dim=1)
        log_scores = torch.log(probs)

        # Result beam
        ys = torch.zeros(batch_size, k, max_len).long()
        memorys = torch.zeros(batch_size, k, memory.size(-2),memory.size(-1)).to(device)

        # Copy data to beam
        for index in range(batch_size):
            ys[index, :, 0] = start_symbol
            ys[index, :, 1] = ix[index, 0]

            memorys[index, :, :] = memory[index]

        return ys, memorys, log_scores

    def k_best_outputs(outputs, out, log_scores, i, k):
        # Get top k score
        probs, ix = out.data.topk(k, dim=1)
        log_probs = torch.log(probs) + log_scores.transpose(0,1)
        k_probs, k_ix = log_probs.view(-1).topk(k)

        # row and column of scores
        row = k_ix // k
        col = k_ix % k

        outputs[:, :i] = outputs[row, :i]  # expect: DL207
        outputs[:, i] = ix[row, col]

        log_scores = k_probs.unsqueeze(0)

        return outputs, log_scores

    # Main function of beam search
    model.eval()
    batch_size = src.shape[0]
    device = next(model.parameters()).device
    if max_len is None:
        max_len = src.shape[-1]

    ys, memorys, log_scores = init_vars(
        model, src, src_loc, src_mask, tokenizer,
        max_len=max_len, k=k, device=device)

    results = []
    for batch_id in range(batch_size):
        ys_k = ys[batch_id]
        memorys_k = memorys[batch_id].unsqueeze(0)
        log_scores_k = log_scores[batch_id].unsqueeze(0)
        src_mask_k = src_mask[batch_id].unsqueeze(0)
        for i in range(2, max_len):

            # Target masks
            trg_mask = subsequent_mask(1, i).type_as(src_mask.data)
            out = model.decoder(
                ys_k[:,:i].to(device),
                memorys_k.to(device),
                src_mask_k.to(device),
                trg_mask.to(device))
            prob = model.out(out[:, -1])
            out = F.softmax(prob, dim=-1)
            ys_k, log_scores_k = k_best_outputs(ys_k, out, log_scores_k, i, k)

            # Length penalty
            length_penalty = ((5.0 + (i + 1)) / 6.0) ** alpha
            log_scores_k = log_scores_k / length_penalty

        # Only get beam with highest prob
        highest_prob, highest_prob_id = torch.max(log_scores_k, dim=1)
        highest_prob_sent = ys_k[highest_prob_id]
        token_ids_k = highest_prob_sent.detach().cpu().numpy()
        results_k = convert_ids_to_toks(token_ids_k, tokenizer)
        results.append(results_k[0])

    return results


# --- stand-ins: captioning Transformer and tokenizer ---
class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.layer = nn.TransformerDecoderLayer(d_model, nhead=2, batch_first=True)

    def forward(self, tgt, memory, src_mask, tgt_mask):
        causal = ~tgt_mask[0].bool()
        if memory.dim() == 4:  # the beams' memory arrives as [1, k, len, d]
            memory = memory.squeeze(0)
        return self.layer(self.embed(tgt), memory, tgt_mask=causal)


class CaptionModel(nn.Module):
    def __init__(self, feat_dim=16, d_model=32, vocab_size=20):
        super().__init__()
        self.encoder = nn.Linear(feat_dim, d_model)
        self.decoder = Decoder(vocab_size, d_model)
        self.out = nn.Linear(d_model, vocab_size)


class Tokenizer:
    cls_token_id = 1
    sep_token = '[SEP]'
    special_tokens_map_extended = {'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]'}

    def convert_ids_to_tokens(self, ids):
        return [
            {0: '[PAD]', 1: '[CLS]', 2: '[SEP]'}.get(int(i), 'w%d' % int(i)) for i in ids]


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = CaptionModel().to(device)
    src = torch.rand(2, 10, 16).to(device)
    src_mask = torch.ones(2, 1, 10).to(device)
    print(beam_search(model, src, src_mask, Tokenizer(), max_len=8, k=3))
