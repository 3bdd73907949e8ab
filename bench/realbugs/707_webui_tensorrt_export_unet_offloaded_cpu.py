# source: https://github.com/AUTOMATIC1111/stable-diffusion-webui-tensorrt/pull/29
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
# bug: the ONNX export builds its dummy inputs on the web UI's device (CUDA) but traces the current
#      UNet wherever it is; with the low-VRAM option the UNet's weights are kept on the CPU between
#      uses, so tracing mixes devices. The fix (commit f03dd00, for issue 27) moves the UNet to the
#      device before exporting; it only adds lines, so the export call the traceback points to is
#      marked (no rule covers tracing a module; DL201, a module called on another device's input, is
#      the closest).
import os
import tempfile
from types import SimpleNamespace

import torch
import torch.nn as nn


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_embed = nn.Linear(1, 4)
        self.context_proj = nn.Linear(768, 4)
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x, timesteps, context):
        t = self.time_embed(timesteps[:, None])[:, :, None, None]
        c = self.context_proj(context).mean(dim=1)[:, :, None, None]
        return self.conv(x) + t + c


devices = SimpleNamespace(device=torch.device("cuda" if torch.cuda.is_available() else "cpu"), dtype=torch.float32)
# --lowvram: the UNet stays on the CPU and is only sent to the GPU by the sampler's hooks
shared = SimpleNamespace(sd_model=SimpleNamespace(model=SimpleNamespace(diffusion_model=TinyUNet())))


def export_current_unet_to_onnx(filename, opset_version=17):
    x = torch.randn(1, 4, 16, 16).to(devices.device, devices.dtype)
    timesteps = torch.zeros((1,)).to(devices.device, devices.dtype) + 500
    context = torch.randn(1, 77, 768).to(devices.device, devices.dtype)

    os.makedirs(os.path.dirname(filename), exist_ok=True)

    torch.onnx.export(  # expect: DL201
        shared.sd_model.model.diffusion_model,
        (x, timesteps, context),
        filename,
        export_params=True,
        opset_version=opset_version,
        input_names=["x", "timesteps", "context"],
        output_names=["output"],
        dynamo=False,
    )


if __name__ == "__main__":
    out = os.path.join(tempfile.mkdtemp(), "unet", "model.onnx")
    export_current_unet_to_onnx(out)
    print(os.path.getsize(out))
