# source: https://github.com/Lightning-AI/torchmetrics/issues/1148
# fixed twin: the uniform kernel is made with the predictions' dtype and device, as PR 1149 does.
from typing import Sequence

import torch
import torch.nn.functional as F


def _gaussian(kernel_size: int, sigma: float, dtype, device):
    dist = torch.arange((1 - kernel_size) / 2, (1 + kernel_size) / 2, 1, dtype=dtype, device=device)
    gauss = torch.exp(-torch.pow(dist / sigma, 2) / 2)
    return (gauss / gauss.sum()).unsqueeze(dim=0)


def _gaussian_kernel_2d(channel, kernel_size: Sequence[int], sigma: Sequence[float], dtype, device):
    gaussian_kernel_x = _gaussian(kernel_size[0], sigma[0], dtype, device)
    gaussian_kernel_y = _gaussian(kernel_size[1], sigma[1], dtype, device)
    kernel = torch.matmul(gaussian_kernel_x.t(), gaussian_kernel_y)
    return kernel.expand(channel, 1, kernel_size[0], kernel_size[1])


def _ssim_compute(preds, target, gaussian_kernel=True, sigma=(1.5, 1.5), kernel_size=(11, 11), data_range=1.0, k1=0.01, k2=0.03):
    channel = preds.size(1)
    dtype = preds.dtype
    device = preds.device
    gauss_kernel_size = [int(3.5 * s + 0.5) * 2 + 1 for s in sigma]
    c1 = pow(k1 * data_range, 2)
    c2 = pow(k2 * data_range, 2)
    if gaussian_kernel:
        kernel = _gaussian_kernel_2d(channel, gauss_kernel_size, sigma, dtype, device)
        pad_h, pad_w = (gauss_kernel_size[0] - 1) // 2, (gauss_kernel_size[1] - 1) // 2
    if not gaussian_kernel:
        kernel = torch.ones((channel, 1, *kernel_size), dtype=dtype, device=device) / torch.prod(
            torch.tensor(kernel_size, dtype=dtype, device=device)
        )
        pad_h, pad_w = (kernel_size[0] - 1) // 2, (kernel_size[1] - 1) // 2
    preds = F.pad(preds, (pad_w, pad_w, pad_h, pad_h), mode="reflect")
    target = F.pad(target, (pad_w, pad_w, pad_h, pad_h), mode="reflect")
    input_list = torch.cat((preds, target, preds * preds, target * target, preds * target))
    outputs = F.conv2d(input_list, kernel, groups=channel)
    output_list = outputs.split(preds.shape[0])
    mu_pred_sq = output_list[0].pow(2)
    mu_target_sq = output_list[1].pow(2)
    mu_pred_target = output_list[0] * output_list[1]
    sigma_pred_sq = output_list[2] - mu_pred_sq
    sigma_target_sq = output_list[3] - mu_target_sq
    sigma_pred_target = output_list[4] - mu_pred_target
    upper = 2 * sigma_pred_target + c2
    lower = sigma_pred_sq + sigma_target_sq + c2
    ssim_idx = ((2 * mu_pred_target + c1) * upper) / ((mu_pred_sq + mu_target_sq + c1) * lower)
    return ssim_idx.mean()


class StructuralSimilarityIndexMeasure(torch.nn.Module):
    def __init__(self, gaussian_kernel=True, sigma=(1.5, 1.5), kernel_size=(11, 11)):
        super().__init__()
        self.gaussian_kernel = gaussian_kernel
        self.sigma = sigma
        self.kernel_size = kernel_size

    def forward(self, preds, target):
        return _ssim_compute(preds, target, self.gaussian_kernel, self.sigma, self.kernel_size)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    img = torch.rand(4, 3, 32, 32).to(device)
    ssim = StructuralSimilarityIndexMeasure(gaussian_kernel=False).to(device)
    print(ssim(img, img * 0.9).item())
