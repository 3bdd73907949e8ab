# source: https://github.com/xuelunshen/rfnet/issues/23
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
#        (example.py -> RFNetSO.detectAndCompute -> inference -> RFDetModule.process, at the F.conv2d with the
#        Gaussian kernel psf)
# bug: example.py moves the whole RFNetSO to the GPU and detectAndCompute moves the image there, so the score map
#      im1w_score that RFDetModule.process smooths is a GPU tensor. The Gaussian kernel comes from
#      get_gauss_filter_weight, which builds it with host torch factories, and process wraps it with
#      im1w_score.new_tensor(kernel): from pytorch PR #41984 until PR #144958 (2025; see pytorch issue #73838, shown on
#      1.10) Tensor.new_tensor given a tensor kept that tensor's device instead of the receiver's, so psf stays on the
#      CPU and F.conv2d meets a GPU input with a CPU weight. The issue is open with no answer; the marker is on the
#      conv2d the traceback points to (DL201, the closest rule: the operands of one op on two devices; the host kernel
#      is made by the project's own helper and handed on through new_tensor). Copies of this module in other
#      repositories write get_gauss_filter_weight(...).to(im1w_score.device). Where PR #144958 is in (torch 2.13 here) new_tensor follows
#      the receiver again and this file runs on a GPU too. Reductions: skimage reading/rescaling is a random image, the
#      descriptor network and patch cropping are a small stand-in, the checkpoint restore is left out, the example's
#      hard-coded torch.device("cuda") falls back to the CPU when no GPU is present.
import torch
import torch.nn as nn
import torch.nn.functional as F


def filter_border(imscore, radius=8):
    mask = torch.zeros_like(imscore)
    mask[:, radius:-radius, radius:-radius, :] = 1
    return imscore * mask


def nms(input, thresh=0.0, ksize=5):
    pooled = F.max_pool2d(input.permute(0, 3, 1, 2), ksize, stride=1, padding=ksize // 2).permute(0, 2, 3, 1)
    return ((input == pooled) & (input > thresh)).to(input.dtype)


def topk_map(maps, k=512):
    b, h, w, _ = maps.size()
    flat = maps.view(b, -1)
    _, idx = flat.topk(k=k, dim=1)
    mask = torch.zeros_like(flat, dtype=torch.bool)
    mask.scatter_(1, idx, True)
    return mask.view(b, h, w, 1)


def get_gauss_filter_weight(ksize, sig):
    mu_x = mu_y = ksize // 2
    if sig == 0:
        psf = torch.zeros((ksize, ksize)).float()
        psf[mu_y, mu_x] = 1.0
    else:
        sig = torch.tensor(sig).float()
        x = torch.arange(ksize)[None, :].repeat(ksize, 1).float()
        y = torch.arange(ksize)[:, None].repeat(1, ksize).float()
        psf = torch.exp(-((x - mu_x) ** 2 / (2 * sig ** 2) + (y - mu_y) ** 2 / (2 * sig ** 2)))
    return psf


class RFDetModule(nn.Module):
    def __init__(self, nms_thresh, nms_ksize, topk, gauss_ksize, gauss_sigma):
        super(RFDetModule, self).__init__()
        self.NMS_THRESH = nms_thresh
        self.NMS_KSIZE = nms_ksize
        self.TOPK = topk
        self.GAUSSIAN_KSIZE = gauss_ksize
        self.GAUSSIAN_SIGMA = gauss_sigma
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv_s = nn.Conv2d(16, 1, kernel_size=1)
        self.conv_o = nn.Conv2d(16, 2, kernel_size=1)

    def process(self, im1w_score):
        im1w_score = filter_border(im1w_score)
        nms_mask = nms(im1w_score, thresh=self.NMS_THRESH, ksize=self.NMS_KSIZE)
        im1w_score = im1w_score * nms_mask
        topk_value = im1w_score
        topk_mask = topk_map(im1w_score, self.TOPK)
        im1w_score = topk_mask.to(torch.float) * im1w_score
        psf = im1w_score.new_tensor(get_gauss_filter_weight(self.GAUSSIAN_KSIZE, self.GAUSSIAN_SIGMA)[None, None, :, :])
        im1w_score = F.conv2d(input=im1w_score.permute(0, 3, 1, 2), weight=psf, stride=1, padding=self.GAUSSIAN_KSIZE // 2).permute(0, 2, 3, 1)  # expect: DL201
        im1w_score = im1w_score.clamp(min=0.0, max=1.0)
        return im1w_score, topk_mask, topk_value


class RFDetSO(RFDetModule):
    def forward(self, photos):
        h = F.leaky_relu(self.conv1(photos))
        score = torch.sigmoid(self.conv_s(h)).permute(0, 2, 3, 1)
        scale = torch.ones_like(score)
        orint = F.normalize(self.conv_o(h), dim=1).permute(0, 2, 3, 1)
        return score, scale, orint


class HardNetNeiMask(nn.Module):
    def __init__(self):
        super(HardNetNeiMask, self).__init__()
        self.fc = nn.Linear(2, 128)

    def forward(self, orint):
        return F.normalize(self.fc(orint), dim=-1)


class RFNetSO(nn.Module):
    def __init__(self, det, des, TOPK):
        super(RFNetSO, self).__init__()
        self.det = det
        self.des = des
        self.TOPK = TOPK

    def inference(self, im_data, im_info, im_raw):
        im_rawsc, im_scale, im_orint = self.det(im_data)
        im_score = self.det.process(im_rawsc)[0]
        im_topk = topk_map(im_score, self.TOPK)
        kpts = im_topk.nonzero()
        cos, sim = im_orint.squeeze(0).chunk(chunks=2, dim=-1)
        im_orint = torch.cat((cos[im_topk[0]].unsqueeze(-1), sim[im_topk[0]].unsqueeze(-1)), dim=-1)
        im_des = self.des(im_orint)
        return im_scale, kpts, im_des

    def detectAndCompute(self, im_path, device, output_size):
        img = torch.rand(output_size[0], output_size[1], 1)
        img_raw = img
        img_info = torch.tensor([1.0, 1.0])
        img = img.permute(2, 0, 1)[None, :].to(device, dtype=torch.float)
        img_info = img_info[None, :].to(device, dtype=torch.float)
        img_raw = img_raw.permute(2, 0, 1)[None, :].to(device, dtype=torch.float)
        _, kp, des = self.inference(img, img_info, img_raw)
        return kp, des, img


if __name__ == "__main__":
    torch.manual_seed(0)
    det = RFDetSO(nms_thresh=0.0, nms_ksize=5, topk=64, gauss_ksize=15, gauss_sigma=0.5)
    des = HardNetNeiMask()
    model = RFNetSO(det, des, 64)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    kp1, des1, img1 = model.detectAndCompute("img1.png", device, (60, 80))
    kp2, des2, img2 = model.detectAndCompute("img2.png", device, (60, 80))
    print(kp1.shape, des1.shape, kp2.shape, des2.shape)
