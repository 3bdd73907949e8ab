# source: https://github.com/r9y9/tacotron_pytorch/issues/18
# error: RuntimeError during optimizer.step() when resuming from a checkpoint on the GPU (Adam state on the CPU, grads on cuda)
# bug: the script builds Adam from the CPU model and restores its state from the checkpoint; the model is
#      moved to the GPU only later inside train(), so the restored optimizer state stays on the CPU
#      while the gradients are CUDA tensors.
import sys

import torch
import torch.nn as nn
from torch import optim
from torch.utils import data as data_utils

from hparams import hparams
from tacotron_pytorch import Tacotron
from text import symbols
from datasets import PyTorchDataset, collate_fn, X, Mel, Y

use_cuda = torch.cuda.is_available()
global_step = 0
global_epoch = 0


def train(model, data_loader, optimizer, init_lr=0.002, nepochs=None, clip_thresh=1.0):
    model.train()
    if use_cuda:
        model = model.cuda()
    criterion = nn.L1Loss()

    global global_step, global_epoch
    while global_epoch < nepochs:
        for step, (x, input_lengths, mel, y) in enumerate(data_loader):
            optimizer.zero_grad()
            sorted_lengths, indices = torch.sort(input_lengths.view(-1), dim=0, descending=True)
            sorted_lengths = sorted_lengths.long().numpy()
            x, mel, y = x[indices], mel[indices], y[indices]
            if use_cuda:
                x, mel, y = x.cuda(), mel.cuda(), y.cuda()
            mel_outputs, linear_outputs, attn = model(x, mel, input_lengths=sorted_lengths)
            loss = criterion(mel_outputs, mel) + criterion(linear_outputs, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_thresh)
            optimizer.step()
            global_step += 1
        global_epoch += 1


if __name__ == "__main__":
    checkpoint_path = sys.argv[1] if len(sys.argv) > 1 else None
    dataset = PyTorchDataset(X, Mel, Y)
    data_loader = data_utils.DataLoader(dataset, batch_size=hparams.batch_size, shuffle=True,
                                        collate_fn=collate_fn)

    model = Tacotron(n_vocab=len(symbols), embedding_dim=256, mel_dim=hparams.num_mels,
                     linear_dim=hparams.num_freq, r=hparams.outputs_per_step)
    optimizer = optim.Adam(model.parameters(), lr=hparams.initial_learning_rate,  # expect: DL407
                           betas=(hparams.adam_beta1, hparams.adam_beta2))

    if checkpoint_path:
        checkpoint = torch.load(checkpoint_path)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        global_step = checkpoint["global_step"]
        global_epoch = checkpoint["global_epoch"]

    train(model, data_loader, optimizer, init_lr=hparams.initial_learning_rate,
          nepochs=hparams.nepochs, clip_thresh=hparams.clip_thresh)
