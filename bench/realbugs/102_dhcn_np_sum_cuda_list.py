# source: https://github.com/xiaxin1998/DHCN/issues/14
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the hypergraph convolution collects the per-layer item embeddings (GPU tensors once the model
#      is moved with trans_to_cuda) in a Python list and sums them with np.sum, which converts each
#      element to a numpy array.
import numpy as np
import torch
import torch.nn as nn
from torch.nn import Module


def trans_to_cuda(variable):
    if torch.cuda.is_available():
        return variable.cuda()
    else:
        return variable


class HyperConv(Module):
    def __init__(self, layers, emb_size=100):
        super(HyperConv, self).__init__()
        self.emb_size = emb_size
        self.layers = layers

    def forward(self, adjacency, embedding):
        values = adjacency.data
        indices = np.vstack((adjacency.row, adjacency.col))
        i = torch.LongTensor(indices)
        v = torch.FloatTensor(values)
        adjacency = torch.sparse_coo_tensor(i, v, torch.Size(adjacency.shape))
        item_embeddings = embedding
        final = [item_embeddings]
        for _ in range(self.layers):
            item_embeddings = torch.sparse.mm(trans_to_cuda(adjacency), item_embeddings)
            final.append(item_embeddings)
        item_embeddings = np.sum(final, 0)  # expect: DL204
        return item_embeddings


class DHCN(Module):
    def __init__(self, adjacency, n_node, layers, emb_size=100):
        super(DHCN, self).__init__()
        self.adjacency = adjacency
        self.embedding = nn.Embedding(n_node, emb_size)
        self.HyperGraph = HyperConv(layers)

    def forward(self, session_item):
        item_embeddings_hg = self.HyperGraph(self.adjacency, self.embedding.weight)
        return item_embeddings_hg[session_item]


def main(adjacency, n_node, sessions):
    model = trans_to_cuda(DHCN(adjacency, n_node, layers=3))
    for session_item in sessions:
        session_item = trans_to_cuda(torch.Tensor(session_item).long())
        emb = model(session_item)
        print(emb.shape)
