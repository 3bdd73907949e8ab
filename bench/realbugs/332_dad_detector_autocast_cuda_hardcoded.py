# source: https://github.com/Parskatt/dad/pull/1
# error: none raised: on MPS (or CPU) the detector's autocast names CUDA, so it runs without mixed precision
# bug: the keypoint detector runs its forward pass under an autocast whose device type is
#      hard-coded to "cuda"; the fix takes the device type from the input tensor.
import torch
import torch.nn as nn


class DaDDetector(nn.Module):
    def __init__(self, encoder, decoder, amp_dtype=torch.float16):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.amp_dtype = amp_dtype

    def forward(self, batch):
        images = batch["image"]
        with torch.autocast("cuda", dtype=self.amp_dtype):  # expect: DL308
            features = self.encoder(images)
            logits = self.decoder(features)
        return logits.float()

    @torch.inference_mode()
    def detect(self, batch, num_keypoints=512):
        logits = self.forward(batch)
        b, _, h, w = logits.shape
        scores = logits.reshape(b, h * w).softmax(dim=-1)
        return scores.topk(num_keypoints, dim=-1).indices
