# source: https://github.com/namisan/mt-dnn/pull/40
# error: (no exception reported) PyTorch docs: move a model to the GPU before constructing optimizers for it
# bug: MTDNNModel builds its optimizer (and restores its state) from the CPU network's parameters;
#      train.py only calls model.cuda() afterwards, so the optimizer was constructed for CPU parameters.
import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from pytorch_pretrained_bert import BertAdam as Adam

from mt_dnn.matcher import SANBertNetwork


class MTDNNModel(object):
    def __init__(self, opt, state_dict=None, num_train_step=-1):
        self.config = opt
        self.network = SANBertNetwork(opt)
        if state_dict:
            self.network.load_state_dict(state_dict['state'])
        self.mnetwork = nn.DataParallel(self.network) if opt['multi_gpu_on'] else self.network

        no_decay = ['bias', 'gamma', 'beta', 'LayerNorm.bias', 'LayerNorm.weight']
        optimizer_parameters = [
            {'params': [p for n, p in self.network.named_parameters() if not any(nd in n for nd in no_decay)], 'weight_decay': 0.01},
            {'params': [p for n, p in self.network.named_parameters() if any(nd in n for nd in no_decay)], 'weight_decay': 0.0}
        ]
        if opt['optimizer'] == 'adadelta':
            self.optimizer = optim.Adadelta(optimizer_parameters, opt['learning_rate'], rho=0.95)  # expect: DL407
        else:
            self.optimizer = Adam(optimizer_parameters, lr=opt['learning_rate'],  # expect: DL407
                                  warmup=opt['warmup'], t_total=num_train_step)
        if state_dict and 'optimizer' in state_dict:
            self.optimizer.load_state_dict(state_dict['optimizer'])

    def update(self, batch_meta, batch_data):
        self.network.train()
        inputs = [t.cuda(non_blocking=True) if self.config['cuda'] else t for t in batch_data[:batch_meta['input_len']]]
        target = batch_data[batch_meta['label']]
        if self.config['cuda']:
            target = target.cuda(non_blocking=True)
        logits = self.mnetwork(*inputs)
        loss = nn.functional.cross_entropy(logits, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def cuda(self):
        self.network.cuda()


def main(args, train_batches):
    opt = vars(args)
    model = MTDNNModel(opt, num_train_step=len(train_batches) * args.epochs)
    if args.cuda:
        model.cuda()
    for epoch in range(args.epochs):
        for batch_meta, batch_data in train_batches:
            model.update(batch_meta, batch_data)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--cuda', type=bool, default=torch.cuda.is_available())
    parser.add_argument('--multi_gpu_on', action='store_true')
    parser.add_argument('--optimizer', default='adamax')
    parser.add_argument('--learning_rate', type=float, default=5e-5)
    parser.add_argument('--warmup', type=float, default=0.1)
    parser.add_argument('--epochs', type=int, default=5)
    main(parser.parse_args(), train_batches=[])
