# source: https://github.com/lucidrains/DALLE2-pytorch/issues/87
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and CPU! (in calculate_ema, at the first trainer.update after sampling)
# bug: the decoder trainer keeps an EMA copy of each U-Net and swaps the EMA U-Nets into the decoder
#      to sample; the decoder's sampler keeps only the U-Net in use on the GPU (it moves all of them
#      to the CPU, the current one to the GPU, and that one back to the CPU when done), so after
#      sampling every EMA U-Net is on the CPU while the online U-Nets are still on the GPU, and the
#      next EMA update mixes them. The fix (commit 924455d) adds an EMA method that moves the EMA
#      model back to the device of the wrapper's buffers and calls it for every EMA U-Net at the end
#      of sampling; it only inserts lines, so the line the traceback points to is marked (DL201).
from contextlib import contextmanager, nullcontext
from copy import deepcopy

import torch
import torch.nn as nn


class EMA(nn.Module):
    def __init__(self, model, beta=0.99, update_after_step=0, update_every=1):
        super().__init__()
        self.beta = beta
        self.online_model = model
        self.ema_model = deepcopy(model)
        self.update_after_step, self.update_every = update_after_step, update_every
        self.register_buffer("initted", torch.Tensor([False]))
        self.register_buffer("step", torch.tensor([0.0]))

    def update(self):
        self.step += 1
        if self.step <= self.update_after_step or (self.step % self.update_every) != 0:
            return
        self.update_moving_average(self.ema_model, self.online_model)

    def update_moving_average(self, ma_model, current_model):
        def calculate_ema(beta, old, new):
            return old * beta + (1 - beta) * new  # expect: DL201

        for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
            ma_params.data = calculate_ema(self.beta, ma_params.data, current_params.data)


class Decoder(nn.Module):
    def __init__(self, unets):
        super().__init__()
        self.unets = nn.ModuleList(unets)

    @contextmanager
    def one_unet_in_gpu(self, unet):
        self.cuda()
        self.unets.cpu()
        unet.cuda()
        yield
        unet.cpu()

    @torch.no_grad()
    def sample(self, batch_size=2, size=8):
        is_cuda = next(self.parameters()).is_cuda
        img = torch.randn(batch_size, 3, size, size, device=next(self.parameters()).device)
        for unet in self.unets:
            context = self.one_unet_in_gpu(unet) if is_cuda else nullcontext()
            with context:
                img = unet(img.to(next(unet.parameters()).device))
        return img

    def forward(self, images, unet_number):
        return (self.unets[unet_number](images) - images).pow(2).mean()


class DecoderTrainer(nn.Module):
    def __init__(self, decoder, use_ema=True, lr=3e-4):
        super().__init__()
        self.decoder, self.use_ema = decoder, use_ema
        self.ema_unets = nn.ModuleList([EMA(unet) for unet in decoder.unets])
        self.optimizers = [torch.optim.Adam(unet.parameters(), lr=lr) for unet in decoder.unets]

    @property
    def unets(self):
        return nn.ModuleList([ema.ema_model for ema in self.ema_unets])

    def update(self, unet_number):
        self.optimizers[unet_number].step()
        self.optimizers[unet_number].zero_grad()
        if self.use_ema:
            self.ema_unets[unet_number].update()

    @torch.no_grad()
    def sample(self, *args, **kwargs):
        if self.use_ema:
            trainable_unets = self.decoder.unets
            self.decoder.unets = self.unets
        output = self.decoder.sample(*args, **kwargs)
        if self.use_ema:
            self.decoder.unets = trainable_unets
        return output

    def forward(self, images, unet_number):
        loss = self.decoder(images, unet_number)
        loss.backward()
        return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    decoder = Decoder([nn.Conv2d(3, 3, 3, padding=1), nn.Conv2d(3, 3, 3, padding=1)])
    trainer = DecoderTrainer(decoder).to(device)
    images = torch.randn(2, 3, 8, 8, device=device)
    for step in range(3):
        trainer(images, unet_number=0)
        trainer.update(0)
        if step == 0:
            print(trainer.sample().shape)
    print("done")
