# source: https://github.com/akshat0123/GPT-1/pull/4
# error: (performance) every batch is copied GPU -> CPU -> GPU; fixed in commit 7ffcab0 "Fixed casting of Tensor to CUDA Tensor during training"
# bug: the batch is moved to the decoder's device and one-hot encoded there, then cast with
#      .type(torch.FloatTensor), which copies it back to the host, and moved to the device again.
import torch
import yaml
from torch.nn import CrossEntropyLoss
from torch.optim import SGD
from torch.optim.lr_scheduler import CyclicLR
from torch.utils.data import DataLoader

from model.dataset import BooksCorpus
from model.model import TransformerDecoder


def train_epoch(decoder, loader, criterion, optimizer, scheduler):
    total_loss = 0.0
    total_err = 0.0
    count = 0
    for x, y in loader:
        optimizer.zero_grad()

        x = x.to(device=decoder.device)
        x = torch.nn.functional.one_hot(x, 1000)
        x = x.type(torch.FloatTensor).to(device=decoder.device)  # expect: DL403
        y = y.to(device=decoder.device)

        pred = decoder(x)
        loss = criterion(pred, y)
        loss.backward()
        optimizer.step()

        yhat = torch.argmax(pred, dim=1)
        total_err += torch.sum(yhat != y).item()
        total_loss += loss.item()
        count += x.shape[0]
    scheduler.step()
    return total_loss / count, total_err / count


def main():
    with open('confs/params.yml') as f:
        confs = yaml.safe_load(f)
    dataset = BooksCorpus(**confs['dataset'])
    tloader = DataLoader(dataset, **confs['loader'])
    model = TransformerDecoder(**confs['model'])
    optimizer = SGD(model.parameters(), **confs['optimizer'])
    scheduler = CyclicLR(optimizer=optimizer, **confs['scheduler'])
    criterion = CrossEntropyLoss()
    for epoch in range(confs['epochs']):
        tloss, terr = train_epoch(model, tloader, criterion, optimizer, scheduler)
        print(epoch, tloss, terr)


if __name__ == '__main__':
    main()
