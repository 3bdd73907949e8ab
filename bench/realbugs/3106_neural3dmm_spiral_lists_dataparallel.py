# source: https://github.com/gbouritsas/Neural3DMM/issues/1
# error: RuntimeError during forwarding once the SpiralAutoencoder is wrapped in nn.DataParallel (train_funcs.py,
#        tx_hat = model(tx); the stored traceback is cut inside the model) - the reporter: "Because the operator
#        functions are dynamic attributes, when I use the model and convert it to nn.DataParallel, the following
#        error will arise during forwarding"
# bug: the spiral index tensors and the down/up-sampling matrices are built once on the script's device and handed
#      to SpiralAutoencoder as plain Python lists (self.spirals, self.D, self.U), and every SpiralConv keeps the
#      device it was built with (self.device) to make its batch index and padding. DataParallel's replicas copy
#      parameters and buffers to each GPU, but not plain attributes: on the replica on cuda:1 the input is on
#      cuda:1 while S[i], D[i], U[i] and torch.arange(..., device=self.device) stay on cuda:0, and the first op that
#      meets them is SpiralConv.forward's gather x[batch_index, spirals_index, :]. The issue is open and the model
#      unchanged, so there is no fix; the marker is on that gather (DL207; DL206 on the arange and the plain lists
#      are the other candidates). Reductions: the mesh sampling, the dataset and the notebook driver are random
#      stand-ins (a 32-vertex mesh, two levels), the loss is L1, saving of checkpoints and meshes is left out. The
#      nn.DataParallel wrapper is the reporter's change (applied here when more than one GPU is present).
import torch
import torch.nn as nn


class SpiralConv(nn.Module):
    def __init__(self, in_c, spiral_size, out_c, activation='elu', bias=True, device=None):
        super(SpiralConv, self).__init__()
        self.in_c = in_c
        self.out_c = out_c
        self.device = device
        self.conv = nn.Linear(in_c * spiral_size, out_c, bias=bias)
        self.activation = nn.ELU() if activation == 'elu' else (lambda x: x)

    def forward(self, x, spiral_adj):
        bsize, num_pts, feats = x.size()
        _, _, spiral_size = spiral_adj.size()
        spirals_index = spiral_adj.view(bsize * num_pts * spiral_size)
        batch_index = torch.arange(bsize, device=self.device).view(-1, 1).repeat([1, num_pts * spiral_size]).view(-1).long()
        spirals = x[batch_index, spirals_index, :].view(bsize * num_pts, spiral_size * feats)  # expect: DL207
        out_feat = self.activation(self.conv(spirals))
        out_feat = out_feat.view(bsize, num_pts, self.out_c)
        zero_padding = torch.ones((1, x.size(1), 1), device=self.device)
        zero_padding[0, -1, 0] = 0.0
        return out_feat * zero_padding


class SpiralAutoencoder(nn.Module):
    def __init__(self, filters_enc, filters_dec, latent_size, sizes, spiral_sizes, spirals, D, U, device, activation='elu'):
        super(SpiralAutoencoder, self).__init__()
        self.latent_size = latent_size
        self.sizes = sizes
        self.spirals = spirals
        self.spiral_sizes = spiral_sizes
        self.D = D
        self.U = U
        self.device = device
        self.conv = []
        input_size = filters_enc[0]
        for i in range(len(spiral_sizes) - 1):
            self.conv.append(SpiralConv(input_size, spiral_sizes[i], filters_enc[i + 1], activation=activation, device=device).to(device))
            input_size = filters_enc[i + 1]
        self.conv = nn.ModuleList(self.conv)
        self.fc_latent_enc = nn.Linear((sizes[-1] + 1) * input_size, latent_size)
        self.fc_latent_dec = nn.Linear(latent_size, (sizes[-1] + 1) * filters_dec[0])
        self.dconv = []
        input_size = filters_dec[0]
        for i in range(len(spiral_sizes) - 1):
            act = 'identity' if i == len(spiral_sizes) - 2 else activation
            self.dconv.append(SpiralConv(input_size, spiral_sizes[-2 - i], filters_dec[i + 1], activation=act, device=device).to(device))
            input_size = filters_dec[i + 1]
        self.dconv = nn.ModuleList(self.dconv)

    def encode(self, x):
        bsize = x.size(0)
        S, D = self.spirals, self.D
        for i in range(len(self.spiral_sizes) - 1):
            x = self.conv[i](x, S[i].repeat(bsize, 1, 1))
            x = torch.matmul(D[i], x)
        return self.fc_latent_enc(x.view(bsize, -1))

    def decode(self, z):
        bsize = z.size(0)
        S, U = self.spirals, self.U
        x = self.fc_latent_dec(z).view(bsize, self.sizes[-1] + 1, -1)
        for i in range(len(self.spiral_sizes) - 1):
            x = torch.matmul(U[-1 - i], x)
            x = self.dconv[i](x, S[-2 - i].repeat(bsize, 1, 1))
        return x

    def forward(self, x):
        return self.decode(self.encode(x))


def train_autoencoder_dataloader(dataloader_train, device, model, optim, loss_fn, start_epoch, n_epochs):
    for epoch in range(start_epoch, n_epochs):
        model.train()
        tloss = []
        for b, sample_dict in enumerate(dataloader_train):
            optim.zero_grad()
            tx = sample_dict['points'].to(device)
            tx_hat = model(tx)
            loss = loss_fn(tx, tx_hat)
            loss.backward()
            optim.step()
            tloss.append(tx.shape[0] * loss.item())
        print('epoch {0} | tr {1}'.format(epoch, sum(tloss)))


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    sizes, spiral_sizes = [32, 8, 2], [4, 4, 4]
    spirals = [torch.randint(0, n + 1, (1, n + 1, s)).to(device) for n, s in zip(sizes, spiral_sizes)]
    D = [torch.rand(sizes[i + 1] + 1, sizes[i] + 1).to(device) for i in range(2)]
    U = [torch.rand(sizes[i] + 1, sizes[i + 1] + 1).to(device) for i in range(2)]
    model = SpiralAutoencoder([3, 8, 16], [16, 8, 3], 8, sizes, spiral_sizes, spirals, D, U, device).to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    dataloader_train = [{'points': torch.randn(4, sizes[0] + 1, 3)} for _ in range(3)]
    train_autoencoder_dataloader(dataloader_train, device, model, optim, nn.L1Loss(), 0, 2)
