# source: https://github.com/tenstorrent/tt-xla/issues/3335
# fixed twin: _grid_default_boxes takes the feature maps' device, makes the shifts there and moves the cached pairs to it (tt-forge-models PR 486; torchvision PR 9514).
import math

import torch
import torch.nn as nn


class DefaultBoxGenerator(nn.Module):
    def __init__(self, aspect_ratios, min_ratio=0.15, max_ratio=0.9, clip=True):
        super().__init__()
        self.aspect_ratios = aspect_ratios
        self.clip = clip
        num_outputs = len(aspect_ratios)
        self.scales = [min_ratio + (max_ratio - min_ratio) * k / (num_outputs - 1) for k in range(num_outputs)] + [1.0]
        self._wh_pairs = self._generate_wh_pairs(num_outputs)

    def _generate_wh_pairs(self, num_outputs, dtype=torch.float32, device=torch.device("cpu")):
        pairs = []
        for k in range(num_outputs):
            s_k = self.scales[k]
            s_prime_k = math.sqrt(self.scales[k] * self.scales[k + 1])
            wh = [[s_k, s_k], [s_prime_k, s_prime_k]]
            for ar in self.aspect_ratios[k]:
                sq = math.sqrt(ar)
                wh.extend([[s_k * sq, s_k / sq], [s_k / sq, s_k * sq]])
            pairs.append(torch.as_tensor(wh, dtype=dtype, device=device))
        return pairs

    def _grid_default_boxes(self, grid_sizes, dtype=torch.float32, device=torch.device("cpu")):
        default_boxes = []
        for k, f_k in enumerate(grid_sizes):
            y_f_k, x_f_k = f_k
            shifts_x = ((torch.arange(0, f_k[1], device=device) + 0.5) / x_f_k).to(dtype=dtype)
            shifts_y = ((torch.arange(0, f_k[0], device=device) + 0.5) / y_f_k).to(dtype=dtype)
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shifts = torch.stack((shift_x.reshape(-1), shift_y.reshape(-1)) * len(self._wh_pairs[k]), dim=-1).reshape(-1, 2)
            wh_pair = self._wh_pairs[k].to(dtype=dtype, device=device)
            wh_pair = wh_pair.clamp(min=0, max=1) if self.clip else wh_pair
            wh_pairs = wh_pair.repeat(f_k[0] * f_k[1], 1)
            default_boxes.append(torch.cat((shifts, wh_pairs), dim=1))
        return torch.cat(default_boxes, dim=0)

    def forward(self, images, feature_maps):
        grid_sizes = [tuple(fm.shape[-2:]) for fm in feature_maps]
        dtype, device = feature_maps[0].dtype, feature_maps[0].device
        default_boxes = self._grid_default_boxes(grid_sizes, dtype=dtype, device=device)
        return [default_boxes for _ in range(images.shape[0])]


class TinySSD(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Conv2d(3, 8, 3, stride=4, padding=1)
        self.stage2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.anchor_generator = DefaultBoxGenerator([[2], [2, 3]])

    def forward(self, images):
        f1 = self.stage1(images)
        f2 = self.stage2(f1)
        return self.anchor_generator(images, [f1, f2])


def compile_for_device(model, device):
    # stand-in for the device compiler: parameters, buffers and the modules' constant tensors go to the device
    model.to(device)
    for module in model.modules():
        if isinstance(module, DefaultBoxGenerator):
            module._wh_pairs = [pair.to(device) for pair in module._wh_pairs]
    return model


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = compile_for_device(TinySSD().eval(), device)
    with torch.no_grad():
        boxes = model(torch.randn(2, 3, 64, 64, device=device))
    print(boxes[0].shape)
