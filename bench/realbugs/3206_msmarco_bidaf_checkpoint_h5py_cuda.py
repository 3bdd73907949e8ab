# source: https://github.com/microsoft/MSMARCO-Question-Answering/pull/6
# error: (issue #3, quoted by the PR) TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the
#        tensor to host memory first.
# bug: the BiDAF baseline's train.py moves the model with model.cuda() and switches the batch generator to
#      torch.cuda.LongTensor when --cuda (default: CUDA available); after each epoch checkpointing.checkpoint ->
#      save_model writes every state_dict() tensor into the h5py checkpoint through save_params
#      (destination.create_dataset(path, data=params) / destination[path][...] = params), and h5py converts the CUDA
#      parameters with NumPy, which refuses device tensors. PR #6 (commit a3daf5a, merged) iterates
#      model.cpu().state_dict() instead; that line is marked (DL204: NumPy conversion of GPU tensors, here inside
#      h5py). Reductions: the BiDAF network is an embedding and two linear span heads; the SQuAD-style json data and
#      tokenizer are random token batches from a small EpochGen; no resume, no pre-trained embeddings; config.yaml is
#      a dict. Needs h5py and NumPy (upstream imports; absent on this machine).
import argparse
import itertools
import os.path

import h5py
import numpy as np
import torch
import torch.nn as nn
from torch import optim
from torch.autograd import Variable


# --- checkpointing.py ---
def save_vocab(checkpoint, path, id_to_symb):
    vocab = np.array([id_to_symb[ind] for ind in range(len(id_to_symb))])
    vocab = vocab.astype(h5py.special_dtype(vlen=str))
    if path in checkpoint:
        del checkpoint[path]
    checkpoint.create_dataset(path, data=vocab, compression='gzip')
    return


def save_params(destination, path, params):
    if path not in destination:
        destination.create_dataset(path, data=params, compression='gzip')
    else:
        destination[path][...] = params
    return


def save_model(model, destination):
    if 'model' not in destination:
        destination.create_group('model')

    for name, value in model.state_dict().items():  # expect: DL204
        save_params(destination, 'model/'+name, value)
    return


def save_epoch(epoch, destination):
    if 'training' not in destination:
        destination.create_dataset('training/epoch', data=epoch)
    else:
        destination['training/epoch'][()] = epoch
    return


def checkpoint(model, epoch, optimizer, dest, exp_folder):
    save_model(model, dest)
    save_epoch(epoch, dest)
    torch.save(optimizer.state_dict(), os.path.join(exp_folder, 'checkpoint.opt'))
    return


# --- dataset.py ---
class EpochGen(object):
    def __init__(self, n_samples, vocab_size, batch_size=32, shuffle=True, tensor_type=torch.LongTensor):
        self.n_samples = n_samples
        self.vocab_size = vocab_size
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.tensor_type = tensor_type

    def process_batch_for_length(self, sequences):
        max_length = max(len(seq) for seq in sequences)
        lengths = Variable(self.tensor_type([len(seq) for seq in sequences]))
        padded = []
        for seq in sequences:
            _padded_seq = self.tensor_type(max_length).zero_()
            _padded_seq[:len(seq)] = self.tensor_type(seq)
            padded.append(_padded_seq)
        return Variable(torch.stack(padded)), lengths

    def __iter__(self):
        g = torch.Generator().manual_seed(0)
        for _ in range(0, self.n_samples, self.batch_size):
            passages = [torch.randint(1, self.vocab_size, (int(n),), generator=g).tolist()
                        for n in torch.randint(8, 20, (self.batch_size,), generator=g)]
            queries = [torch.randint(1, self.vocab_size, (5,), generator=g).tolist() for _ in range(self.batch_size)]
            p, p_len = self.process_batch_for_length(passages)
            q, q_len = self.process_batch_for_length(queries)
            answers = Variable(self.tensor_type([[1, 3]] * self.batch_size))
            yield None, (p, p_len), (q, q_len), answers, None


# --- bidaf.py ---
class BidafModel(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super(BidafModel, self).__init__()
        self.embedder = nn.Embedding(vocab_size, dim)
        self.span_start = nn.Linear(2 * dim, 1)
        self.span_end = nn.Linear(2 * dim, 1)

    @classmethod
    def from_config(cls, config, id_to_token, id_to_char):
        return cls(len(id_to_token), config['dim'])

    def forward(self, passage, p_lengths, question, q_lengths):
        p = self.embedder(passage)
        q = self.embedder(question).mean(1, keepdim=True).expand_as(p)
        h = torch.cat([p, q], -1)
        return (torch.log_softmax(self.span_start(h).squeeze(-1), 1),
                torch.log_softmax(self.span_end(h).squeeze(-1), 1))

    def get_loss(self, start_log_probs, end_log_probs, starts, ends):
        return nn.functional.nll_loss(start_log_probs, starts) + nn.functional.nll_loss(end_log_probs, ends)


# --- train.py ---
def init_state(config, args):
    id_to_token = {i: 'tok%d' % i for i in range(config['vocab'])}
    id_to_char = {i: chr(97 + i) for i in range(26)}
    data = EpochGen(64, config['vocab'], batch_size=config.get('training', {}).get('batch_size', 32))
    model = BidafModel.from_config(config['bidaf'], id_to_token, id_to_char)
    if torch.cuda.is_available() and args.cuda:
        model.cuda()
    model.train()
    optimizer = optim.Adam(model.parameters())
    return model, id_to_token, id_to_char, optimizer, data


def train(epoch, model, optimizer, data, args):
    for batch_id, (qids, passages, queries, answers, _) in enumerate(data):
        start_log_probs, end_log_probs = model(
            passages[0], passages[1],
            queries[0], queries[1])
        loss = model.get_loss(
            start_log_probs, end_log_probs,
            answers[:, 0], answers[:, 1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return


def main():
    argparser = argparse.ArgumentParser()
    argparser.add_argument("exp_folder", nargs="?", default="/tmp/msmarco_exp", help="Experiment folder")
    argparser.add_argument("--cuda", type=bool, default=torch.cuda.is_available(), help="Use GPU if possible")
    args = argparser.parse_args()
    config = {'vocab': 50, 'bidaf': {'dim': 16}, 'training': {'epochs': 3, 'batch_size': 16}}
    os.makedirs(args.exp_folder, exist_ok=True)

    epoch = 0
    model, id_to_token, id_to_char, optimizer, data = init_state(config, args)
    checkpoint_file = h5py.File(os.path.join(args.exp_folder, 'checkpoint'), 'w')
    save_vocab(checkpoint_file, 'vocab', id_to_token)
    save_vocab(checkpoint_file, 'c_vocab', id_to_char)

    if torch.cuda.is_available() and args.cuda:
        data.tensor_type = torch.cuda.LongTensor

    train_for_epochs = config.get('training', {}).get('epochs')
    if train_for_epochs is not None:
        epochs = range(epoch, train_for_epochs)
    else:
        epochs = itertools.count(epoch)

    for epoch in epochs:
        print('Starting epoch', epoch)
        train(epoch, model, optimizer, data, args)
        checkpoint(model, epoch, optimizer, checkpoint_file, args.exp_folder)
    return


if __name__ == '__main__':
    main()
