# source: https://github.com/NVIDIA-Merlin/dataloader/pull/113
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu! (when checking argument for argument tensors in method wrapper_cat)
# bug: the data loader converts ragged (list) columns into values plus offsets; the offsets are
#      the running sum of the row lengths with a leading zero. The zero is made on the loader's
#      device (one GPU per process in a multi-GPU job), but the row lengths come from the batch
#      conversion on another device (the host here), so torch.cat joins tensors from two devices.
#      The merged fix moves the running sum to the loader's device before the concatenation; the
#      changed line is marked (DL201: a concatenation of tensors on different devices).
import torch


class Loader:
    def __init__(self, rows, batch_size, device):
        self.rows = rows
        self.batch_size = batch_size
        self.device = device

    def _row_lengths_to_offsets(self, row_lengths):
        zero_value = torch.tensor([0], device=self.device, dtype=row_lengths.dtype)
        if len(row_lengths.shape) == 2:
            zero_value = zero_value.view(-1, 1)
        return torch.cat((zero_value, torch.cumsum(row_lengths, 0)))  # expect: DL201

    def _to_ragged(self, batch_rows):
        row_lengths = torch.tensor([len(r) for r in batch_rows], dtype=torch.int64)
        values = torch.tensor([v for r in batch_rows for v in r], dtype=torch.int64).to(self.device)
        return values, self._row_lengths_to_offsets(row_lengths)

    def __iter__(self):
        for start in range(0, len(self.rows), self.batch_size):
            yield self._to_ragged(self.rows[start:start + self.batch_size])


if __name__ == "__main__":
    local_rank = 1 if torch.cuda.device_count() > 1 else 0
    device = torch.device("cuda:%d" % local_rank) if torch.cuda.is_available() else torch.device("cpu")
    rows = [[1, 2, 3], [4], [5, 6], [], [7, 8, 9, 10], [11]]
    embedding = torch.nn.EmbeddingBag(16, 4, mode="sum").to(device)
    for values, offsets in Loader(rows, batch_size=3, device=device):
        print(embedding(values, offsets[:-1]).shape)
