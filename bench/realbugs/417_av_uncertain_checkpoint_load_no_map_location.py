# source: https://github.com/agaldran/a_v_uncertain/issues/8
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the prediction script picks cuda:0 or the CPU for the U-Net, but restores the released
#      checkpoint (saved from a GPU) with a plain torch.load, which tries to put its tensors back on
#      CUDA; on a CPU-only machine that fails before the device choice matters. The fix given in the
#      (closed) issue loads with map_location=torch.device('cpu').
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, padding=1)
        self.out = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        return self.out(F.relu(self.enc(x)))


def build_preds(input_im, tg_size):
    img = torch.from_numpy(input_im).float().permute(2, 0, 1).view(1, 3, *tg_size).to(device)
    with torch.no_grad():
        probas = F.softmax(model(img), dim=1)
    probas_np = probas[0].detach().cpu().numpy()
    pred_vessels = 1 - probas_np[0]
    pred_rgb = np.stack([probas_np[1], probas_np[2], probas_np[3]], axis=2)
    return pred_vessels, pred_rgb


if __name__ == "__main__":
    path_to_check_point = "models/checkpoints_uncertainty/model_final.pth.tar"
    model = UNet(4)
    checkpoint = torch.load(path_to_check_point)  # expect: DL301
    model.load_state_dict(checkpoint["state_dict"])
    print("=> loaded checkpoint '{}' (epoch {})".format(path_to_check_point, checkpoint["epoch"]))
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model.to(device)
    model.eval()
    tg_size = (512, 512)
    for i in range(3):
        pred_vessels, pred_rgb = build_preds(np.random.rand(512, 512, 3), tg_size)
