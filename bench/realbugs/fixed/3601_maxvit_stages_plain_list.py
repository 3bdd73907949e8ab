# source: https://github.com/ChristophReich1996/MaxViT/issues/4
# fixed twin: commit 0ce1387 ("Fix device problem") collects the stages in a local list and registers them with
#             self.stages = nn.ModuleList(stages).
from typing import Tuple, Type

import torch
import torch.nn as nn


# --- maxvit/maxvit.py ---
class MBConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, downscale: bool = False,
                 act_layer: Type[nn.Module] = nn.GELU, norm_layer: Type[nn.Module] = nn.BatchNorm2d) -> None:
        super(MBConv, self).__init__()
        if not downscale:
            assert in_channels == out_channels, "If downscaling is utilized input and output channels must be equal."
        # Make main path (a strided 3 X 3 conv. + act. stands in for timm's DepthwiseSeparableConv and SqueezeExcite)
        self.main_path = nn.Sequential(
            norm_layer(in_channels),
            nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=(3, 3),
                      stride=2 if downscale else 1, padding=(1, 1)),
            act_layer(),
            nn.Conv2d(in_channels=out_channels, out_channels=out_channels, kernel_size=(1, 1))
        )
        # Make skip path
        self.skip_path = nn.Sequential(
            nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2)),
            nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=(1, 1))
        ) if downscale else nn.Identity()

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        output = self.main_path(input)
        output = output + self.skip_path(input)
        return output


class MaxViTBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, downscale: bool = False,
                 act_layer: Type[nn.Module] = nn.GELU, norm_layer: Type[nn.Module] = nn.BatchNorm2d) -> None:
        super(MaxViTBlock, self).__init__()
        self.mb_conv = MBConv(
            in_channels=in_channels,
            out_channels=out_channels,
            downscale=downscale,
            act_layer=act_layer,
            norm_layer=norm_layer,
        )

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        output = self.mb_conv(input)
        return output


class MaxViTStage(nn.Module):
    def __init__(self, depth: int, in_channels: int, out_channels: int,
                 act_layer: Type[nn.Module] = nn.GELU, norm_layer: Type[nn.Module] = nn.BatchNorm2d) -> None:
        super(MaxViTStage, self).__init__()
        self.blocks = nn.Sequential(*[
            MaxViTBlock(
                in_channels=in_channels if index == 0 else out_channels,
                out_channels=out_channels,
                downscale=index == 0,
                act_layer=act_layer,
                norm_layer=norm_layer,
            )
            for index in range(depth)
        ])

    def forward(self, input=torch.Tensor) -> torch.Tensor:
        output = self.blocks(input)
        return output


class MaxViT(nn.Module):
    def __init__(self, in_channels: int = 3, depths: Tuple[int, ...] = (2, 2, 5, 2),
                 channels: Tuple[int, ...] = (64, 128, 256, 512), num_classes: int = 1000, embed_dim: int = 64,
                 act_layer=nn.GELU, norm_layer=nn.BatchNorm2d, global_pool: str = "avg") -> None:
        super(MaxViT, self).__init__()
        assert len(depths) == len(channels), "For each stage a channel dimension must be given."
        assert global_pool in ["avg", "max"], f"Only avg and max is supported but {global_pool} is given"
        self.num_classes: int = num_classes
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels=in_channels, out_channels=embed_dim, kernel_size=(3, 3), stride=(2, 2),
                      padding=(1, 1)),
            act_layer(),
            nn.Conv2d(in_channels=embed_dim, out_channels=embed_dim, kernel_size=(3, 3), stride=(1, 1),
                      padding=(1, 1)),
            act_layer(),
        )
        stages = []
        for index, (depth, channel) in enumerate(zip(depths, channels)):
            stages.append(
                MaxViTStage(
                    depth=depth,
                    in_channels=embed_dim if index == 0 else channels[index - 1],
                    out_channels=channel,
                    act_layer=act_layer,
                    norm_layer=norm_layer,
                )
            )
        self.stages = nn.ModuleList(stages)
        self.global_pool: str = global_pool
        self.head = nn.Linear(channels[-1], num_classes)

    def forward_features(self, input: torch.Tensor) -> torch.Tensor:
        output = input
        for stage in self.stages:
            output = stage(output)
        return output

    def forward_head(self, input: torch.Tensor, pre_logits: bool = False):
        if self.global_pool == "avg":
            input = input.mean(dim=(2, 3))
        elif self.global_pool == "max":
            input = torch.amax(input, dim=(2, 3))
        return input if pre_logits else self.head(input)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        output = self.forward_features(self.stem(input))
        output = self.forward_head(output)
        return output


def max_vit_tiny_224(**kwargs) -> MaxViT:
    """ MaxViT tiny for a resolution of 224 X 224"""
    return MaxViT(depths=(2, 2, 5, 2), channels=(64, 128, 256, 512), embed_dim=64, **kwargs)


# --- the reporter's use: import the model and push it to the GPU ---
if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    network = max_vit_tiny_224(num_classes=365).to(device)
    input = torch.rand(1, 3, 224, 224).to(device)
    output = network(input)
    print(output.shape)
