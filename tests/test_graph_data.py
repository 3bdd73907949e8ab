"""PyTorch Geometric's graphs (devicelint.analysis.graphs): a dataset's or loader's graphs are
on the host, their fields are tensors there until the graph is moved, their API members are
not tensors."""

from __future__ import annotations

from conftest import lint

HEADER = '''
import torch
from torch_geometric.datasets import Planetoid
from torch_geometric.loader import DataLoader
from models import GCN

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = Planetoid("data", "Cora")
model = GCN(dataset.num_features, 16, dataset.num_classes).to(device)
'''


def findings(body: str) -> list[tuple[int, str]]:
    code = HEADER + body
    offset = HEADER.count("\n")
    return [(f.line - offset, f.code) for f in lint(code)]


def test_fields_of_a_graph_from_a_dataset_are_on_the_host():
    body = "data = dataset[0]\nout = model(data.x, data.edge_index)\n"
    assert findings(body) == [(2, "DL203")]


def test_a_store_of_a_heterogeneous_graph_is_where_the_graph_is():
    body = "data = dataset[0]\nz = model('author', batch=data['author'].y_index)\n"
    assert findings(body) == [(2, "DL203")]


def test_a_moved_graph_moves_its_fields():
    body = "data = dataset[0].to(device)\nout = model(data.x, data.edge_index)\n"
    assert findings(body) == []


def test_api_members_of_a_graph_are_not_tensors():
    body = "data = dataset[0]\nout = model(data.x.to(device), data.edge_index.to(device), data.num_nodes)\n"
    assert findings(body) == []


def test_batches_of_the_graph_loader_are_on_the_host():
    body = (
        "loader = DataLoader(dataset, batch_size=32)\n"
        "for batch in loader:\n"
        "    out = model(batch.x, batch.edge_index, batch.batch)\n"
        "for batch in loader:\n"
        "    batch = batch.to(device)\n"
        "    out = model(batch.x, batch.edge_index, batch.batch)\n"
    )
    assert findings(body) == [(3, "DL203")]
