# source: https://github.com/huggingface/diffusers/pull/13450
# error: RuntimeError: Expected all tensors to be on the same device, but got tensors is on cuda:0, different from other tensors on cpu (when checking argument in method wrapper_CUDA_cat)
# bug: set_timesteps receives the pipeline's device but ends by moving the sigmas to "cpu";
#      on the flow-matching path every quantity derived from them (alpha_t, sigma_t, rks, b)
#      stays on the CPU and is stacked / solved together with the CUDA sample.
from typing import Optional, Union

import numpy as np
import torch


class UniPCMultistepScheduler:
    def __init__(self, num_train_timesteps: int = 1000, use_flow_sigmas: bool = True):
        self.num_train_timesteps = num_train_timesteps
        self.use_flow_sigmas = use_flow_sigmas
        self.model_outputs = []
        self.step_index = 0

    def set_timesteps(self, num_inference_steps: int, device: Union[str, torch.device] = None):
        alphas = np.linspace(1, 1 / self.num_train_timesteps, num_inference_steps + 1)
        sigmas = 1.0 - alphas
        timesteps = (sigmas * self.num_train_timesteps).copy()
        sigmas = np.concatenate([sigmas, [0.0]]).astype(np.float32)
        self.sigmas = torch.from_numpy(sigmas)
        self.timesteps = torch.from_numpy(timesteps).to(device=device, dtype=torch.int64)
        self.num_inference_steps = len(timesteps)
        self.model_outputs = []
        self.sigmas = self.sigmas.to(device=device)

    def _sigma_to_alpha_sigma_t(self, sigma):
        return 1 - sigma, sigma

    def multistep_uni_p_bh_update(self, model_output: torch.Tensor, sample: torch.Tensor, order: int) -> torch.Tensor:
        sigma_t, sigma_s0 = self.sigmas[self.step_index + 1], self.sigmas[self.step_index]
        alpha_t, sigma_t = self._sigma_to_alpha_sigma_t(sigma_t)
        alpha_s0, sigma_s0 = self._sigma_to_alpha_sigma_t(sigma_s0)
        lambda_t = torch.log(alpha_t) - torch.log(sigma_t)
        lambda_s0 = torch.log(alpha_s0) - torch.log(sigma_s0)
        h = lambda_t - lambda_s0
        rks = []
        D1s = []
        for i in range(1, order):
            mi = self.model_outputs[-(i + 1)]
            rks.append(torch.ones((), device=sample.device) * (i / order))
            D1s.append((mi - model_output) / (i / order))
        rks.append(torch.ones_like(h))
        rks = torch.stack(rks)
        b = torch.expm1(-h) / h
        x_t = sigma_t / sigma_s0 * sample - alpha_t * b * model_output
        return x_t
