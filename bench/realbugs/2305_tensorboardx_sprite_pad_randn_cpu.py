# source: https://github.com/lanpa/tensorboardX/issues/58
# error: TypeError: cat received an invalid combination of arguments (torch.cuda.FloatTensor label images and a torch.FloatTensor padding)
# bug: add_embedding writes a sprite of the label images; to make the sprite square, make_sprite
#      pads the batch with random images drawn by torch.randn without device= (on the host) and
#      concatenates them to label_img. A caller who logs the embedding of a GPU batch passes GPU
#      images, so the cat mixes devices. The reporter worked around it by passing CPU images; the
#      maintainer then dropped the padding trick, and make_sprite turns label_img into a host
#      array first (make_np) before it builds the grid; the twin inserts that host copy before the
#      concatenating line, which is marked
#      (DL202: a factory without device= meeting a tensor argument).
import math
import os
import tempfile

import torch
import torch.nn as nn


def make_grid(images, nrow):
    n, c, h, w = images.shape
    grid = images.new_zeros(c, h * nrow, w * nrow)
    for i in range(n):
        r, q = divmod(i, nrow)
        grid[:, r * h:(r + 1) * h, q * w:(q + 1) * w] = images[i]
    return grid


def make_sprite(label_img, save_path):
    nrow = int(math.ceil(label_img.size(0) ** 0.5))
    label_img = torch.cat((label_img, torch.randn(nrow ** 2 - label_img.size(0), *label_img.size()[1:]) * 255), 0)  # expect: DL202
    grid = make_grid(label_img, nrow)
    torch.save(grid, os.path.join(save_path, "sprite.pt"))


class SummaryWriter:
    def __init__(self, log_dir):
        self.log_dir = log_dir

    def add_embedding(self, mat, label_img=None, tag="default"):
        save_path = os.path.join(self.log_dir, tag)
        os.makedirs(save_path, exist_ok=True)
        if label_img is not None:
            make_sprite(label_img, save_path)
        torch.save(mat.detach().cpu(), os.path.join(save_path, "tensors.pt"))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8, 16)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Encoder().to(device)
    images = torch.rand(10, 1, 28, 28).to(device)
    with torch.no_grad():
        features = model(images)
    writer = SummaryWriter(tempfile.mkdtemp())
    writer.add_embedding(features, label_img=images)
    print(sorted(os.listdir(os.path.join(writer.log_dir, "default"))))
