# source: https://github.com/torchfont/torchfont/pull/296
# fixed twin: draws are made on the generator's device (the input's when no generator is given), and the jitter noise is then moved to the outline's device (PR 296, commit 24af721).
from typing import Optional

import torch
from torch import Tensor

MOVE, LINE, QUAD, END = 0, 1, 2, 3


def _validate_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")


def _active_pairs(types: Tensor) -> Tensor:
    return (types == LINE) | (types == QUAD)


def _random_device(generator: Optional[torch.Generator], fallback: Tensor) -> torch.device:
    return generator.device if generator is not None else fallback.device


def horizontal_flip(types: Tensor, coords: Tensor):
    flipped = coords.clone()
    flipped[..., 0::2] = -flipped[..., 0::2]
    return types, flipped


def random_horizontal_flip(types: Tensor, coords: Tensor, p: float = 0.5,
                           generator: Optional[torch.Generator] = None):
    _validate_probability(p)
    if torch.rand(1, device=_random_device(generator, coords), generator=generator).item() < p:
        return horizontal_flip(types, coords)
    return types, coords


def random_coord_jitter(types: Tensor, coords: Tensor, std: float = 0.01,
                        generator: Optional[torch.Generator] = None):
    if std == 0:
        return types, coords
    active = _active_pairs(types).unsqueeze(-1).unsqueeze(-1)
    pts = coords.reshape(-1, 3, 2)
    noise = torch.empty(pts.shape, dtype=pts.dtype,
                        device=_random_device(generator, coords)).normal_(std=std, generator=generator)
    noise = noise.to(device=coords.device)
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
