# source: https://github.com/MisaOgura/flashtorch/issues/2
# fixed twin: calculate_gradients takes use_gpu and, when it is set and a GPU exists, moves the model and the input there and the one-hot target after it is made (commit 5b77eb3, PR 3); otherwise everything stays on the host.
import warnings

import torch
import torch.nn as nn


class Backprop:
    def __init__(self, model):
        self.model = model
        self.model.eval()
        self.gradients = None
        self._register_conv_hook()

    def calculate_gradients(self, input_, target_class=None, take_max=False, use_gpu=False):
        if torch.cuda.is_available() and use_gpu:
            self.model = self.model.to('cuda')
            input_ = input_.to('cuda')
        self.model.zero_grad()
        input_.requires_grad = True

        self.gradients = torch.zeros(input_.shape)
        output = self.model(input_)

        if len(output.shape) == 1:
            target = None
        else:
            _, top_class = output.topk(1, dim=1)
            target = torch.FloatTensor(1, output.shape[-1]).zero_()
            if torch.cuda.is_available() and use_gpu:
                target = target.to('cuda')
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
    print(Backprop(net).calculate_gradients(image, take_max=True, use_gpu=True).shape)
