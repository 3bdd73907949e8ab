# source: https://github.com/huggingface/diffusers/pull/13782
# error: RuntimeError: Expected all tensors to be on the same device (EMAModel.restore with foreach=True, model on the GPU)
# bug: the training scripts validate with the EMA weights by store() -> copy_to() -> restore().
#      store() keeps host copies of the live parameters (param.detach().cpu().clone()); copy_to()'s
#      foreach path moves each shadow tensor to its parameter's device, but restore()'s foreach
#      path hands the host copies straight to torch._foreach_copy_ together with the GPU
#      parameters. The PR (closed) moves each stored copy to its parameter's device, as copy_to
#      does; the changed call is marked (DL201: an operation whose operands live on different
#      devices).
import copy

import torch
import torch.nn as nn


class EMAModel:
    def __init__(self, parameters, decay=0.9999, foreach=False):
        parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay = decay
        self.foreach = foreach
        self.temp_stored_params = None

    @torch.no_grad()
    def step(self, parameters):
        one_minus_decay = 1 - self.decay
        parameters = list(parameters)
        if self.foreach:
            torch._foreach_sub_(self.shadow_params, torch._foreach_sub(self.shadow_params, parameters), alpha=one_minus_decay)
        else:
            for s_param, param in zip(self.shadow_params, parameters):
                s_param.sub_(one_minus_decay * (s_param - param))

    def copy_to(self, parameters):
        parameters = list(parameters)
        if self.foreach:
            torch._foreach_copy_(
                [param.data for param in parameters],
                [s_param.to(param.device).data for s_param, param in zip(self.shadow_params, parameters)],
            )
        else:
            for s_param, param in zip(self.shadow_params, parameters):
                param.data.copy_(s_param.to(param.device).data)

    def to(self, device=None):
        self.shadow_params = [p.to(device=device) for p in self.shadow_params]

    def store(self, parameters):
        self.temp_stored_params = [param.detach().cpu().clone() for param in parameters]

    def restore(self, parameters):
        if self.temp_stored_params is None:
            raise RuntimeError("This ExponentialMovingAverage has no `store()`ed weights to `restore()`")
        if self.foreach:
            torch._foreach_copy_([param.data for param in parameters], [c_param.data for c_param in self.temp_stored_params])  # expect: DL201
        else:
            for c_param, param in zip(self.temp_stored_params, parameters):
                param.data.copy_(c_param.data)
        self.temp_stored_params = None


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    unet = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 3, 3, padding=1))
    ema_unet = EMAModel(copy.deepcopy(unet).parameters(), decay=0.99, foreach=True)
    unet.to(device)
    ema_unet.to(device)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-3)
    for _ in range(2):
        x = torch.randn(2, 3, 8, 8, device=device)
        loss = nn.functional.mse_loss(unet(x), x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_unet.step(unet.parameters())
    ema_unet.store(unet.parameters())
    ema_unet.copy_to(unet.parameters())
    with torch.no_grad():
        val = unet(torch.randn(1, 3, 8, 8, device=device)).abs().mean().item()
    ema_unet.restore(unet.parameters())
    print(val)


if __name__ == "__main__":
    main()
