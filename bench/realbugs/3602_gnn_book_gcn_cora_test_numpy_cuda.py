# source: https://github.com/FighterLYL/GraphNeuralNetwork/issues/1
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: chapter5/GCN_Cora.ipynb (the book's GCN on Cora) puts the model, the features, the labels, the masks and the
#      sparse adjacency on device = "cuda" when one is available; test(mask) runs the model and returns
#      test_mask_logits.numpy() and tensor_y[mask].numpy(), both CUDA tensors on a GPU machine, so the first test()
#      call from train() fails. The fix (commit 18994ce "Fixes #1") adds .cpu() before both .numpy() calls on that
#      return line, which is marked (DL204). Kept at module level as the notebook has it. Reductions: CoraData's
#      download, parsing and pickle cache of the Planetoid files are replaced by a small random graph built with NumPy
#      and SciPy in the same Data layout (x, y, adjacency as a coo_matrix, the three masks), its normalization kept;
#      2708/1433 become 60/20; GraphConvolution's __repr__, the plot cell and the epoch count of
#      200 (here 3) are cut. NumPy and SciPy are imported as upstream (absent here), so the file does not run on this
#      machine.
from collections import namedtuple

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
import torch.optim as optim

Data = namedtuple('Data', ['x', 'y', 'adjacency',
                           'train_mask', 'val_mask', 'test_mask'])


class CoraData(object):
    def __init__(self, num_nodes=60, num_features=20, num_classes=7):
        """stands for the Planetoid download and parsing: the same Data fields, from a random graph"""
        x = np.random.rand(num_nodes, num_features).astype(np.float32)
        y = np.random.randint(0, num_classes, num_nodes)
        edge_index = np.random.randint(0, num_nodes, (2, num_nodes * 3))
        adjacency = sp.coo_matrix((np.ones(edge_index.shape[1]), (edge_index[0], edge_index[1])),
                                  shape=(num_nodes, num_nodes), dtype="float32")
        train_mask = np.zeros(num_nodes, dtype=bool)
        val_mask = np.zeros(num_nodes, dtype=bool)
        test_mask = np.zeros(num_nodes, dtype=bool)
        train_mask[:20], val_mask[20:40], test_mask[40:] = True, True, True
        self._data = Data(x=x, y=y, adjacency=adjacency,
                          train_mask=train_mask, val_mask=val_mask, test_mask=test_mask)

    @property
    def data(self):
        return self._data

    @staticmethod
    def normalization(adjacency):
        """L=D^-0.5 * (A+I) * D^-0.5"""
        adjacency += sp.eye(adjacency.shape[0])
        degree = np.array(adjacency.sum(1))
        d_hat = sp.diags(np.power(degree, -0.5).flatten())
        return d_hat.dot(adjacency).dot(d_hat).tocoo()


class GraphConvolution(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=True):
        super(GraphConvolution, self).__init__()
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.use_bias = use_bias
        self.weight = nn.Parameter(torch.Tensor(input_dim, output_dim))
        if self.use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight)
        if self.use_bias:
            init.zeros_(self.bias)

    def forward(self, adjacency, input_feature):
        support = torch.mm(input_feature, self.weight)
        output = torch.sparse.mm(adjacency, support)
        if self.use_bias:
            output += self.bias
        return output


class GcnNet(nn.Module):
    def __init__(self, input_dim=20):
        super(GcnNet, self).__init__()
        self.gcn1 = GraphConvolution(input_dim, 16)
        self.gcn2 = GraphConvolution(16, 7)

    def forward(self, adjacency, feature):
        h = F.relu(self.gcn1(adjacency, feature))
        logits = self.gcn2(adjacency, h)
        return logits


learning_rate = 0.1
weight_decay = 5e-4
epochs = 3

device = "cuda" if torch.cuda.is_available() else "cpu"
model = GcnNet().to(device)
criterion = nn.CrossEntropyLoss().to(device)
optimizer = optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)

dataset = CoraData().data
x = dataset.x / dataset.x.sum(1, keepdims=True)
tensor_x = torch.from_numpy(x).to(device)
tensor_y = torch.from_numpy(dataset.y).to(device)
tensor_train_mask = torch.from_numpy(dataset.train_mask).to(device)
tensor_val_mask = torch.from_numpy(dataset.val_mask).to(device)
tensor_test_mask = torch.from_numpy(dataset.test_mask).to(device)
normalize_adjacency = CoraData.normalization(dataset.adjacency)
indices = torch.from_numpy(np.asarray([normalize_adjacency.row,
                                       normalize_adjacency.col])).long()
values = torch.from_numpy(normalize_adjacency.data.astype(np.float32))
tensor_adjacency = torch.sparse.FloatTensor(indices, values,
                                            (60, 60)).to(device)


def train():
    loss_history = []
    val_acc_history = []
    model.train()
    train_y = tensor_y[tensor_train_mask]
    for epoch in range(epochs):
        logits = model(tensor_adjacency, tensor_x)
        train_mask_logits = logits[tensor_train_mask]
        loss = criterion(train_mask_logits, train_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_acc, _, _ = test(tensor_train_mask)
        val_acc, _, _ = test(tensor_val_mask)
        loss_history.append(loss.item())
        val_acc_history.append(val_acc.item())
        print("Epoch {:03d}: Loss {:.4f}, TrainAcc {:.4}, ValAcc {:.4f}".format(
            epoch, loss.item(), train_acc.item(), val_acc.item()))

    return loss_history, val_acc_history


def test(mask):
    model.eval()
    with torch.no_grad():
        logits = model(tensor_adjacency, tensor_x)
        test_mask_logits = logits[mask]
        predict_y = test_mask_logits.max(1)[1]
        accuarcy = torch.eq(predict_y, tensor_y[mask]).float().mean()
    return accuarcy, test_mask_logits.numpy(), tensor_y[mask].numpy()  # expect: DL204


loss, val_acc = train()
test_acc, test_logits, test_label = test(tensor_test_mask)
print("Test accuarcy: ", test_acc.item())
