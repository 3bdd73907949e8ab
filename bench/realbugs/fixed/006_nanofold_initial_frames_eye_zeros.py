# source: https://github.com/ogchen/nanofold/pull/4
# error: RuntimeError: Expected all tensors to be on the same device (identity frames on cpu, activations on cuda)
# bug: the structure module builds its initial backbone frames (identity rotations, zero
#      translations) with torch.eye / torch.zeros inside forward without a device, so on a GPU
#      the frames are CPU tensors that the CUDA layers then combine with their outputs.
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Frame:
    rotations: torch.Tensor
    translations: torch.Tensor

    @staticmethod
    def apply(frames, vectors):
        return (frames.rotations @ vectors.unsqueeze(-1)).squeeze(-1) + frames.translations


class StructureModuleLayer(nn.Module):
    def __init__(self, single_embedding_size):
        super().__init__()
        self.update = nn.Linear(single_embedding_size, single_embedding_size)
        self.backbone_update = nn.Linear(single_embedding_size, 3)

    def forward(self, single, pair, frames):
        single = single + self.update(single)
        translations = frames.translations + self.backbone_update(single)
        return single, Frame(frames.rotations, translations)


class StructureModule(nn.Module):
    def __init__(self, num_layers, single_embedding_size, pair_embedding_size):
        super().__init__()
        self.layers = nn.ModuleList([StructureModuleLayer(single_embedding_size) for _ in range(num_layers)])
        self.single_layer_norm = nn.LayerNorm(single_embedding_size)
        self.pair_layer_norm = nn.LayerNorm(pair_embedding_size)
        self.single_linear = nn.Linear(single_embedding_size, single_embedding_size)

    def forward(self, single, pair, local_coords):
        batch_dims = single.shape[:-1]
        single = self.single_linear(self.single_layer_norm(single))
        pair = self.pair_layer_norm(pair)
        frames = Frame(
            rotations=torch.eye(3, device=single.device).unsqueeze(0).repeat(*batch_dims, 1, 1),
            translations=torch.zeros(*batch_dims, 3, device=single.device),
        )
        for i, layer in enumerate(self.layers):
            single, frames = layer(single, pair, frames)
            if i < len(self.layers) - 1:
                frames.rotations = frames.rotations.detach()
        batched = Frame(frames.rotations.unsqueeze(-3), frames.translations.unsqueeze(-2))
        return Frame.apply(batched, local_coords)
