# source: https://github.com/akanimax/pro_gan_pytorch/issues/11
# error: AttributeError: 'list' object has no attribute 'to'
# bug: the README example trains ProGAN on torchvision's CIFAR10, whose items are (image, label)
# tuples; default collation makes every batch a list [images, labels], and the trainer calls .to() on it.
import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


def get_data_loader(dataset, batch_size, num_workers):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers)


class ProGAN:
    def __init__(self, depth=7, latent_size=512, device=torch.device("cpu")):
        self.depth = depth
        self.latent_size = latent_size
        self.device = device
        self.gen = nn.Sequential(nn.Linear(latent_size, 3 * 4 * 4)).to(device)

    def optimize_generator(self, noise, real_batch):
        fake = self.gen(noise)
        return (fake.mean() - real_batch.mean()).abs()

    def train(self, dataset, epochs, batch_sizes, num_workers=3):
        for current_depth in range(self.depth):
            data = get_data_loader(dataset, batch_sizes[current_depth], num_workers)
            for epoch in range(1, epochs[current_depth] + 1):
                for (i, batch) in enumerate(data, 1):
                    images, _ = batch
                    images = images.to(self.device)
                    gan_input = torch.randn(images.shape[0], self.latent_size).to(self.device)
                    loss = self.optimize_generator(gan_input, images)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = torchvision.datasets.CIFAR10("data/cifar-10", download=True, transform=transforms.ToTensor())
    pro_gan = ProGAN(depth=4, latent_size=128, device=device)
    pro_gan.train(dataset=dataset, epochs=[10, 20, 20, 20], batch_sizes=[128, 128, 128, 64])
