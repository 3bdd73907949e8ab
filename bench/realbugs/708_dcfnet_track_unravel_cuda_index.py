# source: https://github.com/foolwood/DCFNet_pytorch/issues/23
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (at np.unravel_index(idx[best_scale], ...))
# bug: the tracker runs the correlation net on the GPU and takes torch.max over each scale's response;
#      it copies the peaks to the host before scoring the scales, but hands the argmax indices, still a
#      CUDA tensor, to np.unravel_index. No upstream fix; the line the report points to is marked
#      (DL204: numpy on a GPU tensor).
import numpy as np
import torch
import torch.nn as nn


class Config:
    num_scale = 3
    net_input_size = (32, 32)
    scale_penalties = np.array([0.98, 1.0, 0.98], dtype=np.float32)
    net_average_image = np.zeros((1, 3, 1, 1), dtype=np.float32)


class DCFNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, padding=1))
        self.model_alphaf = None

    def forward(self, x):
        z = self.feature(x)
        return z.mean(dim=1, keepdim=True)


def track_one_frame(net, patch_crop, config):
    search = patch_crop - config.net_average_image
    response = net(torch.Tensor(search).cuda())
    peak, idx = torch.max(response.view(config.num_scale, -1), 1)
    peak = peak.data.cpu().numpy() * config.scale_penalties
    best_scale = np.argmax(peak)
    r_max, c_max = np.unravel_index(idx[best_scale], config.net_input_size)  # expect: DL204
    return r_max, c_max, best_scale


if __name__ == "__main__":
    config = Config()
    net = DCFNet().cuda()
    net.eval()
    patch_crop = np.random.rand(config.num_scale, 3, *config.net_input_size).astype(np.float32)
    with torch.no_grad():
        print(track_one_frame(net, patch_crop, config))
