# source: https://github.com/trueagi-io/minecraft-demo/pull/33
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: the agent's NeuralScan skill loads its keypoint network through a cached load_model() that
#      moves it to CUDA when a GPU exists; the camera frame is turned into a tensor with
#      torch.frombuffer on the pixel buffer (numpy's frombuffer + torch.as_tensor upstream; a host
#      tensor either way) and handed to the network unmoved in act().
#      The fix (PR 33, commit d8c9c23) inserts a line at the top of the network's forward that moves
#      its input to where the parameters are; the line the inserted line precedes is marked (DL203:
#      a model moved to a device called on a batch that never was).
import random

import torch
from torch import nn

model_cache = dict()


class GoodPoint(nn.Module):
    def __init__(self, grid_size, n_blocks, n_channels=1):
        super().__init__()
        self.grid_size = grid_size
        self.conv1 = nn.Conv2d(n_channels, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Conv2d(16, n_blocks * grid_size * grid_size, 1)

    def vgg(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        return torch.relu(self.conv2(x))

    def forward(self, x):
        assert x.max() < 1.01
        x = self.vgg(x)  # expect: DL203
        semi = self.head(x)
        result = nn.functional.pixel_shuffle(semi, self.grid_size // 2)
        return nn.functional.softmax(result, dim=1)


class FakeRobot:
    def observe_pixels(self):
        return bytearray(random.randrange(256) for _ in range(32 * 48 * 3))


class NeuralScan:
    def __init__(self, rob):
        self.rob = rob
        self.net = self.load_model()

    def load_model(self):
        path = "goodpoint.pt"
        if path in model_cache:
            return model_cache[path]
        device = "cuda" if torch.cuda.is_available() else "cpu"
        net = GoodPoint(4, 3, n_channels=3).to(device)
        model_cache[path] = net
        return net

    def _get_image(self):
        pixels = self.rob.observe_pixels()
        img_data = torch.frombuffer(pixels, dtype=torch.uint8).reshape(32, 48, 3)
        img_data = img_data.permute(2, 0, 1)
        return img_data.unsqueeze(0) / 255.0

    def act(self):
        img = self._get_image()
        with torch.no_grad():
            heatmaps = self.net(img)
        pooled = nn.functional.avg_pool2d(heatmaps[:, 1:], kernel_size=4)
        return pooled[0, 0].max().item(), pooled[0, 1].max().item()


if __name__ == "__main__":
    print(NeuralScan(FakeRobot()).act())
