# source: https://github.com/hcnoh/knowledge-tracing-collection-pytorch/issues/1
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'
#        (python train.py --model_name dkt --dataset_name ASSIST2009, at train.py line 92:
#        train_dataset, test_dataset = random_split(dataset, [train_size, test_size]) -> randperm(..., generator=generator))
# bug: models/utils.py, imported by every model, runs torch.set_default_tensor_type(torch.cuda.FloatTensor) at import
#      whenever CUDA is available (its collate_fn builds the batches with the CUDA FloatTensor, which is how the
#      data reaches the GPU). From PyTorch 1.9 on, random_split's randperm then makes its permutation on the GPU
#      while drawing from the default CPU generator, and fails (the shuffling DataLoaders would fail the same way).
#      (The version bounds are the reporter's own note in the issue - PyTorch 1.7 and 1.8 work; the maintainer never
#      replied.) The code is unchanged, so there is no fix and
#      the marker is on the random_split the traceback points to (DL208). Reductions: the ASSIST2009 loader is
#      random question/response sequences, config.json is a dict, sklearn's AUC and checkpointing are left out,
#      numpy arrays are lists; utils.py and train.py are one file (the default type is set at import, before main).
import random

import torch
from torch.nn import Module, Embedding, LSTM, Linear, Dropout
from torch.nn.functional import one_hot, binary_cross_entropy
from torch.nn.utils.rnn import pad_sequence
from torch.optim import Adam
from torch.utils.data import DataLoader, Dataset, random_split

if torch.cuda.is_available():
    from torch.cuda import FloatTensor
    torch.set_default_tensor_type(torch.cuda.FloatTensor)
else:
    from torch import FloatTensor


def collate_fn(batch, pad_val=-1):
    q_seqs, r_seqs, qshft_seqs, rshft_seqs = [], [], [], []
    for q_seq, r_seq in batch:
        q_seqs.append(FloatTensor(q_seq[:-1]))
        r_seqs.append(FloatTensor(r_seq[:-1]))
        qshft_seqs.append(FloatTensor(q_seq[1:]))
        rshft_seqs.append(FloatTensor(r_seq[1:]))
    q_seqs = pad_sequence(q_seqs, batch_first=True, padding_value=pad_val)
    r_seqs = pad_sequence(r_seqs, batch_first=True, padding_value=pad_val)
    qshft_seqs = pad_sequence(qshft_seqs, batch_first=True, padding_value=pad_val)
    rshft_seqs = pad_sequence(rshft_seqs, batch_first=True, padding_value=pad_val)
    mask_seqs = (q_seqs != pad_val) * (qshft_seqs != pad_val)
    return q_seqs * mask_seqs, r_seqs * mask_seqs, qshft_seqs * mask_seqs, rshft_seqs * mask_seqs, mask_seqs


class ASSIST2009(Dataset):
    def __init__(self, seq_len, num_users=40, num_q=20):
        rng = random.Random(0)
        self.num_q = num_q
        self.q_seqs = [[rng.randrange(num_q) for _ in range(seq_len + 1)] for _ in range(num_users)]
        self.r_seqs = [[rng.randrange(2) for _ in range(seq_len + 1)] for _ in range(num_users)]

    def __getitem__(self, index):
        return self.q_seqs[index], self.r_seqs[index]

    def __len__(self):
        return len(self.q_seqs)


class DKT(Module):
    def __init__(self, num_q, emb_size, hidden_size):
        super().__init__()
        self.num_q = num_q
        self.interaction_emb = Embedding(self.num_q * 2, emb_size)
        self.lstm_layer = LSTM(emb_size, hidden_size, batch_first=True)
        self.out_layer = Linear(hidden_size, self.num_q)
        self.dropout_layer = Dropout()

    def forward(self, q, r):
        x = q + self.num_q * r
        h, _ = self.lstm_layer(self.interaction_emb(x))
        return torch.sigmoid(self.dropout_layer(self.out_layer(h)))

    def train_model(self, train_loader, test_loader, num_epochs, opt):
        loss_means = []
        for i in range(1, num_epochs + 1):
            loss_mean = []
            for data in train_loader:
                q, r, qshft, rshft, m = data
                self.train()
                y = self(q.long(), r.long())
                y = (y * one_hot(qshft.long(), self.num_q)).sum(-1)
                y = torch.masked_select(y, m)
                t = torch.masked_select(rshft, m)
                opt.zero_grad()
                loss = binary_cross_entropy(y, t)
                loss.backward()
                opt.step()
                loss_mean.append(loss.item())
            loss_means.append(sum(loss_mean) / len(loss_mean))
            print("Epoch: {},   Loss Mean: {}".format(i, loss_means[-1]))
        return loss_means


def main(model_name, dataset_name):
    train_config = {"batch_size": 8, "num_epochs": 2, "train_ratio": 0.9, "learning_rate": 0.001, "seq_len": 20}
    dataset = ASSIST2009(train_config["seq_len"])
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
    model = DKT(dataset.num_q, emb_size=16, hidden_size=16).to(device)
    train_size = int(len(dataset) * train_config["train_ratio"])
    test_size = len(dataset) - train_size
    train_dataset, test_dataset = random_split(dataset, [train_size, test_size])  # expect: DL208
    train_loader = DataLoader(train_dataset, batch_size=train_config["batch_size"], shuffle=True, collate_fn=collate_fn)
    test_loader = DataLoader(test_dataset, batch_size=test_size, shuffle=True, collate_fn=collate_fn)
    opt = Adam(model.parameters(), train_config["learning_rate"])
    return model.train_model(train_loader, test_loader, train_config["num_epochs"], opt)


if __name__ == "__main__":
    main("dkt", "ASSIST2009")
