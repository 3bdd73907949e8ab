# source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/139
# error: RuntimeError (device mismatch) raised from ProxyAnchorLoss when training on CUDA with the library's trainer
#        (base.py -> trainer.train -> forward_and_backward -> calculate_loss -> maybe_get_metric_loss -> loss_funcs
#        ["metric_loss"](embeddings, labels, indices_tuple)); the reporter: "self.proxies ... doesn't move to the same
#        device as embeddings explicitly. An error will raise when I use CUDA"
# bug: the trainer picks data_device = cuda when available and moves each batch there before the trunk, and
#      BaseMetricLossFunction.forward moves the labels to the embeddings' device - but ProxyAnchorLoss keeps its
#      learnable proxies, a Parameter made in __init__, wherever the loss was built (the CPU: nothing moves the
#      loss funcs), and compute_loss's cast_types only casts them to the embeddings' dtype; the proxies then meet
#      the GPU embeddings in sim_mat. The maintainers' fix (commit 7831887, "for classification losses, the weight
#      matrix will move to the device of the embeddings", released as "fixed in dev version") makes cast_types move
#      the proxies too, self.proxies.data.to(device).type(dtype), with the device taken from the embeddings; the
#      cast line it changed is marked (DL201, the closest rule: the proxies left there meet the GPU embeddings two
#      lines on). Reductions: the reducers, recordable stats, miners and weight regularizer are reduced to a sum of
#      means and a no-op; the trunk/embedder are small linear layers on random data.
import torch


def sim_mat(x, y=None):
    if y is None:
        y = x
    return torch.matmul(x, y.t())


def logsumexp(x, keep_mask=None, add_one=True, dim=1):
    max_vals, _ = torch.max(x, dim=dim, keepdim=True)
    exp = torch.exp(x - max_vals)
    if keep_mask is not None:
        exp = exp * keep_mask
    inside_log = torch.sum(exp, dim=dim, keepdim=True)
    if add_one:
        inside_log = inside_log + torch.exp(-max_vals)
    return torch.log(inside_log) + max_vals


def convert_to_weights(indices_tuple, labels, dtype):
    weights = torch.zeros_like(labels).type(dtype)
    return weights + 1


class BaseMetricLossFunction(torch.nn.Module):
    def __init__(self, normalize_embeddings=True):
        super().__init__()
        self.normalize_embeddings = normalize_embeddings

    def forward(self, embeddings, labels, indices_tuple=None):
        labels = labels.to(embeddings.device)
        if self.normalize_embeddings:
            embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)
        self.embedding_norms = torch.norm(embeddings, p=2, dim=1)
        loss_dict = self.compute_loss(embeddings, labels, indices_tuple)
        return sum(torch.mean(v["losses"]) for v in loss_dict.values())


class ProxyAnchorLoss(BaseMetricLossFunction):
    def __init__(self, num_classes, embedding_size, margin=0.1, alpha=32, **kwargs):
        super().__init__(**kwargs)
        self.proxies = torch.nn.Parameter(torch.randn(num_classes, embedding_size))
        torch.nn.init.kaiming_normal_(self.proxies, mode='fan_out')
        self.num_classes = num_classes
        self.margin = margin
        self.alpha = alpha

    def cast_types(self, dtype):
        self.proxies.data = self.proxies.data.type(dtype)  # expect: DL201

    def compute_loss(self, embeddings, labels, indices_tuple):
        dtype = embeddings.dtype
        self.cast_types(dtype)
        miner_weights = convert_to_weights(indices_tuple, labels, dtype=dtype).unsqueeze(1)
        prox = torch.nn.functional.normalize(self.proxies, p=2, dim=1) if self.normalize_embeddings else self.proxies
        cos = sim_mat(embeddings, prox)
        pos_mask = torch.nn.functional.one_hot(labels, self.num_classes).type(dtype)
        neg_mask = 1 - pos_mask
        pos_term = logsumexp(-self.alpha * (cos - self.margin), keep_mask=pos_mask * miner_weights, add_one=True, dim=0)
        neg_term = logsumexp(self.alpha * (cos + self.margin), keep_mask=neg_mask * miner_weights, add_one=True, dim=0)
        return {"pos_loss": {"losses": pos_term.squeeze(0)}, "neg_loss": {"losses": neg_term.squeeze(0)}}


class MetricLossOnly:
    def __init__(self, models, optimizers, batch_size, loss_funcs, dataset, data_device=None):
        self.models, self.optimizers, self.loss_funcs = models, optimizers, loss_funcs
        self.batch_size, self.dataset = batch_size, dataset
        self.data_device = data_device
        self.losses = {}
        if self.data_device is None:
            self.data_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def get_trunk_output(self, data):
        return self.models["trunk"](data.to(self.data_device))

    def compute_embeddings(self, data):
        return self.models["embedder"](self.get_trunk_output(data))

    def calculate_loss(self, curr_batch):
        data, labels = curr_batch
        embeddings = self.compute_embeddings(data)
        self.losses["metric_loss"] = self.loss_funcs["metric_loss"](embeddings, labels, None)

    def train(self, num_epochs=1):
        for epoch in range(num_epochs):
            for data, labels in torch.utils.data.DataLoader(self.dataset, batch_size=self.batch_size, shuffle=True):
                for v in self.optimizers.values():
                    v.zero_grad()
                self.calculate_loss((data, labels))
                sum(self.losses.values()).backward()
                for v in self.optimizers.values():
                    v.step()
            print(epoch, float(self.losses["metric_loss"]))


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trunk = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU()).to(device)
    embedder = torch.nn.Linear(64, 16).to(device)
    loss_func = ProxyAnchorLoss(num_classes=10, embedding_size=16)
    optimizers = {"trunk_optimizer": torch.optim.Adam(trunk.parameters(), lr=1e-3),
                  "embedder_optimizer": torch.optim.Adam(embedder.parameters(), lr=1e-3),
                  "metric_loss_optimizer": torch.optim.Adam(loss_func.parameters(), lr=1e-2)}
    dataset = torch.utils.data.TensorDataset(torch.randn(128, 32), torch.randint(0, 10, (128,)))
    trainer = MetricLossOnly({"trunk": trunk, "embedder": embedder}, optimizers, 32, {"metric_loss": loss_func}, dataset)
    trainer.train(num_epochs=2)
