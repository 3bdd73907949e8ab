# source: https://github.com/soloist97/densecap-pytorch/pull/7
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the caption head's greedy decoder tracks the unfinished sequences in an index tensor made
#      with torch.arange(batch_size) (on the CPU) while everything else lives on the features'
#      device; after the first step keep = keep[non_stop] indexes that CPU tensor with a CUDA
#      boolean mask computed from the predictions. The PR (merged; its title says keep is sent to the
#      device, its diff is not stored, the snapshot predates it) moves keep to the device; the
#      arange line is marked (DL202: a factory without device= meeting the model's tensors).
import torch
from torch import nn


class BoxDescriber(nn.Module):
    def __init__(self, feat_size, hidden_size, max_len, emb_size, vocab_size, pad_idx=0, start_idx=1, end_idx=2):
        super().__init__()
        self.hidden_size = hidden_size
        self.max_len = max_len
        self.special_idx = {"<pad>": pad_idx, "<bos>": start_idx, "<eos>": end_idx}
        self.embedding_layer = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTM(input_size=emb_size, hidden_size=hidden_size, num_layers=1, batch_first=True)
        self.feature_project_layer = nn.Sequential(nn.Linear(feat_size, emb_size), nn.ReLU())
        self.fc_layer = nn.Linear(hidden_size, vocab_size)

    def init_hidden(self, batch_size, device):
        h0 = torch.zeros(1, batch_size, self.hidden_size).to(device)
        c0 = torch.zeros(1, batch_size, self.hidden_size).to(device)
        return h0, c0

    def forward_test(self, feat):
        batch_size = feat.shape[0]
        device = feat.device
        feat_emb = self.feature_project_layer(feat)
        predicts = torch.ones(batch_size, self.max_len + 1, dtype=torch.long).to(device) * self.special_idx["<pad>"]
        predicts[:, 0] = torch.ones(batch_size, dtype=torch.long).to(device) * self.special_idx["<bos>"]
        keep = torch.arange(batch_size,)  # expect: DL202

        h, c = self.init_hidden(batch_size, device)
        _, (h, c) = self.rnn(feat_emb.unsqueeze(1), (h, c))
        for i in range(self.max_len):
            word_emb = self.embedding_layer(predicts[keep, i])
            _, (h, c) = self.rnn(word_emb.unsqueeze(1), (h, c))
            pred = self.fc_layer(h[-1])
            predicts[keep, i + 1] = pred.log_softmax(dim=-1).argmax(dim=-1)
            non_stop = predicts[keep, i + 1] != self.special_idx["<eos>"]
            keep = keep[non_stop]
            if keep.nelement() == 0:
                break
            h = h[:, non_stop, :]
            c = c[:, non_stop, :]
        return predicts

    def forward(self, feat):
        return self.forward_test(feat)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    describer = BoxDescriber(feat_size=12, hidden_size=8, max_len=6, emb_size=8, vocab_size=10).to(device).eval()
    with torch.no_grad():
        print(describer(torch.randn(5, 12, device=device)))
