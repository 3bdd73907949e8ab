# source: https://github.com/ruotianluo/self-critical.pytorch/issues/239
# fixed twin: the sorted lengths are moved to the host in the pack call (.cpu(), as the maintainer advised).
import torch
import torch.nn as nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


def sort_pack_padded_sequence(input, lengths):
    sorted_lengths, indices = torch.sort(lengths, descending=True)
    tmp = pack_padded_sequence(input[indices], sorted_lengths.cpu(), batch_first=True)
    inv_ix = indices.clone()
    inv_ix[indices] = torch.arange(0, len(indices)).type_as(inv_ix)
    return tmp, inv_ix


def pad_unsort_packed_sequence(input, inv_ix):
    tmp, _ = pad_packed_sequence(input, batch_first=True)
    return tmp[inv_ix]


def pack_wrapper(module, att_feats, att_masks):
    if att_masks is not None:
        packed, inv_ix = sort_pack_padded_sequence(att_feats, att_masks.data.long().sum(1))
        return pad_unsort_packed_sequence(PackedSequence(module(packed[0]), packed[1]), inv_ix)
    return module(att_feats)


class AttModel(nn.Module):
    def __init__(self, att_feat_size=10, rnn_size=12, vocab=30):
        super().__init__()
        self.att_embed = nn.Sequential(nn.Linear(att_feat_size, rnn_size), nn.ReLU())
        self.ctx2att = nn.Linear(rnn_size, rnn_size)
        self.logit = nn.Linear(rnn_size, vocab)

    def _prepare_feature(self, att_feats, att_masks):
        att_feats = pack_wrapper(self.att_embed, att_feats, att_masks)
        return att_feats, self.ctx2att(att_feats)

    def forward(self, att_feats, att_masks):
        att_feats, p_att = self._prepare_feature(att_feats, att_masks)
        weights = torch.softmax(p_att.sum(-1).masked_fill(att_masks[:, : p_att.size(1)] == 0, -1e9), 1)
        return self.logit((weights.unsqueeze(-1) * att_feats).sum(1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = AttModel().to(device)
    counts = [5, 3, 4]
    att_feats = torch.randn(3, 5, 10)
    att_masks = torch.zeros(3, 5)
    for i, n in enumerate(counts):
        att_masks[i, :n] = 1
    print(model(att_feats.to(device), att_masks.to(device)).shape)
