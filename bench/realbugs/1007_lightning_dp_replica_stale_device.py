# source: https://github.com/Lightning-AI/pytorch-lightning/pull/6414
# error: (issue 6413) under DataParallel, self.device inside training_step is the root GPU on every
#        replica, so tensors made with device=self.device land on cuda:0 while replica 1 computes on cuda:1
# bug: the LightningModule answers `self.device` from a `_device` attribute it records when it is moved.
#      DataParallel copies that attribute into every replica unchanged, so on the replica running on
#      GPU 1 it still says cuda:0; a training_step that makes tensors with device=self.device mixes
#      devices there. The fix (PR 6414) makes the parallel wrapper's forward first set the replica's
#      `_device` from the first tensor in its inputs (warning when there is none); the marker is on the
#      step call that the inserted update precedes (DL206, the closest rule: a stored device used in
#      the forward pass instead of the input's).
import torch
import torch.nn as nn


class DeviceDtypeModule(nn.Module):
    def __init__(self):
        super().__init__()
        self._device = torch.device("cpu")

    @property
    def device(self):
        return self._device

    def to(self, *args, **kwargs):
        out = torch._C._nn._parse_to(*args, **kwargs)
        if out[0] is not None:
            self._device = out[0]
        return super().to(*args, **kwargs)

    def cuda(self, device=None):
        self._device = torch.device("cuda", torch.cuda.current_device() if device is None else device)
        return super().cuda(device=device)


class BoringModel(DeviceDtypeModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 2)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        noise = torch.randn(batch.shape, device=self.device) * 0.01
        return self(batch + noise).sum().unsqueeze(0)


class LightningParallelModule(nn.Module):
    def __init__(self, pl_module):
        super().__init__()
        self.module = pl_module

    def forward(self, *inputs, **kwargs):
        output = self.module.training_step(*inputs, **kwargs)  # expect: DL206
        return output


def fit(model, batches):
    device_ids = list(range(torch.cuda.device_count()))
    if device_ids:
        model.to(torch.device("cuda", device_ids[0]))
    wrapped = nn.DataParallel(LightningParallelModule(model), device_ids=device_ids or None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch_idx, batch in enumerate(batches):
        optimizer.zero_grad()
        loss = wrapped(batch, batch_idx).mean()
        loss.backward()
        optimizer.step()
    return float(loss)


if __name__ == "__main__":
    print(round(fit(BoringModel(), [torch.randn(4, 8) for _ in range(3)]), 4))
