# source: https://github.com/ibaiGorordo/vggt-pytorch-inference/pull/2
# error: none raised: on Apple silicon (MPS) or CPU the autocast context names 'cuda', so inference gets no mixed precision
# bug: the inference wrapper detects its device (CUDA, MPS or CPU) and keeps it in self.device, but
#      its mixed-precision context hard-codes 'cuda' instead of self.device.type.
import torch

from vggt.models.vggt import VGGT


def detect_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class VGGTInference:
    def __init__(self, model_name="facebook/VGGT-1B"):
        self.device = detect_device()
        self.dtype = torch.float16
        self.model = VGGT.from_pretrained(model_name).to(self.device)
        self.model.eval()

    @torch.no_grad()
    def __call__(self, images):
        images = images.to(self.device)
        with torch.autocast("cuda", dtype=self.dtype):  # expect: DL308
            predictions = self.model(images)
        return predictions
