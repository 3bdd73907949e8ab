# source: https://github.com/rapidsai/cugraph/issues/3070
# fixed twin: the empty tensor that adopts the rows' storage is made on their device (device=row.device), as the issue proposes.
import torch


def edge_tensor_tuple_to_coo(tensor_tuple):
    row, col = tensor_tuple
    if row.untyped_storage().data_ptr() == col.untyped_storage().data_ptr() and \
            col.storage_offset() == row.storage_offset() + row.numel():
        # Do not copy if the two rows are contiguous in memory:
        out = torch.empty(0, dtype=row.dtype, device=row.device)
        out.set_(row.untyped_storage(), storage_offset=row.storage_offset(),
                 size=(row.numel() + col.numel(),))
        return out.view(2, -1)
    return torch.stack(tensor_tuple)


class FeatureGraphStore:
    """A backend-like store that keeps its edge index as one [2, E] tensor on its device."""

    def __init__(self, device):
        self.device = device
        self._edges = {}

    def put_edge_index(self, edge_type, edge_index):
        self._edges[edge_type] = edge_index.to(self.device).contiguous()

    def get_edge_index(self, edge_type):
        ei = self._edges[edge_type]
        return edge_tensor_tuple_to_coo((ei[0], ei[1]))


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    store = FeatureGraphStore(device)
    store.put_edge_index(("paper", "cites", "paper"), torch.randint(0, 50, (2, 200)))
    edge_index = store.get_edge_index(("paper", "cites", "paper"))
    print(edge_index.shape, edge_index.device)
