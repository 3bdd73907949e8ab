# source: https://github.com/norse/norse/pull/397
# error: (PR "fix transfer sampled and parametrized rf modules to cuda": the receptive-field modules "where not
#        transferring submodule's weights to cuda") conv2d of a CUDA input with the CPU weights
# bug: norse/torch/module/receptive_field.py's SpatialReceptiveField2d computes its convolution kernels in
#      _update_weights (called from __init__) and keeps them as a plain attribute, self.weights = ..., so
#      module.cuda() / .to(device) moves rf_parameters (a Parameter) but not the weights; forward recomputes them
#      only after a backward pass flagged an update, so the first forward on the GPU hands F.conv2d a CUDA input and
#      CPU weights (SampledSpatialReceptiveField2d and ParameterizedSpatialReceptiveField2d wrap it as a submodule).
#      The fix (commit 9f884fc) registers both assignments as buffers with self.register_buffer("weights", ...);
#      both lines are marked (DL103). Reductions: spatial_receptive_field keeps the Gaussian of gaussian_kernel and
#      covariance_matrix without the derivative step (the parameters here ask for none); the Sampled/Parameterized
#      wrappers and the temporal fields are cut; the driver is the class docstring's example moved to the device.
from typing import Optional

import torch


# --- norse/torch/functional/receptive_field.py ---
def gaussian_kernel(size: int, c: torch.Tensor, domain: int = 8) -> torch.Tensor:
    ci = torch.linalg.inv(c)
    cd = torch.linalg.det(c)
    fraction = 1 / (2 * torch.pi * torch.sqrt(cd))
    a = torch.linspace(-domain, domain, size)
    xs, ys = torch.meshgrid(a, a, indexing="xy")
    coo = torch.stack([xs, ys], dim=2)
    b = torch.einsum("bimj,jk->bik", -coo.unsqueeze(2), ci)
    a = torch.einsum("bij,bij->bi", b, coo)
    return fraction * torch.exp(a / 2)


def covariance_matrix(sigma1: torch.Tensor, sigma2: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
    lambda1 = torch.as_tensor(sigma1) ** 2
    lambda2 = torch.as_tensor(sigma2) ** 2
    phi = torch.as_tensor(phi)
    cxx = lambda1 * phi.cos() ** 2 + lambda2 * phi.sin() ** 2
    cxy = (lambda1 - lambda2) * phi.cos() * phi.sin()
    cyy = lambda1 * phi.sin() ** 2 + lambda2 * phi.cos() ** 2
    cov = torch.ones(2, 2, device=phi.device)
    cov[0][0] = cxx
    cov[0][1] = cxy
    cov[1][0] = cxy
    cov[1][1] = cyy
    return cov


def spatial_receptive_field(scale, angle, ratio, size: int, dx: int = 0, dy: int = 0, domain: float = 10):
    angle = torch.as_tensor(angle)
    c = covariance_matrix(ratio, 1 / ratio, angle) * scale
    k = gaussian_kernel(size, c, domain=domain)
    k = k / k.sum()
    return k


def spatial_receptive_fields_with_derivatives(combinations: torch.Tensor, size: int, domain: float = 1):
    return torch.stack([spatial_receptive_field(scale=p[0], angle=p[1], ratio=p[2], size=size, dx=p[3], dy=p[4],
                                                domain=domain) for p in combinations])


# --- norse/torch/module/receptive_field.py ---
class SpatialReceptiveField2d(torch.nn.Module):
    def __init__(self, in_channels: int, size: int, rf_parameters: torch.Tensor, aggregate: bool = True,
                 domain: float = 8, optimize_fields: bool = True, **kwargs) -> None:
        super().__init__()
        self.rf_parameters = torch.nn.Parameter(rf_parameters) if optimize_fields else rf_parameters
        self.rf_parameters_previous = torch.zeros_like(self.rf_parameters)

        self.in_channels = in_channels
        self.size = size
        self.aggregate = aggregate
        self.domain = domain
        self.out_channels = rf_parameters.shape[0] if aggregate else rf_parameters.shape[0] * in_channels
        self.kwargs = kwargs
        if "bias" not in self.kwargs:
            self.kwargs["bias"] = None

        # Register update and update the fields for the first time
        self.has_updated = True
        self._update_weights()

        if optimize_fields:

            def update_hook(m, gi, go):
                m.has_updated = True

            self.register_full_backward_hook(update_hook)

    def _update_weights(self):
        if self.has_updated:
            if not torch.all(torch.eq(self.rf_parameters_previous, self.rf_parameters)):
                # Reset the flag
                self.has_updated = False
                self.rf_parameters_previous = self.rf_parameters.detach().clone()
                # Calculate new weights
                fields = spatial_receptive_fields_with_derivatives(
                    self.rf_parameters,
                    size=self.size,
                    domain=self.domain,
                )
                if self.aggregate:
                    self.out_channels = fields.shape[0]
                    self.weights = fields.unsqueeze(1).repeat(1, self.in_channels, 1, 1)  # expect: DL103
                else:
                    self.out_channels = self.fields.shape[0] * self.in_channels
                    empty_weights = torch.zeros(
                        self.in_channels,
                        fields.shape[0],
                        self.size,
                        self.size,
                        device=self.rf_parameters.device,
                    )
                    weights = []
                    for i in range(self.in_channels):
                        in_weights = empty_weights.clone()
                        in_weights[i] = fields
                        weights.append(in_weights)
                    self.weights = torch.concat(weights, 1).permute(1, 0, 2, 3)  # expect: DL103
                self.weights.requires_grad_(True)

    def forward(self, x: torch.Tensor):
        self._update_weights()  # Update weights if necessary
        return torch.nn.functional.conv2d(x, self.weights, **self.kwargs)


# --- the docstring's example, on the GPU ---
if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    parameters = torch.tensor([[1., 1., 1., 0., 0.]])
    m = SpatialReceptiveField2d(1, 9, parameters).to(device)
    y = m(torch.empty(1, 1, 9, 9, device=device))
    print(y.shape)
