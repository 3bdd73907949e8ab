# source: https://github.com/kornia/kornia/pull/4330
# error: torch.export of a preprocessing pipeline moved to an accelerator fails: the exported graph meets the CPU mean/std constants with the accelerator input (eager hides it: normalize copies them to the input's device on every call)
# bug: the Normalize module turns its mean and std arguments into tensors and keeps them as plain
#      attributes, so pipeline.to(device) leaves them on the CPU; eager mode survives because the
#      functional normalize re-creates them on the data's device at each call, but tracing with fake
#      tensors refuses the mix. The fix (merged PR 4330, issue 4323) registers them as non-persistent
#      buffers (Denormalize and Rescale got the same change); the two attribute lines are marked
#      (DL103).
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        if isinstance(mean, (int, float)):
            mean = torch.tensor([mean])
        if isinstance(std, (int, float)):
            std = torch.tensor([std])
        if isinstance(mean, (tuple, list)):
            mean = torch.tensor(mean)[None]
        if isinstance(std, (tuple, list)):
            std = torch.tensor(std)[None]
        self.mean = mean  # expect: DL103
        self.std = std  # expect: DL103

    def forward(self, input):
        return normalize(input, self.mean, self.std)


def normalize(data, mean, std):
    shape = data.shape
    mean = torch.as_tensor(mean, device=data.device, dtype=data.dtype)[..., None]
    std = torch.as_tensor(std, device=data.device, dtype=data.dtype)[..., None]
    out = (data.view(shape[0], shape[1], -1) - mean) / std
    return out.view(shape)


def build_pipeline(device):
    pipeline = nn.Sequential(
        Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        nn.Conv2d(3, 8, 3, padding=1),
    )
    return pipeline.to(device).eval()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pipeline = build_pipeline(device)
    x = torch.rand(2, 3, 16, 16, device=device)
    print(pipeline(x).shape)
    exported = torch.export.export(pipeline, (x,))
    print(exported.module()(x).shape)
