# source: https://github.com/torchfont/torchfont/pull/296
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu' (coordinate jitter of CUDA outlines with a CPU generator; with a CUDA generator the flips fail the other way round)
# bug: the random glyph-outline transforms take an optional torch.Generator but draw without saying
#      where: the flips draw their coin with torch.rand(1, generator=generator), on the host, which a
#      CUDA generator rejects; coordinate jitter draws its noise with empty_like(pts).normal_(...,
#      generator=generator), on the outline's device, which a CPU generator rejects for CUDA
#      outlines. The merged fix (commit 24af721) draws on the generator's device (the input's when
#      there is none) and moves the jitter noise to the outline's device. Both changed draws are
#      marked (DL208: a generator used to draw on another device than its own).
from typing import Optional

import torch
from torch import Tensor

MOVE, LINE, QUAD, END = 0, 1, 2, 3


def _validate_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")


def _active_pairs(types: Tensor) -> Tensor:
    return (types == LINE) | (types == QUAD)


def horizontal_flip(types: Tensor, coords: Tensor):
    flipped = coords.clone()
    flipped[..., 0::2] = -flipped[..., 0::2]
    return types, flipped


def random_horizontal_flip(types: Tensor, coords: Tensor, p: float = 0.5,
                           generator: Optional[torch.Generator] = None):
    _validate_probability(p)
    if torch.rand(1, generator=generator).item() < p:  # expect: DL208
        return horizontal_flip(types, coords)
    return types, coords


def random_coord_jitter(types: Tensor, coords: Tensor, std: float = 0.01,
                        generator: Optional[torch.Generator] = None):
    if std == 0:
        return types, coords
    active = _active_pairs(types).unsqueeze(-1).unsqueeze(-1)
    pts = coords.reshape(-1, 3, 2)
    noise = torch.empty_like(pts).normal_(std=std, generator=generator)  # expect: DL208
    return types, torch.where(active, pts + noise, pts).reshape_as(coords)


class RandomPipeline:
    def __init__(self, p_flip=0.5, jitter=0.01, generator: Optional[torch.Generator] = None):
        self.p_flip = p_flip
        self.jitter = jitter
        self.generator = generator

    def __call__(self, types: Tensor, coords: Tensor):
        types, coords = random_horizontal_flip(types, coords, self.p_flip, generator=self.generator)
        return random_coord_jitter(types, coords, self.jitter, generator=self.generator)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    types = torch.tensor([MOVE, LINE, QUAD, LINE, END], device=device)
    coords = torch.rand(5, 6, device=device)
    pipeline = RandomPipeline(generator=torch.Generator().manual_seed(0))
    out_types, out_coords = pipeline(types, coords)
    print(out_types.tolist(), tuple(out_coords.shape))
