# source: https://github.com/sbi-dev/sbi/issues/853
# error: (issue) prior = utils.BoxUniform(low=-2 * torch.ones(num_dim).to(device), high=2 * torch.ones(num_dim).to(device));
#        SNPE(prior=prior, device="cuda:0") - "AssertionError: Prior device 'cpu' must match training device 'cuda:0'."
# bug: sbi/utils/torchutils.BoxUniform takes device: str = "cpu" as its default and rebuilds the bounds with
#      torch.as_tensor(low, dtype=torch.float32, device=torch.device(device)), so bounds the user already put on the
#      GPU are copied back to the CPU unless device= is passed as well; the inference object's
#      check_if_prior_on_device then samples the prior on the CPU and rejects it for a CUDA training device. The fix
#      (commit 44722c6, "bugfix: BoxUniform device handling", refined in 8769e25) makes the default None and infers the
#      device from low (infer_device). The changed default is marked; no rule fits a hard-coded "cpu" default that
#      overrides the data's device, DL302 (a hard-coded device in a program that takes its device from configuration)
#      is the closest. Reductions: SNPE's constructor is reduced to process_device and check_if_prior_on_device;
#      prepare_for_sbi and the simulator are dropped; the other torchutils helpers are dropped. The script
#      needs a GPU; on a CPU-only machine it stops in .to("cuda:0").
from typing import Any, Optional, Union
import warnings

import torch
from torch.distributions import Independent, Uniform

ScalarFloat = Union[torch.Tensor, float]


# --- sbi/utils/torchutils.py ---
def process_device(device: str) -> str:
    if device == "cpu":
        return "cpu"
    else:
        warnings.warn("GPU was selected as a device for training the neural network.")
        if device == "cuda":
            assert torch.cuda.is_available(), "CUDA is not available."
            current_gpu_index = torch.cuda.current_device()
            return f"cuda:{current_gpu_index}"
        else:
            try:
                torch.randn(1, device=device)
            except RuntimeError:
                raise RuntimeError(f"Could not instantiate torch.randn(1, device={device}).")
            torch.cuda.set_device(device)
            return device


def check_if_prior_on_device(device: Union[str, torch.device], prior: Optional[Any] = None) -> None:
    if prior is None:
        pass
    else:
        prior_device = prior.sample((1,)).device
        training_device = torch.zeros(1, device=device).device
        assert prior_device == training_device, (
            f"Prior device '{prior_device}' must match training device "
            f"'{training_device}'. When training on GPU make sure to "
            "pass a prior initialized on the GPU as well, e.g., "
            "prior = torch.distributions.Normal"
            "(torch.zeros(2, device='cuda'), scale=1.0)`."
        )


class BoxUniform(Independent):
    def __init__(
        self,
        low: ScalarFloat,
        high: ScalarFloat,
        reinterpreted_batch_ndims: int = 1,
        device: str = "cpu",  # expect: DL302
    ):
        device = process_device(device)
        super().__init__(
            Uniform(
                low=torch.as_tensor(low, dtype=torch.float32, device=torch.device(device)),
                high=torch.as_tensor(high, dtype=torch.float32, device=torch.device(device)),
                validate_args=False,
            ),
            reinterpreted_batch_ndims,
        )


# --- sbi/inference/base.py (NeuralInference.__init__, inherited by SNPE) ---
class SNPE:
    def __init__(self, prior=None, density_estimator="maf", device="cpu"):
        self._device = process_device(device)
        check_if_prior_on_device(self._device, prior)
        self._prior = prior


if __name__ == "__main__":
    _ = torch.manual_seed(0)
    device = torch.device("cuda:0")
    num_dim = 3
    prior = BoxUniform(low=-2 * torch.ones(num_dim).to(device), high=2 * torch.ones(num_dim).to(device))
    inference = SNPE(prior=prior, device="cuda:0")
    print(inference._prior.sample((2,)))
