# source: https://github.com/plenoptic-org/plenoptic/issues/283
# error: ValueError: can't optimize a non-leaf Tensor (met.synthesize() after met.to('cuda'))
# bug: Metamer.to() moves the synthesis' tensors through the shared Synthesis.to(), which replaces
#      each attribute by attr.to(device). For the metamer being synthesised - a requires_grad leaf -
#      the moved tensor is a copy computed from the CPU leaf, so the optimizer built by synthesize()
#      refuses it. (The same method also re-assigns the read-only model property, which raises an
#      AttributeError that is turned into a misleading warning; the model itself was already moved in
#      place.) The fix (commit 6d62c9c, "fix broken to method") moves attr.data and re-applies
#      requires_grad_() when the old attribute required grad, and moves the model in the subclass
#      through _model. The marked line is the tensor move the fix changed (DL102, the closest rule:
#      a move that returns a non-leaf copy of a tensor meant to be optimised; DL102 itself names
#      nn.Parameter).
import abc
import warnings
from typing import Optional

import torch
from torch import Tensor


class Synthesis(abc.ABC):
    def to(self, *args, attrs=(), **kwargs):
        try:
            self.model = self.model.to(*args, **kwargs)
        except AttributeError:
            warnings.warn("model has no `to` method, so we leave it as is...")

        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)

        def move(a, k):
            move_device = None if k.startswith("saved_") else device
            return a.to(move_device, dtype, non_blocking)

        for k in attrs:
            if hasattr(self, k):
                attr = getattr(self, k)
                if isinstance(attr, torch.Tensor):
                    attr = move(attr, k)  # expect: DL102
                    if isinstance(getattr(self, k), torch.nn.Parameter):
                        attr = torch.nn.Parameter(attr)
                    setattr(self, k, attr)
                elif isinstance(attr, list):
                    setattr(self, k, [move(a, k) for a in attr])


class Metamer(Synthesis):
    def __init__(self, image: Tensor, model: torch.nn.Module):
        self._model = model
        self._image = image
        self._target_representation = model(image).detach()
        self._saved_metamer = []
        self._optimizer: Optional[torch.optim.Optimizer] = None
        metamer = torch.rand_like(image) * 0.01 + image.mean()
        metamer.requires_grad_()
        self._metamer = metamer

    @property
    def model(self):
        return self._model

    @property
    def metamer(self):
        return self._metamer

    def synthesize(self, max_iter=5):
        if self._optimizer is None:
            self._optimizer = torch.optim.Adam([self._metamer], lr=0.01, amsgrad=True)
        for _ in range(max_iter):
            self._optimizer.zero_grad()
            loss = torch.linalg.vector_norm(self.model(self.metamer) - self._target_representation)
            loss.backward()
            self._optimizer.step()
            self._saved_metamer.append(self.metamer.detach().clone().to('cpu'))
        return loss.item()

    def to(self, *args, **kwargs):
        attrs = ['_image', '_target_representation', '_metamer', '_model', '_saved_metamer']
        super().to(*args, attrs=attrs, **kwargs)


if __name__ == '__main__':
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        img = torch.rand(1, 1, 16, 16)
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.AvgPool2d(2))
        met = Metamer(img, model)
        met.to('cuda' if torch.cuda.is_available() else 'cpu')
        print(met.synthesize())
