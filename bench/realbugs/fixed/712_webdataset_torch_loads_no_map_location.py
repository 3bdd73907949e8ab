# source: https://github.com/webdataset/webdataset/pull/408
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess (tensors saved from the GPU are restored onto it inside DataLoader workers)
# bug: the sample decoder for ".pth" fields calls torch.load on the raw bytes without map_location, so a
#      tensor that was written from the GPU is restored onto that GPU, inside whatever worker process or
#      thread is decoding; in forked DataLoader workers of a process that already uses CUDA this fails,
#      and otherwise every worker allocates on the saving GPU. The fix (commit c17ea78) passes
#      map_location='cpu' (DL301).
import io

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


def torch_loads(data: bytes):
    stream = io.BytesIO(data)
    return torch.load(stream, weights_only=True, map_location="cpu")


def torch_dumps(obj) -> bytes:
    stream = io.BytesIO()
    torch.save(obj, stream)
    return stream.getvalue()


class ShardDataset(IterableDataset):
    def __init__(self, samples):
        self.samples = samples

    def __iter__(self):
        info = get_worker_info()
        start, step = (info.id, info.num_workers) if info else (0, 1)
        for sample in self.samples[start::step]:
            yield {key: torch_loads(value) if key.endswith(".pth") else value for key, value in sample.items()}


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    features = [torch.randn(8, device=device) for _ in range(8)]
    samples = [{"__key__": str(i), "feat.pth": torch_dumps(f)} for i, f in enumerate(features)]
    loader = DataLoader(ShardDataset(samples), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch["feat.pth"].shape, batch["feat.pth"].device)
