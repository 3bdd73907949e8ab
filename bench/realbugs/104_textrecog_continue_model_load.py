# source: https://github.com/clovaai/deep-text-recognition-benchmark/pull/263
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: when resuming (--continue_model), train.py loads weights saved from a GPU run without map_location,
#      so resuming on a CPU machine fails even though `device` falls back to cpu.
import argparse

import torch
import torch.nn.init as init
import torch.optim as optim
import torch.utils.data

from dataset import Batch_Balanced_Dataset
from model import Model
from utils import CTCLabelConverter

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def train(opt):
    train_dataset = Batch_Balanced_Dataset(opt)
    converter = CTCLabelConverter(opt.character)
    opt.num_class = len(converter.character)

    model = Model(opt)
    for name, param in model.named_parameters():
        if 'weight' in name and param.dim() > 1:
            init.kaiming_normal_(param)

    model = torch.nn.DataParallel(model).to(device)
    model.train()
    if opt.continue_model != '':
        print(f'loading pretrained model from {opt.continue_model}')
        model.load_state_dict(torch.load(opt.continue_model))  # expect: DL301

    criterion = torch.nn.CTCLoss(zero_infinity=True).to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=opt.lr)

    for i in range(opt.num_iter):
        image_tensors, labels = train_dataset.get_batch()
        image = image_tensors.to(device)
        text, length = converter.encode(labels, batch_max_length=opt.batch_max_length)
        batch_size = image.size(0)

        preds = model(image, text).log_softmax(2)
        preds_size = torch.IntTensor([preds.size(1)] * batch_size).to(device)
        preds = preds.permute(1, 0, 2)
        cost = criterion(preds, text, preds_size, length)

        model.zero_grad()
        cost.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), opt.grad_clip)
        optimizer.step()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--continue_model', default='')
    parser.add_argument('--num_iter', type=int, default=300000)
    parser.add_argument('--lr', type=float, default=1)
    parser.add_argument('--grad_clip', type=float, default=5)
    parser.add_argument('--batch_max_length', type=int, default=25)
    parser.add_argument('--character', type=str, default='0123456789abcdefghijklmnopqrstuvwxyz')
    opt = parser.parse_args()
    train(opt)
