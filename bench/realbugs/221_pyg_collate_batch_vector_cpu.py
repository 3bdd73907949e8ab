# source: https://github.com/pyg-team/pytorch_geometric/issues/3213
# error: batch.x is on cuda:0 but batch.x_batch (and batch.batch) come out on cpu; later scatter/pool calls mix devices
# bug: Batch.from_data_list collates GPU node features but builds the batch-assignment vectors with
#      torch.arange / torch.tensor on the CPU (fixed in PR #3214 by taking the device of the collated values).
from collections import defaultdict
from typing import Any, List, Optional

import torch
from torch import Tensor
from torch_geometric.data.storage import NodeStorage


def cumsum(value: Tensor) -> Tensor:
    out = value.new_zeros(value.size(0) + 1)
    torch.cumsum(value, dim=0, out=out[1:])
    return out


def _collate(key: str, values: List[Any], increment: bool):
    elem = values[0]
    cat_dim = -1 if key == 'edge_index' else 0
    sizes = torch.tensor([value.size(cat_dim) for value in values])
    slices = cumsum(sizes)
    if increment and key == 'edge_index':
        incs = cumsum(torch.tensor([int(v.max()) + 1 if v.numel() > 0 else 0 for v in values[:-1]]))
        values = [value + inc.to(value.device) for value, inc in zip(values, incs)]
    else:
        incs = None
    value = torch.cat(values, dim=cat_dim)
    return value, slices, incs


def collate(cls, data_list, increment: bool = True, add_batch: bool = True,
            follow_batch: Optional[List[str]] = None):
    out = cls()
    out.stores_as(data_list[0])
    follow_batch = set(follow_batch or [])

    key_to_stores = defaultdict(list)
    for data in data_list:
        for store in data.stores:
            key_to_stores[store._key].append(store)

    slice_dict, inc_dict = defaultdict(dict), defaultdict(dict)
    for out_store in out.stores:
        stores = key_to_stores[out_store._key]
        for attr in stores[0].keys():
            values = [store[attr] for store in stores]
            value, slices, incs = _collate(attr, values, increment)
            out_store[attr] = value
            slice_dict[attr] = slices
            inc_dict[attr] = incs

            if attr in follow_batch and isinstance(slices, Tensor) and slices.dim() == 1:
                repeats = slices[1:] - slices[:-1]
                batch = torch.arange(len(values)).repeat_interleave(repeats)  # expect: DL202
                out_store[f'{attr}_batch'] = batch

        if add_batch and isinstance(stores[0], NodeStorage) and stores[0].num_nodes is not None:
            repeats = torch.tensor([store.num_nodes for store in stores])
            arange = torch.arange(len(stores))  # expect: DL202
            out_store.batch = arange.repeat_interleave(repeats)
            out_store.ptr = cumsum(repeats)

    return out, slice_dict, inc_dict


if __name__ == '__main__':
    from torch_geometric.data import Batch, Data
    data = Data()
    data.x = torch.ones((3, 3), device='cuda:0')
    batch, _, _ = collate(Batch, 3 * [data], follow_batch=['x'])
    print(batch.x.device, batch.x_batch.device)
