# source: https://github.com/meta-pytorch/torchtune/pull/522
# error: none raised: profiling showed a 40-50 ms cudaStreamSynchronize at every step to copy the loss to the CPU
# bug: the fine-tuning recipe calls loss.item() at every step to feed the progress bar, although
#      the metric logger only needs it every log_every_n_steps; the fix moves the .item() into the
#      logging block.
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from torchtune import config, utils


class LoRAFinetuneRecipeSingleDevice:
    def __init__(self, cfg):
        self._device = utils.get_device(device=cfg.device)
        self._log_every_n_steps = cfg.log_every_n_steps
        self.total_training_steps = 0
        self.epochs_run = 0
        self.total_epochs = cfg.epochs

    def setup(self, cfg, model, tokenizer, dataset):
        self._model = model.to(self._device)
        self._loss_fn = torch.nn.CrossEntropyLoss()
        self._optimizer = torch.optim.AdamW(self._model.parameters(), lr=cfg.lr)
        self._dataloader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True)
        self._metric_logger = config.instantiate(cfg.metric_logger)

    def train(self):
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            pbar = tqdm(total=len(self._dataloader))
            for idx, batch in enumerate(self._dataloader):
                input_ids, labels = batch
                input_ids = input_ids.to(self._device)
                labels = labels.to(self._device)
                logits = self._model(input_ids)
                logits = logits.transpose(1, 2)
                loss = self._loss_fn(logits, labels)
                loss_to_log = loss.item()  # expect: DL408
                pbar.update(1)
                pbar.set_description(f"{curr_epoch + 1}|{idx + 1}|Loss: {loss_to_log}")
                if self.total_training_steps % self._log_every_n_steps == 0:
                    self._metric_logger.log_dict({"loss": loss_to_log, "lr": self._optimizer.param_groups[0]["lr"]}, step=self.total_training_steps)
                loss.backward()
                self._optimizer.step()
                self._optimizer.zero_grad(set_to_none=True)
                self.total_training_steps += 1
            self.epochs_run += 1
