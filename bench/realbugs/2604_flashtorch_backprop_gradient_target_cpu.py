# source: https://github.com/MisaOgura/flashtorch/issues/2
# error: RuntimeError: invalid gradient at index 0 - expected type torch.cuda.FloatTensor but got torch.FloatTensor
# bug: Backprop picks 'cuda' whenever a GPU exists and moves the model and the input image there
#      before the forward pass, but the one-hot gradient target it hands to output.backward() is made
#      with the legacy constructor torch.FloatTensor(1, num_classes) on the host, so autograd rejects
#      it against the GPU output. The fix (commit 5b77eb3, PR 3 "Fix/cuda transfer error") adds a
#      use_gpu flag and inserts target = target.to('cuda') right after the target is made; the marked
#      line is the constructor whose tensor the inserted line moves (DL202: a factory without
#      device= that meets the model's output).
import warnings

import torch
import torch.nn as nn


class Backprop:
    def __init__(self, model):
        self.model = model
        self.model.eval()
        self.gradients = None
        self._register_conv_hook()
        self._device = 'cuda' if torch.cuda.is_available() else 'cpu'

    def calculate_gradients(self, input_, target_class=None, take_max=False):
        self.model = self.model.to(self._device)
        self.model.zero_grad()

        input_ = input_.to(self._device)
        input_.requires_grad = True

        self.gradients = torch.zeros(input_.shape)
        output = self.model(input_)

        if len(output.shape) == 1:
            target = None
        else:
            _, top_class = output.topk(1, dim=1)
            target = torch.FloatTensor(1, output.shape[-1]).zero_()  # expect: DL202
            if (target_class is not None) and (top_class != target_class):
                warnings.warn(UserWarning('predicted class differs from the target class'))
            target[0][top_class] = 1

        output.backward(gradient=target)

        gradients = self.gradients.detach().cpu()[0]
        if take_max:
            gradients = gradients.max(dim=0, keepdim=True)[0]
        return gradients

    def _register_conv_hook(self):
        def _record_gradients(module, grad_in, grad_out):
            if self.gradients.shape == grad_in[0].shape:
                self.gradients = grad_in[0]

        for _, module in self.model.named_modules():
            if isinstance(module, nn.Conv2d) and module.in_channels == 3:
                module.register_full_backward_hook(_record_gradients)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                        nn.Linear(4, 5))
    image = torch.rand(1, 3, 8, 8)
    print(Backprop(net).calculate_gradients(image, take_max=True).shape)
