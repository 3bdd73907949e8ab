# source: https://github.com/allenai/olmoearth_pretrain/pull/536
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: training runs with CUDA as torch's default device (set by the training environment; a
#      stand-in line here), while the masking strategy works on the batch where the data loader
#      left it, on the CPU. The time-based masking draws its shuffle with torch.randperm(n) without
#      device=, so the permutation is made on the default device (CUDA) and indexes the CPU tensor
#      of non-missing timestamps. The fix (PR 536, commit 074bf76) passes device=not_missing_t.device
#      to that randperm, as every other randperm of the file already did; the randperm line is
#      marked (DL207: a CPU tensor indexed with an index on another device).
import math
import random

import torch

if torch.cuda.is_available():
    torch.set_default_device("cuda")


class RandomTimeWithDecodeMasking:
    def __init__(self, encode_ratio=0.5, random_ratio=0.25):
        self.encode_ratio = encode_ratio
        self.random_ratio = random_ratio

    def _random_mask(self, mask):
        flat = mask.flatten()
        order = torch.randperm(flat.numel(), device=mask.device)
        flat[order[: flat.numel() // 2]] = 0
        return flat.view_as(mask)

    def apply_mask(self, batch):
        masks = {}
        for name, instance in batch.items():
            device = instance.device
            masks[name] = torch.full(instance.shape[:-1], 1, device=device)
            masks[name][instance[..., 0] < -0.9] = -1
        for i in range(next(iter(batch.values())).shape[0]):
            missing_per_time = None
            for name in masks:
                not_missing = (masks[name][i] != -1).sum(dim=[0, 1])
                missing_per_time = not_missing if missing_per_time is None else missing_per_time + not_missing
                missing_per_time = torch.clamp(missing_per_time, max=1)
            if missing_per_time is None or sum(missing_per_time) <= 1 or random.random() < self.random_ratio:
                for name in masks:
                    masks[name][i] = self._random_mask(masks[name][i])
                continue
            not_missing_t = torch.argwhere(missing_per_time)[:, 0]
            not_missing_t = not_missing_t[torch.randperm(len(not_missing_t))]  # expect: DL207
            num_encode = math.ceil(len(not_missing_t) * self.encode_ratio)
            encode_timestamps = not_missing_t[:num_encode]
            for name in masks:
                keep = torch.zeros(masks[name].shape[-1], dtype=torch.bool, device=masks[name].device)
                keep[encode_timestamps] = True
                masks[name][i][..., ~keep] = 2
        return masks


def load_batch():
    cpu = torch.device("cpu")
    return {
        "sentinel2": torch.randn(2, 4, 4, 6, 3, device=cpu),
        "landsat": torch.randn(2, 4, 4, 6, 2, device=cpu),
    }


if __name__ == "__main__":
    random.seed(1)
    masks = RandomTimeWithDecodeMasking(random_ratio=0.0).apply_mask(load_batch())
    print({k: v.shape for k, v in masks.items()})
