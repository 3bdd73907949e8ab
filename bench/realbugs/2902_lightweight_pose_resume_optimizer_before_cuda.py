# source: https://github.com/Daniil-Osokin/lightweight-human-pose-estimation.pytorch/issues/208
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (train.py --checkpoint-path ... without --weights-only; crashes at the optimizer step)
# bug: train() builds the network and its Adam optimizer on the CPU and, when continuing from a checkpoint without
#      --weights-only, calls optimizer.load_state_dict(checkpoint['optimizer']) while the parameters are still on the
#      CPU, so the restored Adam moments are cast to the CPU; only afterwards is the network moved with
#      DataParallel(net).cuda(). The first optimizer.step() on the GPU gradients mixes devices. The issue was closed
#      without a change to train.py (no fix, so no twin); the cause is read from the repository. The marker is on
#      the optimizer.step() the report points to (DL407: optimizer state restored before the model is moved).
#      Fails on a CPU-only machine at the script's own .cuda() calls.
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn import DataParallel


class PoseEstimationWithMobileNet(nn.Module):
    def __init__(self, num_refinement_stages=1, num_heatmaps=19, num_pafs=38):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.cpm = nn.Conv2d(16, 16, 3, padding=1)
        self.initial_stage = nn.Conv2d(16, num_heatmaps + num_pafs, 1)
        self.refinement_stages = nn.ModuleList(
            [nn.Conv2d(16 + num_heatmaps + num_pafs, num_heatmaps + num_pafs, 1) for _ in range(num_refinement_stages)])
        self.num_heatmaps = num_heatmaps

    def forward(self, x):
        features = self.cpm(self.model(x))
        out = self.initial_stage(features)
        outputs = [out[:, :self.num_heatmaps], out[:, self.num_heatmaps:]]
        for stage in self.refinement_stages:
            out = stage(torch.cat([features, out], dim=1))
            outputs.extend([out[:, :self.num_heatmaps], out[:, self.num_heatmaps:]])
        return outputs


def get_parameters_conv(model, name):
    return [getattr(m, name) for m in model.modules() if isinstance(m, nn.Conv2d) and getattr(m, name) is not None]


def get_parameters_bn(model, name):
    return [getattr(m, name) for m in model.modules() if isinstance(m, nn.BatchNorm2d)]


def load_state(net, checkpoint):
    net.load_state_dict(checkpoint["state_dict"])


def l2_loss(input, target, mask, batch_size):
    loss = (input - target) * mask
    return (loss * loss) / 2 / batch_size


def make_loader(n=3, batch_size=4):
    return [{"image": torch.randn(batch_size, 3, 32, 32),
             "keypoint_mask": torch.ones(batch_size, 19, 16, 16), "paf_mask": torch.ones(batch_size, 38, 16, 16),
             "keypoint_maps": torch.rand(batch_size, 19, 16, 16), "paf_maps": torch.rand(batch_size, 38, 16, 16)}
            for _ in range(n)]


def train(num_refinement_stages, base_lr, checkpoint_path, weights_only, checkpoints_folder, epochs):
    net = PoseEstimationWithMobileNet(num_refinement_stages)
    train_loader = make_loader()

    optimizer = optim.Adam([
        {"params": get_parameters_conv(net.model, "weight")},
        {"params": get_parameters_bn(net.model, "weight"), "weight_decay": 0},
        {"params": get_parameters_bn(net.model, "bias"), "lr": base_lr * 2, "weight_decay": 0},
        {"params": get_parameters_conv(net.cpm, "weight"), "lr": base_lr},
        {"params": get_parameters_conv(net.cpm, "bias"), "lr": base_lr * 2, "weight_decay": 0},
        {"params": get_parameters_conv(net.initial_stage, "weight"), "lr": base_lr},
        {"params": get_parameters_conv(net.initial_stage, "bias"), "lr": base_lr * 2, "weight_decay": 0},
        {"params": get_parameters_conv(net.refinement_stages, "weight"), "lr": base_lr * 4},
        {"params": get_parameters_conv(net.refinement_stages, "bias"), "lr": base_lr * 8, "weight_decay": 0},
    ], lr=base_lr, weight_decay=5e-4)

    num_iter = 0
    current_epoch = 0
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 200, 260], gamma=0.333)
    if checkpoint_path:
        checkpoint = torch.load(checkpoint_path)
        load_state(net, checkpoint)
        if not weights_only:
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            num_iter = checkpoint["iter"]
            current_epoch = checkpoint["current_epoch"]

    net = DataParallel(net).cuda()
    net.train()
    for epochId in range(current_epoch, epochs):
        for batch_data in train_loader:
            optimizer.zero_grad()
            images = batch_data["image"].cuda()
            keypoint_masks = batch_data["keypoint_mask"].cuda()
            paf_masks = batch_data["paf_mask"].cuda()
            keypoint_maps = batch_data["keypoint_maps"].cuda()
            paf_maps = batch_data["paf_maps"].cuda()

            stages_output = net(images)
            losses = []
            for loss_idx in range(len(stages_output) // 2):
                losses.append(l2_loss(stages_output[loss_idx * 2], keypoint_maps, keypoint_masks, images.shape[0]).sum())
                losses.append(l2_loss(stages_output[loss_idx * 2 + 1], paf_maps, paf_masks, images.shape[0]).sum())
            loss = losses[0]
            for loss_idx in range(1, len(losses)):
                loss += losses[loss_idx]
            loss.backward()
            optimizer.step()  # expect: DL407
            num_iter += 1
        scheduler.step()
        snapshot_name = "{}/checkpoint_iter_{}.pth.tar".format(checkpoints_folder, num_iter)
        torch.save({"state_dict": net.module.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "iter": num_iter, "current_epoch": epochId + 1}, snapshot_name)
        print(epochId, loss.item())
    return snapshot_name


if __name__ == "__main__":
    torch.manual_seed(0)
    checkpoints_folder = tempfile.mkdtemp()
    first = train(1, 4e-5, None, False, checkpoints_folder, epochs=1)
    train(1, 4e-5, first, False, checkpoints_folder, epochs=2)
