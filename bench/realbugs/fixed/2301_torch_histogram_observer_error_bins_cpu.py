# source: https://github.com/pytorch/pytorch/pull/59234
# fixed twin: the bin index vector, the norm accumulator and the ones vector are made on the histogram's device (device=self.histogram.device), as the landed fix does.
import torch
import torch.nn as nn


class HistogramObserver(nn.Module):
    def __init__(self, bins=64, dst_nbins=16):
        super().__init__()
        self.bins = bins
        self.dst_nbins = dst_nbins
        self.register_buffer("histogram", torch.zeros(bins))
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def forward(self, x):
        x = x.detach()
        self.min_val = torch.minimum(self.min_val, x.min())
        self.max_val = torch.maximum(self.max_val, x.max())
        lo, hi = self.min_val.item(), self.max_val.item()
        self.histogram = self.histogram + torch.histc(x, self.bins, min=lo, max=hi)
        return x

    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        return density * (delta_end ** 3 - delta_begin ** 3) / 3

    def _compute_quantization_error(self, start_bin, end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = torch.arange(self.bins, device=self.histogram.device)
        src_bin_begin = (src_bin - start_bin) * bin_width
        dst_bin_of_begin = torch.clamp(torch.div(src_bin_begin, dst_bin_width, rounding_mode="floor"), 0, self.dst_nbins - 1)
        dst_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        density = self.histogram / bin_width
        norm = torch.zeros(self.bins, device=self.histogram.device)
        delta_begin = src_bin_begin - dst_center
        half = dst_bin_width / 2
        norm += self._get_norm(delta_begin, torch.ones(self.bins, device=self.histogram.device) * half, density)
        return norm.sum().item()

    def calculate_qparams(self):
        best, best_err = (0, self.bins - 1), float("inf")
        for start in range(0, self.bins // 4, 4):
            end = self.bins - 1 - start
            err = self._compute_quantization_error(start, end)
            if err < best_err:
                best, best_err = (start, end), err
        bin_width = (self.max_val - self.min_val) / self.bins
        new_min = self.min_val + bin_width * best[0]
        new_max = self.min_val + bin_width * (best[1] + 1)
        scale = (new_max - new_min) / 255.0
        return scale, torch.round(-new_min / scale)


class ObservedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act_obs = HistogramObserver()

    def forward(self, x):
        return self.act_obs(torch.relu(self.fc(x)))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ObservedNet().to(device).eval()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(32, 16, device=device))
    scale, zero_point = model.act_obs.calculate_qparams()
    print(float(scale), float(zero_point))
