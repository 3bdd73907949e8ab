# source: https://github.com/gonglixue/LaplacianLoss-pytorch/issues/2
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
#        (when checking argument for argument weight in method wrapper_thnn_conv2d_forward)
# bug: the Laplacian-pyramid demo builds its Gaussian kernel with a `cuda` flag that moves only the kernel; the image
#      it reads is made into a tensor on the host and is never moved, so turning the flag on (as the report does to
#      run on CUDA) convolves a CPU image with a CUDA kernel. No fix was given (the issue is open), so there is no
#      twin; the convolution the traceback points to is marked (DL201: operands on different devices).
import torch
import torch.nn.functional as F


def pyr_downsample(x):
    return x[:, :, ::2, ::2]


def pyr_upsample(x, kernel, op0, op1):
    n_channels = kernel.shape[0]
    return F.conv_transpose2d(x, kernel, groups=n_channels, stride=2, padding=2, output_padding=(op0, op1))


def gauss_kernel5(channels=3, cuda=True):
    row = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0])
    kernel = torch.outer(row, row) / 256.0
    kernel = kernel.repeat(channels, 1, 1, 1)
    if cuda:
        kernel = kernel.cuda()
    return kernel


def conv_gauss(img, kernel):
    n_channels, _, kw, kh = kernel.shape
    img = F.pad(img, (kw // 2, kh // 2, kw // 2, kh // 2), mode="replicate")
    return F.conv2d(img, kernel, groups=n_channels)  # expect: DL201


def laplacian_pyramid_expand(img, kernel, max_levels=5):
    current = img
    pyr = []
    for _ in range(max_levels):
        filtered = conv_gauss(current, kernel)
        down = pyr_downsample(filtered)
        up = pyr_upsample(down, 4 * kernel, 1 - filtered.size(2) % 2, 1 - filtered.size(3) % 2)
        pyr.append(current - up)
        current = down
    return pyr


class LapLoss(torch.nn.Module):
    def __init__(self, max_levels=5):
        super().__init__()
        self.max_levels = max_levels
        self._gauss_kernel = None

    def forward(self, input, target):
        if self._gauss_kernel is None or self._gauss_kernel.shape[1] != input.shape[1]:
            self._gauss_kernel = gauss_kernel5(input.shape[1], cuda=input.is_cuda)
        pyr_input = laplacian_pyramid_expand(input, self._gauss_kernel, self.max_levels)
        pyr_target = laplacian_pyramid_expand(target, self._gauss_kernel, self.max_levels)
        weights = [1, 2, 4, 8, 16]
        return sum(weights[i] * F.l1_loss(a, b) for i, (a, b) in enumerate(zip(pyr_input, pyr_target)))


def read_image(h=64, w=64):
    """Stands in for cv2.imread + np.float32(img).transpose(2, 0, 1): an HWC host image made CHW."""
    return (torch.rand(h, w, 3) * 255).permute(2, 0, 1).contiguous()


if __name__ == "__main__":
    cuda = torch.cuda.is_available()
    img = read_image().unsqueeze(0)
    kernel = gauss_kernel5(channels=3, cuda=cuda)
    pyramids = laplacian_pyramid_expand(img, kernel)
    for i, pyr in enumerate(pyramids):
        test = (pyr[0].permute(1, 2, 0) + 127).clamp(0, 255).to(torch.uint8)
        print(i, tuple(test.shape))
