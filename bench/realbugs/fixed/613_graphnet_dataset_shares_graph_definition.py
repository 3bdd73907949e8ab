# source: https://github.com/graphnet-team/graphnet/pull/614
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: the dataset keeps the very GraphDefinition module that the model holds as a submodule; training
#      on a GPU moves the model, and with it the shared GraphDefinition and its buffers, to CUDA, so
#      the DataLoader workers (forked) build each graph with CUDA tensors. The fix gives the dataset
#      its own deep copy, which stays on the CPU (no rule covers a module shared with a dataset;
#      DL312, about datasets that do CUDA work in their workers, is the closest).
from copy import deepcopy

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class GraphDefinition(nn.Module):
    def __init__(self, n_features=4):
        super().__init__()
        self.register_buffer("feature_scale", torch.linspace(0.5, 2.0, n_features))

    def forward(self, node_features):
        x = torch.as_tensor(node_features, dtype=torch.float32).to(self.feature_scale.device)
        return x * self.feature_scale


class PulseDataset(Dataset):
    def __init__(self, events, graph_definition):
        self._events = events
        self._graph_definition = deepcopy(graph_definition)

    def __len__(self):
        return len(self._events)

    def __getitem__(self, index):
        return self._graph_definition(self._events[index])


class StandardModel(nn.Module):
    def __init__(self, graph_definition, n_features=4):
        super().__init__()
        self._graph_definition = graph_definition
        self._gnn = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, graphs):
        return self._gnn(graphs).mean(dim=1)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    graph_definition = GraphDefinition()
    events = [torch.randn(10, 4).tolist() for _ in range(16)]
    dataset = PulseDataset(events, graph_definition)
    model = StandardModel(graph_definition).to(device)
    loader = DataLoader(dataset, batch_size=4, num_workers=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for graphs in loader:
        loss = model(graphs.to(device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())
