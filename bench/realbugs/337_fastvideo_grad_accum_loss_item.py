# source: https://github.com/hao-ai-lab/FastVideo/pull/1217
# error: none raised: an Nsight trace showed a cudaDeviceSynchronize per micro-batch and 45% GPU idle time
# bug: inside the gradient-accumulation loop the training step reads each micro-batch's averaged
#      loss with .item() to add it to a Python float, stalling the host until the GPU drains at
#      every micro-batch; the fix accumulates the loss as a tensor on the device.
import torch
import torch.distributed as dist


class TrainingBatch:
    def __init__(self):
        self.total_loss = 0.0
        self.grad_norm = None


class TrainingPipeline:
    def __init__(self, transformer, optimizer, lr_scheduler, device, gradient_accumulation_steps):
        self.device = device
        self.transformer = transformer.to(device)
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def _get_next_batch(self, loader_iter):
        batch = next(loader_iter)
        latents = batch["latents"].to(self.device)
        encoder_hidden_states = batch["encoder_hidden_states"].to(self.device)
        return latents, encoder_hidden_states

    def train_one_step(self, loader_iter, training_batch):
        self.optimizer.zero_grad()
        for _ in range(self.gradient_accumulation_steps):
            latents, encoder_hidden_states = self._get_next_batch(loader_iter)
            noise = torch.randn_like(latents)
            timesteps = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            noisy = latents + noise
            model_pred = self.transformer(noisy, encoder_hidden_states, timesteps)
            loss = torch.nn.functional.mse_loss(model_pred.float(), noise.float()) / self.gradient_accumulation_steps
            loss.backward()
            avg_loss = loss.detach().clone()
            dist.all_reduce(avg_loss, op=dist.ReduceOp.AVG)
            training_batch.total_loss += avg_loss.item()  # expect: DL408
        training_batch.grad_norm = torch.nn.utils.clip_grad_norm_(self.transformer.parameters(), 1.0)
        self.optimizer.step()
        self.lr_scheduler.step()
        return training_batch
