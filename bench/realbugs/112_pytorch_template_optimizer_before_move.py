# source: https://github.com/victoresque/pytorch-template/issues/82
# error: (no exception) PyTorch docs: move the model to the GPU before constructing optimizers for it; user saw GPU utilisation drop
# bug: train.py builds the optimizer from model.parameters() while the model is still on the CPU; the
#      model is only moved to the GPU (and wrapped in DataParallel) later, inside BaseTrainer.__init__. Marked DL409, not DL407: the move keeps the Parameter objects and the optimizer makes its state at its first step, on the GPU, so nothing crashes (as reported).
import argparse

import torch

import data_loader.data_loaders as module_data
import model.loss as module_loss
import model.model as module_arch
from parse_config import ConfigParser


class BaseTrainer:
    def __init__(self, model, criterion, optimizer, config):
        self.config = config
        self.device, device_ids = self._prepare_device(config['n_gpu'])
        self.model = model.to(self.device)
        if len(device_ids) > 1:
            self.model = torch.nn.DataParallel(model, device_ids=device_ids)
        self.criterion = criterion
        self.optimizer = optimizer

    def _prepare_device(self, n_gpu_use):
        n_gpu = torch.cuda.device_count()
        if n_gpu_use > n_gpu:
            n_gpu_use = n_gpu
        device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')
        return device, list(range(n_gpu_use))


class Trainer(BaseTrainer):
    def __init__(self, model, criterion, optimizer, config, data_loader):
        super().__init__(model, criterion, optimizer, config)
        self.data_loader = data_loader

    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            for data, target in self.data_loader:
                data, target = data.to(self.device), target.to(self.device)
                self.optimizer.zero_grad()
                output = self.model(data)
                loss = self.criterion(output, target)
                loss.backward()
                self.optimizer.step()


def main(config):
    data_loader = config.init_obj('data_loader', module_data)
    model = config.init_obj('arch', module_arch)
    criterion = getattr(module_loss, config['loss'])

    trainable_params = filter(lambda p: p.requires_grad, model.parameters())
    optimizer = config.init_obj('optimizer', torch.optim, trainable_params)  # expect: DL409

    trainer = Trainer(model, criterion, optimizer, config=config, data_loader=data_loader)
    trainer.train(config['trainer']['epochs'])


if __name__ == '__main__':
    args = argparse.ArgumentParser()
    args.add_argument('-c', '--config', default=None, type=str)
    main(ConfigParser.from_args(args))
