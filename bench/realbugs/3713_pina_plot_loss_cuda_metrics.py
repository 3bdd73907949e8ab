# source: https://github.com/PINA-org/PINA/issues/219
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host
#        memory first.  (pina/plotter.py line 259 in plot_loss, plt.plot(epochs, loss, **kwargs))
# bug: the reporter trains a PINN with Trainer(solver=pinn, accelerator='gpu', callbacks=[MetricTracker()]); the
#      MetricTracker callback deep-copies trainer.logged_metrics after every epoch and its metrics property stacks
#      them with torch.stack, so on a GPU run each tracked loss is a CUDA tensor; Plotter.plot_loss hands it straight
#      to matplotlib, which converts it with NumPy. The fix (PR #220 "fix : gpu loss plotting") plots loss.cpu();
#      the plt.plot line is marked (DL204).
#      Reductions: plot_loss and MetricTracker as stored (pina/plotter.py at bdffcac with the PR's one-line change
#      reverted, pina/callbacks/processing_callbacks.py at 05050f4); the Lightning/PINA Trainer and the PINN solver
#      become a stand-in trainer that runs a small network on the chosen accelerator, logs mean_loss as a device
#      tensor and calls the callbacks' on_train_epoch_end, as Lightning does. pytorch_lightning and matplotlib are
#      imported as upstream (absent here), so the file does not run on this machine.
import copy

import matplotlib.pyplot as plt
import torch
from pytorch_lightning.callbacks import Callback


# --- pina/callbacks/processing_callbacks.py ---
class MetricTracker(Callback):
    """
    PINA implementation of a Lightining Callback to track relevant
    metrics during training.
    """
    def __init__(self):
        self._collection = []

    def on_train_epoch_end(self, trainer, __):
        self._collection.append(copy.deepcopy(trainer.logged_metrics)) # track them

    @property
    def metrics(self):
        common_keys = set.intersection(*map(set, self._collection))
        v = {k: torch.stack([dic[k] for dic in self._collection]) for k in common_keys}
        return v


# --- pina/plotter.py ---
class Plotter:
    def plot_loss(self,
                  trainer,
                  metrics=None,
                  logy=False,
                  logx=False,
                  filename=None,
                  **kwargs):
        # check that MetricTracker has been used
        list_ = [
            idx for idx, s in enumerate(trainer.callbacks)
            if isinstance(s, MetricTracker)
        ]
        if not bool(list_):
            raise FileNotFoundError(
                'MetricTracker should be used as a callback during training to'
                ' use this method.')

        # extract trainer metrics
        trainer_metrics = trainer.callbacks[list_[0]].metrics
        if metrics is None:
            metrics = ['mean_loss']
        elif not isinstance(metrics, list):
            raise ValueError('metrics must be class list.')

        # loop over metrics to plot
        for metric in metrics:
            if metric not in trainer_metrics:
                raise ValueError(
                    f'{metric} not a valid metric. Available metrics are {list(trainer_metrics.keys())}.'
                )
            loss = trainer_metrics[metric]
            epochs = range(len(loss))
            plt.plot(epochs, loss, **kwargs)  # expect: DL204

        # plotting
        plt.xlabel('epoch')
        plt.ylabel('loss')
        plt.legend()

        # log axis
        if logy:
            plt.yscale('log')
        if logx:
            plt.xscale('log')

        # saving in file
        if filename:
            plt.savefig(filename)
            plt.close()


# --- stand-in for pina.Trainer (a Lightning Trainer) training a PINN ---
class Trainer:
    def __init__(self, solver, accelerator='cpu', max_epochs=1, callbacks=()):
        self.device = torch.device('cuda' if accelerator == 'gpu' else 'cpu')
        self.solver = solver.to(self.device)
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks)
        self.logged_metrics = {}

    def train(self):
        optimizer = torch.optim.Adam(self.solver.parameters(), lr=1e-3)
        for epoch in range(self.max_epochs):
            x = torch.rand(64, 2, device=self.device)
            residual = self.solver(x)
            loss = residual.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            self.logged_metrics = {'mean_loss': loss.detach()}
            for callback in self.callbacks:
                callback.on_train_epoch_end(self, self.solver)


if __name__ == '__main__':
    pinn = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    trainer = Trainer(solver=pinn, accelerator='gpu', max_epochs=50, callbacks=[MetricTracker()])
    trainer.train()
    plotter = Plotter()
    plotter.plot_loss(trainer=trainer, label='mean_loss', logy=True)
