# source: https://github.com/ShuweiShao/AF-SfMLearner/issues/39
# error: (issue, in Chinese: evaluating on the CPU, the error is reported at evaluate(options.parse()) and
#        encoder.cuda()) "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU
#        and installed a driver ..."
# bug: options.py (MonodepthOptions) offers --no_cuda ("if set disables CUDA"), but evaluate_depth.py's evaluate() never
#      reads it: after loading the weights it calls encoder.cuda(), depth_decoder.cuda() and moves every batch with
#      .cuda(), so the evaluation cannot run without a GPU. The reporter names encoder.cuda() as the failing line,
#      which is marked (DL302, the closest: a hard-coded CUDA move in a program whose options offer a CPU run). The
#      maintainer's answer is only "remove the .cuda()"; the stored evaluate_depth.py keeps the .cuda() calls, so
#      there is no twin. torch.load of the weights (no map_location) is kept as upstream and not marked: the
#      reporter's run got past it. Reductions: the ResNet encoder and the depth decoder are small conv stacks with the
#      same constructor arguments and output dict; the SCARED data set is random images with a [("color", 0, 0)] key;
#      the weights are written by a CPU run first; ground-truth depths are random; cv2 resizing and the benchmark /
#      external-disparity branches are dropped. Needs NumPy (upstream imports it; absent on this machine).
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


# --- options.py ---
class MonodepthOptions:
    def __init__(self):
        self.parser = argparse.ArgumentParser(description="Monodepthv2 options")
        self.parser.add_argument("--num_layers", type=int, default=18)
        self.parser.add_argument("--min_depth", type=float, default=0.1)
        self.parser.add_argument("--max_depth", type=float, default=150.0)
        self.parser.add_argument("--no_cuda", help="if set disables CUDA", action="store_true")
        self.parser.add_argument("--num_workers", type=int, default=0)
        self.parser.add_argument("--load_weights_folder", type=str, default=None)
        self.parser.add_argument("--eval_mono", action="store_true")
        self.parser.add_argument("--post_process", action="store_true")

    def parse(self):
        self.options = self.parser.parse_args()
        return self.options


# --- layers.py ---
def disp_to_depth(disp, min_depth, max_depth):
    min_disp = 1 / max_depth
    max_disp = 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    depth = 1 / scaled_disp
    return scaled_disp, depth


# --- networks/resnet_encoder.py, networks/depth_decoder.py ---
class ResnetEncoder(nn.Module):
    def __init__(self, num_layers, pretrained):
        super().__init__()
        self.num_ch_enc = [8, 16]
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)

    def forward(self, input_image):
        f1 = torch.relu(self.conv1(input_image))
        return [f1, torch.relu(self.conv2(f1))]


class DepthDecoder(nn.Module):
    def __init__(self, num_ch_enc, scales=range(4)):
        super().__init__()
        self.scales = scales
        self.dispconv = nn.Conv2d(num_ch_enc[-1], 1, 3, padding=1)

    def forward(self, input_features):
        x = input_features[-1]
        outputs = {}
        for s in self.scales:
            outputs[("disp", s)] = torch.sigmoid(nn.functional.interpolate(self.dispconv(x), scale_factor=4.0 / 2 ** s))
        return outputs


# --- datasets/scared_dataset.py ---
class SCAREDRAWDataset(Dataset):
    def __init__(self, data_path, filenames, height, width, frame_idxs, num_scales, is_train=False):
        self.filenames, self.height, self.width = filenames, height, width

    def __len__(self):
        return len(self.filenames)

    def __getitem__(self, index):
        return {("color", 0, 0): torch.rand(3, self.height, self.width)}


# --- evaluate_depth.py ---
def compute_errors(gt, pred):
    thresh = np.maximum((gt / pred), (pred / gt))
    a1 = (thresh < 1.25).mean()
    abs_rel = np.mean(np.abs(gt - pred) / gt)
    rmse = np.sqrt(((gt - pred) ** 2).mean())
    return abs_rel, rmse, a1


def evaluate(opt):
    MIN_DEPTH = 1e-3
    MAX_DEPTH = 150

    filenames = ["frame{:03d}".format(i) for i in range(8)]
    encoder_path = os.path.join(opt.load_weights_folder, "encoder.pth")
    decoder_path = os.path.join(opt.load_weights_folder, "depth.pth")

    encoder_dict = torch.load(encoder_path)

    dataset = SCAREDRAWDataset(None, filenames, encoder_dict['height'], encoder_dict['width'], [0], 4, is_train=False)
    dataloader = DataLoader(dataset, 16, shuffle=False, num_workers=opt.num_workers, pin_memory=True, drop_last=False)

    encoder = ResnetEncoder(opt.num_layers, False)
    depth_decoder = DepthDecoder(encoder.num_ch_enc, scales=range(4))

    model_dict = encoder.state_dict()
    encoder.load_state_dict({k: v for k, v in encoder_dict.items() if k in model_dict})
    depth_decoder.load_state_dict(torch.load(decoder_path))

    encoder.cuda()  # expect: DL302
    encoder.eval()
    depth_decoder.cuda()
    depth_decoder.eval()

    pred_disps = []
    with torch.no_grad():
        for data in dataloader:
            input_color = data[("color", 0, 0)].cuda()
            output = depth_decoder(encoder(input_color))
            pred_disp, _ = disp_to_depth(output[("disp", 0)], opt.min_depth, opt.max_depth)
            pred_disp = pred_disp.cpu()[:, 0].numpy()
            pred_disps.append(pred_disp)
    pred_disps = np.concatenate(pred_disps)

    errors = []
    for i in range(pred_disps.shape[0]):
        gt_depth = np.random.uniform(1.0, 50.0, pred_disps[i].shape)
        pred_depth = 1 / pred_disps[i]
        mask = np.logical_and(gt_depth > MIN_DEPTH, gt_depth < MAX_DEPTH)
        pred_depth, gt_depth = pred_depth[mask], gt_depth[mask]
        pred_depth *= np.median(gt_depth) / np.median(pred_depth)
        errors.append(compute_errors(gt_depth, pred_depth))
    print("abs_rel | rmse | a1", np.array(errors).mean(0))


def write_weights(folder):
    encoder = ResnetEncoder(18, False)
    to_save = encoder.state_dict()
    to_save['height'], to_save['width'] = 64, 80
    torch.save(to_save, os.path.join(folder, "encoder.pth"))
    torch.save(DepthDecoder(encoder.num_ch_enc, scales=range(4)).state_dict(), os.path.join(folder, "depth.pth"))


if __name__ == "__main__":
    options = MonodepthOptions()
    opt = options.parse()
    if opt.load_weights_folder is None:
        opt.load_weights_folder = tempfile.mkdtemp()
        write_weights(opt.load_weights_folder)
    evaluate(opt)
