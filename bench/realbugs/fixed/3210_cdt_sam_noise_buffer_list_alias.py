# source: https://github.com/FenTechSolutions/CausalDiscoveryToolbox/pull/18
# fixed twin: commit 9397b27 (the maintainer's application of PR #18) gives SAM_generators a device argument, creates each
#             noise buffer there (th.FloatTensor(batch_size, 1).to(device)) and has run_SAM pass device=device, so the
#             later sam.to(device) leaves the buffers - and the self.noise list that aliases them - in place. (The training
#             step's autograd in-place error on current PyTorch, upstream's order, is unchanged.)
import math

import torch as th
from torch.utils.data import DataLoader


class _Settings:
    def get_default(self, device=None):
        if device is not None:
            return device
        return 'cuda:0' if th.cuda.is_available() else 'cpu'


SETTINGS = _Settings()


class CNormalized_Linear(th.nn.Module):
    def __init__(self, in_features, out_features, bias=False):
        super(CNormalized_Linear, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = th.nn.Parameter(th.Tensor(out_features, in_features))
        self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)

    def forward(self, input):
        return th.nn.functional.linear(input, self.weight.div(self.weight.pow(2).sum(0).sqrt()))


class SAM_discriminator(th.nn.Module):
    def __init__(self, sizes, zero_components=[], **kwargs):
        super(SAM_discriminator, self).__init__()
        activation_function = kwargs.get('activation_function', th.nn.ReLU)
        activation_argument = kwargs.get('activation_argument', None)
        batch_norm = kwargs.get("batch_norm", False)
        layers = []
        for i, j in zip(sizes[:-2], sizes[1:-1]):
            layers.append(th.nn.Linear(i, j))
            if batch_norm:
                layers.append(th.nn.BatchNorm1d(j))
            if activation_argument is None:
                layers.append(activation_function())
            else:
                layers.append(activation_function(activation_argument))
        layers.append(th.nn.Linear(sizes[-2], sizes[-1]))
        self.layers = th.nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class SAM_block(th.nn.Module):
    def __init__(self, sizes, zero_components=[], **kwargs):
        super(SAM_block, self).__init__()
        activation_function = kwargs.get('activation_function', th.nn.Tanh)
        batch_norm = kwargs.get("batch_norm", False)
        layers = []
        for i, j in zip(sizes[:-2], sizes[1:-1]):
            layers.append(CNormalized_Linear(i, j))
            if batch_norm:
                layers.append(th.nn.BatchNorm1d(j))
            layers.append(activation_function())
        layers.append(th.nn.Linear(sizes[-2], sizes[-1]))
        self.layers = th.nn.Sequential(*layers)
        _filter = th.ones(1, sizes[0])
        for i in zero_components:
            _filter[:, i].zero_()
        self.register_buffer('_filter', _filter)
        self.fs_filter = th.nn.Parameter(_filter.data)

    def forward(self, x):
        return self.layers(x * (self._filter *
                                self.fs_filter).expand_as(x))


class SAM_generators(th.nn.Module):
    """Ensemble of all the generators."""

    def __init__(self, data_shape, zero_components, nh=200, batch_size=-1,
                 device='cpu', **kwargs):
        super(SAM_generators, self).__init__()
        if batch_size == -1:
            batch_size = data_shape[0]
        rows, self.cols = data_shape

        self.noise = []
        for i in range(self.cols):
            pname = 'noise_{}'.format(i)
            self.register_buffer(pname, th.FloatTensor(batch_size, 1).to(device))
            self.noise.append(getattr(self, pname))
        self.blocks = th.nn.ModuleList()

        for i in range(self.cols):
            self.blocks.append(SAM_block(
                [self.cols + 1, nh, 1], zero_components[i], **kwargs))

    def forward(self, x):
        for i in self.noise:
            i.data.normal_()

        self.generated_variables = [self.blocks[i](
            th.cat([x, self.noise[i]], 1)) for i in range(self.cols)]
        return self.generated_variables


def run_SAM(df_data, skeleton=None, device=None, **kwargs):
    device = SETTINGS.get_default(device=device)
    train_epochs = kwargs.get('train_epochs', 1000)
    test_epochs = kwargs.get('test_epochs', 1000)
    batch_size = kwargs.get('batch_size', -1)
    lr_gen = kwargs.get('lr_gen', 0.1)
    lr_disc = kwargs.get('lr_disc', lr_gen)
    regul_param = kwargs.get('regul_param', 0.1)
    dnh = kwargs.get('dnh', None)

    data = df_data.float()
    if batch_size == -1:
        batch_size = data.shape[0]
    rows, cols = data.size()
    zero_components = [[i] for i in range(cols)]
    sam = SAM_generators((rows, cols), zero_components, batch_norm=True,
                         device=device, **kwargs)

    discriminator_sam = SAM_discriminator(
        [cols, dnh, dnh, 1], batch_norm=True,
        activation_function=th.nn.LeakyReLU,
        activation_argument=0.2)

    sam = sam.to(device)
    discriminator_sam = discriminator_sam.to(device)
    data = data.to(device)

    criterion = th.nn.BCEWithLogitsLoss()
    g_optimizer = th.optim.Adam(sam.parameters(), lr=lr_gen)
    d_optimizer = th.optim.Adam(discriminator_sam.parameters(), lr=lr_disc)

    true_variable = th.ones(batch_size, 1).to(device)
    false_variable = th.zeros(batch_size, 1).to(device)
    causal_filters = th.zeros(data.shape[1], data.shape[1]).to(device)

    data_iterator = DataLoader(data, batch_size=batch_size, shuffle=True)

    for epoch in range(train_epochs + test_epochs):
        for i_batch, batch in enumerate(data_iterator):
            batch_vectors = [batch[:, [i]] for i in range(cols)]
            g_optimizer.zero_grad()
            d_optimizer.zero_grad()
            generated_variables = sam(batch)
            disc_losses = []
            gen_losses = []
            for i in range(cols):
                generator_output = th.cat([v for c in [batch_vectors[: i], [
                    generated_variables[i]],
                    batch_vectors[i + 1:]] for v in c], 1)
                disc_output_detached = discriminator_sam(generator_output.detach())
                disc_output = discriminator_sam(generator_output)
                disc_losses.append(criterion(disc_output_detached, false_variable))
                gen_losses.append(criterion(disc_output, true_variable))
            true_output = discriminator_sam(batch)
            adv_loss = sum(disc_losses) / cols + criterion(true_output, true_variable)
            gen_loss = sum(gen_losses)
            adv_loss.backward()
            d_optimizer.step()
            filters = th.stack([i.fs_filter[0, :-1].abs() for i in sam.blocks], 1)
            l1_reg = regul_param * filters.sum()
            loss = gen_loss + l1_reg
            loss.backward()
            if epoch > train_epochs:
                causal_filters.add_(filters.data)
            g_optimizer.step()
    return causal_filters.div_(test_epochs).cpu()


if __name__ == "__main__":
    x = th.randn(64, 1)
    y = 2 * x + 0.1 * th.randn(64, 1)
    z = th.randn(64, 1)
    print(run_SAM(th.cat([x, y, z], 1), nh=16, dnh=16, train_epochs=3, test_epochs=2))
