"""PyTorch Geometric's data: graphs whose fields are tensors.

A dataset of ``torch_geometric.datasets`` (``AMiner(path)``, ``Planetoid(root, "Cora")``) loads
its graphs on the host, and ``torch_geometric.loader.DataLoader`` collates them there, as
torch's DataLoader does. A graph (``Data``, ``HeteroData``, ``Batch``) keeps its tensors as
fields: ``data.x``, ``data.edge_index``, ``data["author"].y_index`` (a store of a heterogeneous
graph) are tensors on the graph's device - until ``data.to(device)`` moves the whole graph.
Its API members are not tensors: counts (``num_nodes``), dictionaries (``x_dict``), the lists
of types and stores; they, and private names, stay unknown.
"""

from __future__ import annotations

from typing import Optional

from devicelint.analysis.values import CPU, Kind, Origin, Role, Value

#: classes of these namespaces are datasets of graphs on the host
DATASET_PREFIXES = ("torch_geometric.datasets.",)
#: loaders that collate graphs into a ``Batch`` on the host
LOADER_NAMES = frozenset({"torch_geometric.loader.DataLoader", "torch_geometric.loader.dataloader.DataLoader", "torch_geometric.data.DataLoader"})
#: members of Data / HeteroData / Batch and their stores that are not tensors
_API_MEMBERS = frozenset(
    "num_nodes num_edges num_node_features num_features num_edge_features num_graphs num_node_types "
    "num_edge_types node_types edge_types keys stores node_stores edge_stores node_items edge_items "
    "x_dict edge_index_dict edge_attr_dict y_dict batch_dict collect metadata is_directed is_undirected "
    "has_isolated_nodes has_self_loops is_cuda batch_size node_offsets edge_offsets".split()
)


def is_graph_dataset(qualname: str) -> bool:
    if not qualname.startswith(DATASET_PREFIXES):
        return False
    return qualname.rsplit(".", 1)[-1][:1].isupper()


def graph_dataset(origin: Origin) -> Value:
    return Value(Kind.DATASET, CPU, origin, role=Role.GRAPH_DATA)


def is_graph(value: Value) -> bool:
    return value.kind == Kind.BATCH and value.role is Role.GRAPH_DATA


def field(graph: Value, name: str) -> Optional[Value]:
    """``graph.name``: a tensor where the graph is, unless ``name`` is an API member (None)."""
    if name in _API_MEMBERS or name.startswith("_"):
        return None
    return Value(Kind.TENSOR, graph.device, graph.origin)
