# source: https://github.com/eriklindernoren/PyTorch-YOLOv3/issues/35
# fixed twin: the GPU check calls the function, cuda = torch.cuda.is_available() (commit 84f3e13).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ListDataset(Dataset):
    def __init__(self, n=8, img_size=32):
        self.n, self.img_size = n, img_size

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        img = torch.rand(3, self.img_size, self.img_size)
        targets = torch.zeros(4, 5)
        targets[0] = torch.tensor([1.0, 0.5, 0.5, 0.2, 0.2])
        return "img_%d.jpg" % index, img, targets


class Darknet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.head = nn.Conv2d(16, 5 + num_classes, 1)

    def forward(self, x):
        return self.head(self.backbone(x)).flatten(2).transpose(1, 2)


def evaluate(batch_size=4, conf_thres=0.5):
    cuda = torch.cuda.is_available()
    model = Darknet()
    if cuda:
        model = model.cuda()
    model.eval()
    dataloader = DataLoader(ListDataset(), batch_size=batch_size, shuffle=False)
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    n_detections = 0
    for batch_i, (_, imgs, targets) in enumerate(dataloader):
        imgs = imgs.type(Tensor)
        with torch.no_grad():
            outputs = model(imgs)
        n_detections += int((torch.sigmoid(outputs[..., 4]) > conf_thres).sum())
    return n_detections


if __name__ == "__main__":
    torch.manual_seed(0)
    print(evaluate())
