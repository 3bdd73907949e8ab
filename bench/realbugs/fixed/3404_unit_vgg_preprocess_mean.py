# source: https://github.com/mingyuliutw/UNIT/issues/74
# fixed twin: commit 25e99af ("Add a tutorial illustraing the usage of the software and fix pytorch 0.3 to 0.4 bugs")
#             allocates vgg_preprocess's mean with tensortype(batch.data.size()).cuda().
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


# --- networks.py ---
class VAEGen(nn.Module):
    def __init__(self, input_dim):
        super(VAEGen, self).__init__()
        self.enc = nn.Conv2d(input_dim, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, input_dim, 3, padding=1)

    def encode(self, images):
        hiddens = self.enc(images)
        noise = Variable(torch.randn(hiddens.size()).cuda(hiddens.data.get_device()))
        return hiddens, noise

    def decode(self, hiddens):
        return torch.tanh(self.dec(hiddens))


class Vgg16(nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1)
        self.conv1_2 = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=1)

    def forward(self, X):
        h = F.relu(self.conv1_1(X), inplace=True)
        h = F.relu(self.conv1_2(h), inplace=True)
        return h


# --- utils.py ---
def load_vgg16(model_dir):
    vgg = Vgg16()
    return vgg


def vgg_preprocess(batch):
    tensortype = type(batch.data)
    (r, g, b) = torch.chunk(batch, 3, dim=1)
    batch = torch.cat((b, g, r), dim=1)  # convert RGB to BGR
    batch = (batch + 1) * 255 * 0.5  # [-1, 1] -> [0, 255]
    mean = tensortype(batch.data.size()).cuda()
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch = batch.sub(Variable(mean))  # subtract mean
    return batch


# --- trainer.py ---
class UNIT_Trainer(nn.Module):
    def __init__(self, hyperparameters):
        super(UNIT_Trainer, self).__init__()
        self.gen_a = VAEGen(hyperparameters['input_dim_a'])
        self.gen_b = VAEGen(hyperparameters['input_dim_b'])
        self.instancenorm = nn.InstanceNorm2d(512, affine=False)
        self.gen_opt = torch.optim.Adam(list(self.gen_a.parameters()) + list(self.gen_b.parameters()),
                                        lr=hyperparameters['lr'])
        if 'vgg_w' in hyperparameters.keys() and hyperparameters['vgg_w'] > 0:
            self.vgg = load_vgg16(hyperparameters['vgg_model_path'] + '/models')
            self.vgg.eval()
            for param in self.vgg.parameters():
                param.requires_grad = False

    def gen_update(self, x_a, x_b, hyperparameters):
        self.gen_opt.zero_grad()
        h_a, n_a = self.gen_a.encode(x_a)
        h_b, n_b = self.gen_b.encode(x_b)
        x_ba = self.gen_a.decode(h_b + n_b)
        x_ab = self.gen_b.decode(h_a + n_a)
        self.loss_gen_vgg_a = self.compute_vgg_loss(self.vgg, x_ba, x_b) if hyperparameters['vgg_w'] > 0 else 0
        self.loss_gen_vgg_b = self.compute_vgg_loss(self.vgg, x_ab, x_a) if hyperparameters['vgg_w'] > 0 else 0
        self.loss_gen_total = hyperparameters['vgg_w'] * self.loss_gen_vgg_a + \
            hyperparameters['vgg_w'] * self.loss_gen_vgg_b
        self.loss_gen_total.backward()
        self.gen_opt.step()

    def compute_vgg_loss(self, vgg, img, target):
        img_vgg = vgg_preprocess(img)
        target_vgg = vgg_preprocess(target)
        img_fea = vgg(img_vgg)
        target_fea = vgg(target_vgg)
        return torch.mean((self.instancenorm(img_fea) - self.instancenorm(target_fea)) ** 2)


# --- train.py ---
if __name__ == "__main__":
    config = {'input_dim_a': 3, 'input_dim_b': 3, 'lr': 0.0001, 'vgg_w': 1, 'vgg_model_path': '.'}
    trainer = UNIT_Trainer(config)
    trainer.cuda()
    images_a, images_b = torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1
    images_a, images_b = images_a.cuda().detach(), images_b.cuda().detach()
    trainer.gen_update(images_a, images_b, config)
    print(trainer.loss_gen_total.item())
