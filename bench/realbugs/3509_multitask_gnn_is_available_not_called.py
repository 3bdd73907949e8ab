# source: https://github.com/firmenich/MultiTask-GNN/issues/3
# error: (no traceback) "all of your 'torch.cuda.is_available' need a pair of parentheses"
# bug: utils/validation.py picks the device in CrossValidation, train, test and val with
#      torch.device('cuda' if torch.cuda.is_available else 'cpu'): the function object is always truthy, so the
#      cross-validation moves the model and every batch to CUDA even on a machine without one, and the CPU fallback
#      never happens. The maintainer answered "It has been solved", but the fixing commit is not in the stored
#      snapshot (whose last commit, 86b2235 of 2020-07-28, still has all four), so there is no twin. The three
#      device choices of the functions kept here are marked (DL307). Reductions: CrossValidation keeps the KFold
#      loop, the model move, Adam and the train/val epochs (the RDKit featurisation, the scheduler, early stopping,
#      checkpointing, the test phase and the printing are dropped); myloss is upstream's NaN-masked multi-target
#      RMSE; GINet is models/gin.py's. The molecules are replaced by random torch_geometric graphs. torch_geometric
#      (vendored in the repository) and scikit-learn are imported as upstream, so the file does not run here.
import torch
import torch.nn.functional as F
from torch.nn import ReLU, Sequential as Seq, Linear
from torch.utils.data.sampler import SubsetRandomSampler
from torch_geometric.data import Data, DataLoader
from torch_geometric.nn import GINConv, global_add_pool
from sklearn.model_selection import KFold


# --- models/gin.py ---
class GINet(torch.nn.Module):
    def __init__(self, n_features, n_outputs, dim=95):
        super(GINet, self).__init__()
        nn1 = Seq(Linear(n_features, dim), ReLU(), Linear(dim, dim))
        self.conv1 = GINConv(nn1)
        self.bn1 = torch.nn.BatchNorm1d(dim)
        self.fc1 = Linear(dim, 2 * dim)
        self.fc2 = Linear(2 * dim, n_outputs)

    def forward(self, data):
        x, edge_index, batch = data.x, data.edge_index, data.batch
        x = F.relu(self.conv1(x, edge_index))
        x = self.bn1(x)
        x = global_add_pool(x, batch)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


# --- utils/validation.py ---
def isnan(x):
    return x != x


def myloss(output_vec, target_vec):
    criterion = torch.nn.MSELoss()
    mse_part = 0
    masks = dict()
    loss1 = dict()
    for x in range(0, len(target_vec)):
        masks[x] = isnan(target_vec[x])
        if target_vec[x][~masks[x]].nelement() == 0:
            loss1[x] = torch.sqrt(torch.tensor(1e-20))
            continue
        mse_part += criterion(output_vec[x][~masks[x]], target_vec[x][~masks[x]])
        loss1[x] = torch.sqrt(criterion(output_vec[x][~masks[x]], target_vec[x][~masks[x]]) + 1e-16)
    return [torch.sqrt(mse_part)] + [loss1[x] for x in range(len(target_vec))]


def CrossValidation(mymodel, X_train_all, n_splits, n_epochs, target_vec, batchs):
    cv = KFold(n_splits=n_splits)
    device = torch.device('cuda' if torch.cuda.is_available else 'cpu')  # expect: DL307
    for train_index, val_index in cv.split(X_train_all):
        model = mymodel
        model = model.to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=0)
        train_loader = DataLoader(X_train_all, batch_size=batchs, sampler=SubsetRandomSampler(train_index))
        val_loader = DataLoader(X_train_all, batch_size=batchs, sampler=SubsetRandomSampler(val_index))
        for epoch in range(1, n_epochs):
            train_loss = train(train_loader, optimizer, model, target_vec)
            val_loss = val(val_loader, model, target_vec)
            print('epoch %i: normalized train loss %0.2f val loss %0.2f' % (epoch, train_loss, val_loss))


def train(loader, optimizer, model, target_vec):
    model.train()
    device = torch.device('cuda' if torch.cuda.is_available else 'cpu')  # expect: DL307
    loss_all = 0
    for data in loader:
        data = data.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = myloss([output[:, x] for x in range(len(target_vec))],
                      [data['y%s' % x] for x in range(len(target_vec))])[0]
        loss.backward()
        loss_all += loss.item() * data.num_graphs
        optimizer.step()
    return loss_all / len(loader.dataset)


def val(loader, model, target_vec):
    model.eval()
    device = torch.device('cuda' if torch.cuda.is_available else 'cpu')  # expect: DL307
    loss_all = 0
    c = 0
    for data in loader:
        data = data.to(device)
        output = model(data)
        loss = myloss([output[:, x] for x in range(len(target_vec))],
                      [data['y%s' % x] for x in range(len(target_vec))])[0]
        loss_all += loss.item() * data.num_graphs
        c += data.y0.size(0)
    return loss_all / c


# --- main.py (driver) ---
if __name__ == '__main__':
    n_features, target_list = 8, [0, 1]
    graphs = []
    for i in range(20):
        n = 5 + i % 4
        edge_index = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
        graphs.append(Data(x=torch.randn(n, n_features), edge_index=edge_index,
                           y0=torch.randn(1), y1=torch.randn(1)))
    model0 = GINet(n_features, n_outputs=len(target_list), dim=16)
    CrossValidation(model0, graphs, n_splits=2, n_epochs=3, target_vec=target_list, batchs=4)
