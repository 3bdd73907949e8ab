# source: https://github.com/ArdalanM/nlp-benchmarks/pull/9
# fixed twin: commit 3276a09 (merged) hands sklearn the predictions as ty_prob.max(1)[1].cpu().numpy().
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn import metrics
from torch.utils.data import DataLoader, Dataset


def get_args():
    parser = argparse.ArgumentParser("HAN")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--gpuid", type=int, default=0)
    parser.add_argument("--nthreads", type=int, default=0)
    return parser.parse_args()


class HAN(nn.Module):
    def __init__(self, ntoken, num_class, emb_size=200, hid_size=50):
        super(HAN, self).__init__()
        self.emb_size = emb_size
        self.embed = nn.Embedding(ntoken, emb_size, padding_idx=0)
        self.word = nn.Linear(emb_size, hid_size * 2)
        self.sent = nn.Linear(hid_size * 2, hid_size * 2)
        self.lin_out = nn.Linear(hid_size * 2, num_class)

    def _reorder_sent(self, sents, sent_order):
        sents = F.pad(sents, (0, 0, 1, 0))
        revs = sents[sent_order.view(-1)]
        revs = revs.view(sent_order.size(0), sent_order.size(1), sents.size(1))
        return revs

    def forward(self, batch_reviews, sent_order, ls, lr):
        emb_w = F.dropout(self.embed(batch_reviews), training=self.training)
        sent_embs = torch.tanh(self.word(emb_w)).mean(1)
        rev_embs = self._reorder_sent(sent_embs, sent_order)
        doc_embs = torch.tanh(self.sent(rev_embs)).mean(1)
        return self.lin_out(doc_embs)


def get_metrics(cm, list_metrics):
    dic_metrics = {}
    total = np.sum(cm)
    if 'accuracy' in list_metrics:
        dic_metrics['accuracy'] = np.sum(np.diag(cm)) / total
    return dic_metrics


def train(epoch, net, dataset, device, msg="val/test", optimize=False, optimizer=None, scheduler=None, criterion=None):
    net.train() if optimize else net.eval()
    epoch_loss = 0
    nclasses = len(list(net.parameters())[-1])
    cm = np.zeros((nclasses, nclasses), dtype=int)

    for iteration, (batch_t, r_t, sent_order, ls, lr, review) in enumerate(dataset):
        data = (batch_t, r_t, sent_order)
        data = [x.to(device) for x in data]
        if optimize:
            optimizer.zero_grad()
        out = net(data[0], data[2], ls, lr)
        ty_prob = F.softmax(out, 1)

        y_true = r_t.detach().cpu().numpy()
        y_pred = ty_prob.max(1)[1].cpu().numpy()

        cm += metrics.confusion_matrix(y_true, y_pred, labels=range(nclasses))
        dic_metrics = get_metrics(cm, list_metrics)

        loss = criterion(out, data[1])
        epoch_loss += loss.item()
        dic_metrics['logloss'] = epoch_loss / (iteration + 1)
        if optimize:
            loss.backward()
            optimizer.step()
        print("Epoch {} - {}".format(epoch, msg), dic_metrics)
    if scheduler:
        scheduler.step()


def tuple_batch(l):
    review, rating = zip(*l)
    r_t = torch.Tensor(rating).long()
    sorted_r = sorted([(len(r), r_n, r) for r_n, r in enumerate(review)], reverse=True)
    lr, r_n, ordered_list_rev = zip(*sorted_r)
    lr = list(lr)
    max_sents = lr[0]
    r_t = r_t[[r_n]]
    review = [review[x] for x in r_n]
    stat = sorted([(len(s), r_n, s_n, s) for r_n, r in enumerate(ordered_list_rev) for s_n, s in enumerate(r)], reverse=True)
    max_words = stat[0][0]
    ls = []
    batch_t = torch.zeros(len(stat), max_words).long()
    sent_order = torch.zeros(len(ordered_list_rev), max_sents).long().fill_(0)
    for i, s in enumerate(stat):
        sent_order[s[1], s[2]] = i + 1
        batch_t[i, 0:len(s[3])] = torch.LongTensor(s[3])
        ls.append(s[0])
    return batch_t, r_t, sent_order, ls, lr, review


class TupleLoader(Dataset):
    def __init__(self, sequences, labels):
        assert len(sequences) == len(labels)
        self.sequences = sequences
        self.labels = labels
        self.len = len(self.labels)

    def __len__(self):
        return self.len

    def __getitem__(self, i):
        return (self.sequences[i], self.labels[i])


list_metrics = ['accuracy']

if __name__ == "__main__":
    opt = get_args()
    g = torch.Generator().manual_seed(0)
    n_tokens, n_classes = 100, 2
    tr_seq = [[torch.randint(1, n_tokens, (int(torch.randint(3, 9, (1,), generator=g)),), generator=g).tolist()
               for _ in range(int(torch.randint(1, 4, (1,), generator=g)))] for _ in range(32)]
    tr_lab = [int(torch.randint(0, n_classes, (1,), generator=g)) for _ in range(32)]
    tr_loader = DataLoader(TupleLoader(tr_seq, tr_lab), batch_size=opt.batch_size, shuffle=True,
                           num_workers=opt.nthreads, collate_fn=tuple_batch, pin_memory=True)
    device = torch.device("cuda:{}".format(opt.gpuid) if opt.gpuid >= 0 else "cpu")
    net = HAN(n_tokens, n_classes, emb_size=200, hid_size=50)
    criterion = torch.nn.CrossEntropyLoss()
    net.to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=opt.lr)
    for epoch in range(1, opt.epochs + 1):
        train(epoch, net, tr_loader, device, msg="training", optimize=True, optimizer=optimizer, criterion=criterion)
