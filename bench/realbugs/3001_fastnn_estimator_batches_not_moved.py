# source: https://github.com/wmyw96/FAST-NN/issues/1
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
#        (when checking argument for argument mat2 in method wrapper_mm) (python fredmd_cross.py --idx 87; the FAST
#        model fails, the statistical baselines run)
# bug: NNEstimator.single_fit_and_predict builds FactorAugmentedSparseThroughputNN and moves it to
#      "cuda" if torch.cuda.is_available(), but the batches come from a DataLoader over RegressionDataset, whose
#      __getitem__ makes CPU tensors, and train_loop (and test_loop) call the model on them without moving them.
#      The first model call in train_loop fails on a GPU machine; the reporter sees it only for the FAST model
#      because the other estimators never touch the GPU. The issue is open with no answer and the code was never
#      changed (no fix, so no twin); the cause is read from fast_nn_estimator.py and data/fast_data.py in the index.
#      The marker is on train_loop's model call, the first place the CPU batch meets the GPU model (DL203).
#      NumPy (eigsh, the dataset arrays) is replaced by torch; the data are random.
import torch
import torch.nn as nn
from collections import OrderedDict
from torch.utils.data import DataLoader, Dataset


class FactorAugmentedSparseThroughputNN(nn.Module):
    def __init__(self, p, r_bar, depth, width, dp_mat, rs_mat=None):
        super().__init__()
        self.diversified_projection = nn.Linear(p, r_bar, bias=False)
        self.diversified_projection.weight = nn.Parameter(dp_mat.t().clone(), requires_grad=False)
        if rs_mat is not None:
            self.reconstruct = nn.Linear(r_bar, p, bias=False)
            self.reconstruct.weight = nn.Parameter(rs_mat.t().clone(), requires_grad=False)
        else:
            self.reconstruct = None
        self.variable_selection = nn.Linear(p, width, bias=False)
        relu_nn = [("linear1", nn.Linear(width + r_bar, width)), ("relu1", nn.ReLU())]
        for i in range(depth - 1):
            relu_nn.append(("linear{}".format(i + 2), nn.Linear(width, width)))
            relu_nn.append(("relu{}".format(i + 2), nn.ReLU()))
        relu_nn.append(("linear{}".format(depth + 1), nn.Linear(width, 1)))
        self.relu_stack = nn.Sequential(OrderedDict(relu_nn))

    def forward(self, x, is_training=False):
        x1 = self.diversified_projection(x)
        if self.reconstruct is not None:
            x2 = self.variable_selection(x - self.reconstruct(x1))
        else:
            x2 = self.variable_selection(x)
        return self.relu_stack(torch.concat((x1, x2), -1))

    def regularization_loss(self, tau, clip=True):
        l1_penalty = torch.abs(self.variable_selection.weight) / tau
        return torch.sum(torch.clamp(l1_penalty, max=1.0))


class RegressionDataset(Dataset):
    def __init__(self, x, y):
        self.n = x.shape[0]
        self.feature = x
        self.response = y

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return (torch.tensor(self.feature[idx, :].tolist(), dtype=torch.float32),
                torch.tensor(self.response[idx, :].tolist(), dtype=torch.float32))


def calculate_predefined_matrix(unlabelled_x, r_bar):
    p = unlabelled_x.shape[1]
    cov_mat = unlabelled_x.t() @ unlabelled_x
    _, eigen_vectors = torch.linalg.eigh(cov_mat)
    dp_matrix = eigen_vectors[:, -r_bar:] / p ** 0.5
    estimate_f = unlabelled_x @ dp_matrix
    rs_matrix = torch.linalg.pinv(estimate_f.t() @ estimate_f) @ (estimate_f.t() @ unlabelled_x)
    return dp_matrix, rs_matrix


def train_loop(data_loader, model, loss_fn, optimizer, reg_lambda, reg_tau):
    loss_rec = {"l2_loss": 0.0}
    for batch, (x, y) in enumerate(data_loader):
        pred = model(x, is_training=True)  # expect: DL203
        loss = loss_fn(pred, y)
        loss_rec["l2_loss"] += loss.item()
        if reg_tau is not None:
            loss = loss + reg_lambda * model.regularization_loss(reg_tau, True)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    loss_rec["l2_loss"] /= len(data_loader)
    return loss_rec


def test_loop(data_loader, model, loss_fn, reg_lambda, reg_tau):
    loss_sum = 0
    with torch.no_grad():
        for x, y in data_loader:
            pred = model(x, is_training=False)
            loss_sum += loss_fn(pred, y).item()
    return {"l2_loss": loss_sum / len(data_loader)}


class NNEstimator:
    def __init__(self, r_bar=4):
        self.r_bar = r_bar
        self.learning_rate = 1e-3
        self.num_epoch = 5
        self.depth = 3
        self.width = 32
        self.hp_tau = 1e-1
        self.n_ensemble = 1
        self.p = None
        self.choice_lambda = [0.1, 0.01]
        self.dp_matrix = None
        self.rs_matrix = None

    def single_fit_and_predict(self, train_data_loader, valid_data_loader, test_x, reg_lambda):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        nn_model = FactorAugmentedSparseThroughputNN(p=self.p, r_bar=self.r_bar, depth=self.depth, width=self.width,
                                                     dp_mat=self.dp_matrix, rs_mat=self.rs_matrix).to(device)
        anneal_rate = (self.hp_tau * 10 - self.hp_tau) / self.num_epoch
        anneal_tau = self.hp_tau * 10
        mse_loss = nn.MSELoss()
        optimizer = torch.optim.Adam(nn_model.parameters(), lr=self.learning_rate)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.999)
        cur_valid, test_y = 1e9, None
        for epoch in range(self.num_epoch):
            anneal_tau -= anneal_rate
            train_loop(train_data_loader, nn_model, mse_loss, optimizer, reg_lambda, anneal_tau)
            scheduler.step()
            valid_losses = test_loop(valid_data_loader, nn_model, mse_loss, reg_lambda, anneal_tau)
            if valid_losses["l2_loss"] < cur_valid:
                cur_valid = valid_losses["l2_loss"]
                with torch.no_grad():
                    test_y = nn_model(test_x.float()).detach()
        return cur_valid, test_y

    def model_fit_and_predict(self, x, y, valid_x, valid_y, test_x, candidate_lambda):
        self.p = x.shape[1]
        self.dp_matrix, self.rs_matrix = calculate_predefined_matrix(x, self.r_bar)
        train_data_loader = DataLoader(RegressionDataset(x, y.reshape(-1, 1)), batch_size=x.shape[0] // 4)
        valid_data_loader = DataLoader(RegressionDataset(valid_x, valid_y.reshape(-1, 1)), batch_size=valid_x.shape[0])
        best_valid, best_lambda, test_y = 1e9, None, None
        for reg_lambda in candidate_lambda:
            valid_error, y_pred = self.single_fit_and_predict(train_data_loader, valid_data_loader, test_x, reg_lambda)
            if best_valid > valid_error:
                best_valid, best_lambda, test_y = valid_error, reg_lambda, y_pred
        return best_valid, best_lambda, test_y

    def fit_and_predict(self, x, y, valid_x, valid_y, test_x):
        best_valid, best_lambda, test_y = self.model_fit_and_predict(x, y, valid_x, valid_y, test_x, self.choice_lambda)
        print("(FAST-NN Estimator) best alpha = {}, valid mse = {}".format(best_lambda, best_valid))
        return test_y.reshape(-1)


if __name__ == "__main__":
    torch.manual_seed(4869)
    data = torch.randn(260, 21, dtype=torch.float64)
    idx = 7
    x = torch.cat([data[:, :idx], data[:, idx + 1:]], 1).float()
    y = data[:, idx].float()
    model = NNEstimator(4)
    pred = model.fit_and_predict(x[:160], y[:160], x[160:200], y[160:200], x[200:])
    print(((y[200:] - pred) ** 2).mean().item())
