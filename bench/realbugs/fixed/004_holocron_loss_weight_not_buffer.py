# source: https://github.com/frgfm/holocron/pull/136
# error: (fix commit) the class weights of the loss modules stayed on the CPU after criterion.cuda() / .to(device)
# bug: the base loss turns float/list class weights into a tensor stored as a plain attribute,
#      not a buffer, so moving the criterion leaves the weights behind and the weighted loss
#      mixes a CPU weight with CUDA logits.
from typing import Any, List, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def focal_loss(x: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, reduction: str, gamma: float) -> Tensor:
    logpt = F.log_softmax(x, dim=1)
    pt = logpt.exp().gather(1, target.unsqueeze(1)).squeeze(1)
    logpt = logpt.gather(1, target.unsqueeze(1)).squeeze(1)
    loss = -1 * (1 - pt) ** gamma * logpt
    if weight is not None:
        loss = loss * weight.gather(0, target)
    return loss.mean() if reduction == "mean" else loss.sum()


class _Loss(nn.Module):
    def __init__(
        self,
        weight: Optional[Union[float, List[float], Tensor]] = None,
        ignore_index: int = -100,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        self.weight: Optional[Tensor]
        if isinstance(weight, (float, int)):
            self.register_buffer("weight", torch.Tensor([weight, 1 - weight]))
        elif isinstance(weight, list):
            self.register_buffer("weight", torch.Tensor(weight))
        elif isinstance(weight, Tensor):
            self.register_buffer("weight", weight)
        else:
            self.weight = None
        self.ignore_index = ignore_index
        self.reduction = reduction


class FocalLoss(_Loss):
    def __init__(self, gamma: float = 2.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gamma = gamma

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        return focal_loss(x, target, self.weight, self.ignore_index, self.reduction, self.gamma)
