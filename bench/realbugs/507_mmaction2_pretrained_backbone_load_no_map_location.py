# source: https://github.com/open-mmlab/mmaction2/pull/2254
# error: (PR motivation) without map_location every process loads the pretrained checkpoint onto cuda:0, the device it was saved from
# bug: the ResNet backbones inflate / copy torchvision or 2D weights from a pretrained checkpoint
#      read with the checkpoint loader without map_location, so the tensors are restored onto the
#      GPU they were saved on: in a multi-GPU job every rank piles them on cuda:0 (and a CPU-only
#      machine cannot read a CUDA checkpoint). The fix passes map_location='cpu'. The loader here is
#      a small stand-in for mmengine's _load_checkpoint, which calls torch.load.
import torch
import torch.nn as nn


def _load_checkpoint(filename, map_location=None):
    return torch.load(filename, map_location=map_location)


class ResNet3d(nn.Module):
    def __init__(self, pretrained=None):
        super().__init__()
        self.pretrained = pretrained
        self.conv1 = nn.Conv3d(3, 64, kernel_size=(1, 7, 7), padding=(0, 3, 3), bias=False)
        self.bn1 = nn.BatchNorm3d(64)

    def inflate_weights(self):
        state_dict_r2d = _load_checkpoint(self.pretrained)  # expect: DL301
        if "state_dict" in state_dict_r2d:
            state_dict_r2d = state_dict_r2d["state_dict"]
        w2d = state_dict_r2d["conv1.weight"]
        self.conv1.weight.data.copy_(w2d.unsqueeze(2).expand_as(self.conv1.weight) / self.conv1.weight.shape[2])
        self.bn1.load_state_dict({k[4:]: v for k, v in state_dict_r2d.items() if k.startswith("bn1.")}, strict=False)

    def forward(self, x):
        return torch.relu(self.bn1(self.conv1(x)))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    conv2d = nn.Conv2d(3, 64, 7, padding=3, bias=False).to(device)
    torch.save({"state_dict": {"conv1.weight": conv2d.weight.detach()}}, "r2d.pth")
    model = ResNet3d(pretrained="r2d.pth")
    model.inflate_weights()
    model.to(device)
    print(model(torch.randn(1, 3, 4, 32, 32, device=device)).shape)
