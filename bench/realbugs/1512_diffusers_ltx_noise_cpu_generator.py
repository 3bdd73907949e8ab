# source: https://github.com/huggingface/diffusers/pull/10535
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'
# bug: the LTX-Video image-to-video pipeline drew the noise it mixes with the encoded first frame
#      with torch.randn(shape, generator=generator, device=device): a user who seeds a CPU generator
#      (the usual way to get the same video on any GPU) and runs the pipeline on CUDA gets an error,
#      since torch.randn wants the generator on the device it draws on. The merged PR replaces the
#      call with the library's randn_tensor helper, which draws on the generator's device and moves
#      the result; the changed line is marked (DL208). The diff is not stored: the call is placed in
#      prepare_latents, where the PR description puts the pipeline's noise.
import torch
import torch.nn as nn


def randn_tensor(shape, generator=None, device=None, dtype=None):
    rand_device = device
    if generator is not None and generator.device.type != torch.device(device).type:
        rand_device = generator.device
    return torch.randn(shape, generator=generator, device=rand_device, dtype=dtype).to(device)


class TinyVAE(nn.Module):
    def __init__(self, ch=3, latent=4):
        super().__init__()
        self.enc = nn.Conv3d(ch, latent, kernel_size=(1, 4, 4), stride=(1, 4, 4))

    def encode(self, video):
        return self.enc(video)


class ImageToVideoPipeline:
    def __init__(self, vae):
        self.vae = vae
        self.device = torch.device("cpu")

    def to(self, device):
        self.device = torch.device(device)
        self.vae.to(self.device)
        return self

    def prepare_latents(self, image, num_frames, generator, device, dtype=torch.float32):
        init_latents = self.vae.encode(image.unsqueeze(2).to(device, dtype))
        init_latents = init_latents.repeat(1, 1, num_frames, 1, 1)
        shape = init_latents.shape
        conditioning_mask = torch.zeros(shape[0], 1, num_frames, 1, 1, device=device, dtype=dtype)
        conditioning_mask[:, :, 0] = 1.0
        noise = torch.randn(shape, generator=generator, device=device, dtype=dtype)  # expect: DL208
        return init_latents * conditioning_mask + noise * (1 - conditioning_mask)

    @torch.no_grad()
    def __call__(self, image, num_frames=5, generator=None):
        return self.prepare_latents(image, num_frames, generator, self.device)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pipe = ImageToVideoPipeline(TinyVAE()).to(device)
    generator = torch.Generator().manual_seed(42)
    print(pipe(torch.rand(1, 3, 16, 16), generator=generator).shape)
