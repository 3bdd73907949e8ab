# source: https://github.com/eth-easl/modyn/pull/525
# fixed twin: the reset loss buffer is moved to the device given to the constructor (commit 29018c7).
import torch
import torch.nn as nn


class IrreducibleLossProducer:
    def __init__(self, per_sample_loss, num_features, device):
        self.per_sample_loss = per_sample_loss
        self.device = device
        self.model = nn.Linear(num_features, 3).to(device)

    def get_irreducible_loss(self, sample_ids, forward_input, target):
        with torch.no_grad():
            return self.per_sample_loss(self.model(forward_input), target)


class AbstractRemoteDownsamplingStrategy:
    def __init__(self, batch_size, params_from_selector, device):
        self.batch_size = batch_size
        self.downsampling_ratio = params_from_selector["downsampling_ratio"]
        self.device = device


class RemoteRHOLossDownsampling(AbstractRemoteDownsamplingStrategy):
    def __init__(self, batch_size, params_from_selector, per_sample_loss, device):
        super().__init__(batch_size, params_from_selector, device)
        self.per_sample_loss_fct = per_sample_loss
        self.irreducible_loss_producer = IrreducibleLossProducer(per_sample_loss, params_from_selector["num_features"], device)
        self.rho_loss = torch.tensor([])
        self.number_of_points_seen = 0
        self._device = device

    def init_downsampler(self):
        self.index_sampleid_map = []
        self.rho_loss = torch.tensor([]).to(self._device)
        self.number_of_points_seen = 0

    def inform_samples(self, sample_ids, forward_input, forward_output, target):
        training_loss = self.per_sample_loss_fct(forward_output, target).detach()
        self.index_sampleid_map += sample_ids
        irreducible_loss = self.irreducible_loss_producer.get_irreducible_loss(sample_ids, forward_input, target)
        self.rho_loss = torch.cat([self.rho_loss, training_loss - irreducible_loss]).to(training_loss.dtype)
        self.number_of_points_seen += forward_output.shape[0]

    def select_points(self):
        target_size = max(int(self.downsampling_ratio * self.number_of_points_seen / 100), 1)
        selected_indices = torch.topk(self.rho_loss, target_size).indices
        selected_sample_ids = [self.index_sampleid_map[i] for i in sorted(selected_indices.tolist())]
        return selected_sample_ids, torch.ones(target_size)


def run_trigger(model, downsampler, batches, device):
    downsampler.init_downsampler()
    model.eval()
    with torch.no_grad():
        for sample_ids, data, target in batches:
            data, target = data.to(device), target.to(device)
            downsampler.inform_samples(sample_ids, data, model(data), target)
    return downsampler.select_points()


if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(5, 3).to(device)
    loss = nn.CrossEntropyLoss(reduction="none")
    downsampler = RemoteRHOLossDownsampling(4, {"downsampling_ratio": 50, "num_features": 5}, loss, device)
    batches = [(list(range(i, i + 4)), torch.randn(4, 5), torch.randint(0, 3, (4,))) for i in range(0, 12, 4)]
    print(run_trigger(model, downsampler, batches, device))
