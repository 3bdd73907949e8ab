# source: https://github.com/Emmi-AI/noether/pull/156
# fixed twin: shift and scale are moved to the data's device in both methods (merged PR 156).
import torch
import torch.nn as nn


def validate_tensor(v):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v)


class ShiftAndScaleNormalizerConfig:
    def __init__(self, shift, scale, logscale=False):
        self.shift, self.scale, self.logscale = validate_tensor(shift), validate_tensor(scale), logscale
        if self.shift.shape != self.scale.shape:
            raise ValueError("shift and scale must have the same shape.")


class PreProcessor:
    def __init__(self, normalization_key=None):
        self.normalization_key = normalization_key


class ShiftAndScaleNormalizer(PreProcessor):
    def __init__(self, normalizer_config, **kwargs):
        super().__init__(**kwargs)
        self.scale = normalizer_config.scale
        self.shift = normalizer_config.shift
        self.logscale = normalizer_config.logscale

    def __call__(self, x):
        if self.logscale:
            x = torch.sign(x) * torch.log1p(x.abs())
        return (x + self.shift.to(x.device)) * self.scale.to(x.device)

    def denormalize(self, x):
        x = x * (1.0 / self.scale.to(x.device)) - self.shift.to(x.device)
        if self.logscale:
            x = torch.sign(x) * torch.expm1(x.abs())
        return x


class MeanStdNormalization(ShiftAndScaleNormalizer):
    EPSILON = 1e-6

    def __init__(self, mean, std, **kwargs):
        self.mean, self.std = validate_tensor(mean), validate_tensor(std)
        config = ShiftAndScaleNormalizerConfig(-self.mean, torch.reciprocal(self.std.clamp(min=self.EPSILON)))
        super().__init__(config, **kwargs)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pressure = MeanStdNormalization(mean=[1.0, 2.0, 0.5], std=[0.5, 1.5, 2.0], normalization_key="pressure")
    samples = [pressure(torch.randn(10, 3)) for _ in range(4)]
    model = nn.Linear(3, 3).to(device)
    batch = torch.stack(samples).to(device)
    with torch.no_grad():
        prediction = pressure.denormalize(model(batch))
        target = pressure(torch.randn(4, 10, 3, device=device))
    print(prediction.shape, target.shape)
