# source: https://github.com/revbucket/mister_ed/issues/6
# error: RuntimeError in grid_sample: the flow (spatial transformation) parameters are on the CPU while the examples are on the GPU
# bug: an adversarial perturbation decides whether to put its parameters on the GPU from
#      perturbation_params.use_gpu, which is None unless the user sets it, and falls back to
#      False instead of the library's global GPU setting (utils.use_gpu(), true when CUDA is
#      there). The spatial-transformation threat then builds its FullSpatial grid parameters
#      with manual_gpu=False, on the CPU, and grid-samples the GPU examples with them. The
#      maintainer's fix (commit 7495504) falls back to utils.use_gpu() in both branches; the two
#      lines are marked. No rule covers a device flag defaulting to the CPU; DL201 (the CPU grid
#      meets the GPU examples in grid_sample) is the closest.
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def use_gpu():
    if "MISTER_ED_GPU" not in os.environ:
        os.environ["MISTER_ED_GPU"] = str(torch.cuda.is_available())
    return os.environ["MISTER_ED_GPU"] == "True"


class PerturbationParams(dict):
    def __getattr__(self, name):
        return self.get(name)


class FullSpatial(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        manual_gpu = kwargs.get("manual_gpu")
        self.use_gpu = manual_gpu if manual_gpu is not None else use_gpu()
        self.img_shape = kwargs["shape"]
        self.xform_params = nn.Parameter(self.identity_params(self.img_shape))

    def identity_params(self, shape):
        identity_affine_transform = torch.zeros(shape[0], 2, 3)
        if self.use_gpu:
            identity_affine_transform = identity_affine_transform.cuda()
        identity_affine_transform[:, 0, 0] = 1
        identity_affine_transform[:, 1, 1] = 1
        return F.affine_grid(identity_affine_transform, shape, align_corners=False).data

    def forward(self, examples):
        return F.grid_sample(examples, self.xform_params, align_corners=False)


class AdversarialPerturbation(nn.Module):
    def __init__(self, threat_model, perturbation_params):
        super().__init__()
        self.threat_model = threat_model
        self.initialized = False
        self.perturbation_params = perturbation_params
        if isinstance(perturbation_params, tuple):
            self.use_gpu = perturbation_params[1].use_gpu or False  # expect: DL201
        else:
            self.use_gpu = perturbation_params.use_gpu or False  # expect: DL201

    def setup(self, originals):
        self.num_examples = originals.shape[0]
        self.originals = originals


class ParameterizedXformAdv(AdversarialPerturbation):
    def setup(self, originals):
        super().setup(originals)
        self.xform = self.perturbation_params.xform_class(shape=originals.shape, manual_gpu=self.use_gpu)
        self.initialized = True

    def forward(self, x):
        return self.xform(x)


if __name__ == "__main__":
    device = torch.device("cuda" if use_gpu() else "cpu")
    examples = torch.rand(4, 3, 16, 16).to(device)
    flow_threat = PerturbationParams(xform_class=FullSpatial, lp_style="inf", lp_bound=0.05)
    perturbation = ParameterizedXformAdv("flow", flow_threat)
    perturbation.setup(examples)
    adversarial = perturbation(examples)
    print((adversarial - examples).abs().max().item())
