# source: https://github.com/rosinality/style-based-gan-pytorch/pull/50
# error: none raised: training is slower than it should be; each .item() syncs the GPU (CPU and GPU take turns waiting)
# bug: the training loop reads the discriminator and generator losses with .item() at every
#      iteration to show them in the progress bar, forcing a host-device synchronisation per step;
#      the fix reads them less often.
import argparse

import torch
from torch import optim
from torch.autograd import grad
from tqdm import tqdm

from dataset import MultiResolutionDataset
from model import Discriminator, StyledGenerator


def train(args, dataset, generator, discriminator):
    loader = dataset.loader(args.batch)
    data_loader = iter(loader)
    pbar = tqdm(range(3_000_000))
    disc_loss_val = 0
    gen_loss_val = 0
    grad_loss_val = 0
    for i in pbar:
        discriminator.zero_grad()
        try:
            real_image = next(data_loader)
        except (OSError, StopIteration):
            data_loader = iter(loader)
            real_image = next(data_loader)
        real_image = real_image.cuda()
        real_scores = discriminator(real_image)
        real_predict = torch.nn.functional.softplus(-real_scores).mean()
        real_predict.backward(retain_graph=True)
        grad_real = grad(outputs=real_scores.sum(), inputs=real_image, create_graph=True)[0]
        grad_penalty = (grad_real.view(grad_real.size(0), -1).norm(2, dim=1) ** 2).mean()
        grad_penalty = 10 / 2 * grad_penalty
        grad_penalty.backward()
        grad_loss_val = grad_penalty.item()  # expect: DL408

        gen_in = torch.randn(args.batch, 512, device="cuda")
        fake_image = generator(gen_in)
        fake_predict = discriminator(fake_image)
        fake_predict = torch.nn.functional.softplus(fake_predict).mean()
        fake_predict.backward()
        disc_loss_val = (real_predict + fake_predict).item()  # expect: DL408
        d_optimizer.step()

        generator.zero_grad()
        predict = discriminator(generator(torch.randn(args.batch, 512, device="cuda")))
        loss = torch.nn.functional.softplus(-predict).mean()
        gen_loss_val = loss.item()  # expect: DL408
        loss.backward()
        g_optimizer.step()

        state_msg = f"G: {gen_loss_val:.3f}; D: {disc_loss_val:.3f}; Grad: {grad_loss_val:.3f}"
        pbar.set_description(state_msg)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Progressive Growing of GANs")
    parser.add_argument("path", type=str)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    generator = StyledGenerator(512).cuda()
    discriminator = Discriminator().cuda()
    g_optimizer = optim.Adam(generator.parameters(), lr=0.001, betas=(0.0, 0.99))
    d_optimizer = optim.Adam(discriminator.parameters(), lr=0.001, betas=(0.0, 0.99))
    dataset = MultiResolutionDataset(args.path)
    train(args, dataset, generator, discriminator)
