# source: https://github.com/Misaliet/Seamless-Satellite-image-Synthesis/issues/1
# error: RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for addmm)
# bug: the web UI builds the SPADE-style generator wrapper, which puts its networks on the GPU when GPU
#      ids are configured, and draws one latent z_sample at import time with torch.randn on the CPU; every
#      view hands that latent to the model, whose first Linear layer then multiplies a CPU matrix by CUDA
#      weights. The fix (commit 698e09c) appends .cuda() to the latent (DL203: an input never moved to
#      the model's device; the closest rule, the input here comes from a factory, not a loader).
import torch
import torch.nn as nn


class Options:
    z_dim = 16
    gpu_ids = [0] if torch.cuda.is_available() else []


class Generator(nn.Module):
    def __init__(self, z_dim, ngf=8, size=4):
        super().__init__()
        self.size, self.ngf = size, ngf
        self.fc = nn.Linear(z_dim, ngf * size * size)
        self.head = nn.Conv2d(ngf + 3, 3, 3, padding=1)

    def forward(self, seg, z):
        x = self.fc(z).view(-1, self.ngf, self.size, self.size)
        x = nn.functional.interpolate(x, size=seg.shape[-2:])
        return torch.tanh(self.head(torch.cat([x, seg], dim=1)))


class Pix2PixModel(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.netG = Generator(opt.z_dim)
        if len(opt.gpu_ids) > 0:
            self.netG.cuda()

    def forward(self, seg, z):
        if len(self.opt.gpu_ids) > 0:
            seg = seg.cuda()
        with torch.no_grad():
            return self.netG(seg, z)


def init_model():
    opt = Options()
    model = Pix2PixModel(opt)
    model.eval()
    return model, opt


model, opt = init_model()
z_sample = torch.randn(1, opt.z_dim, dtype=torch.float32).cuda()


def refresh_buffer_b(model, seg, z):
    return model(seg, z)


def index(request=None):
    seg = torch.rand(1, 3, 16, 16)
    return refresh_buffer_b(model, seg, z_sample).shape


if __name__ == "__main__":
    print(index())
