# source: https://github.com/huggingface/accelerate/issues/2251
# error: RuntimeError: Expected all tensors to be on the same device (the sampled timesteps and weights stay on the CPU)
# bug: the schedule sampler hands back timesteps and importance weights built on the CPU; the
#      training step calls .to(batch.device) on both as bare statements, so the moved copies are lost.
import torch
from accelerate import Accelerator

from improved_diffusion.resample import LossAwareSampler, create_named_schedule_sampler


class TrainLoop:
    def __init__(self, model, diffusion, data, lr, schedule_sampler=None):
        self.accelerator = Accelerator()
        self.diffusion = diffusion
        self.schedule_sampler = schedule_sampler or create_named_schedule_sampler("uniform", diffusion)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.model, self.opt = self.accelerator.prepare(model, opt)
        self.data = data

    def run_loop(self, steps):
        for _ in range(steps):
            batch, cond = next(self.data)
            batch = batch.to(self.accelerator.device)
            self.run_step(batch, cond)

    def run_step(self, batch, cond):
        self.opt.zero_grad()
        t, weights = self.schedule_sampler.sample(batch.shape[0])
        t.to(batch.device)  # expect: DL101
        weights.to(batch.device)  # expect: DL101

        losses = self.diffusion.training_losses(self.model, batch, t, model_kwargs=cond)
        if isinstance(self.schedule_sampler, LossAwareSampler):
            self.schedule_sampler.update_with_local_losses(t, losses["loss"].detach())
        loss = (losses["loss"] * weights).mean()
        self.accelerator.backward(loss)
        self.opt.step()
