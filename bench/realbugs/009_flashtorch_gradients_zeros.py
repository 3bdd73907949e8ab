# source: https://github.com/MisaOgura/flashtorch/pull/40
# error: RuntimeError: Expected all tensors to be on the same device (gradient buffer on cpu, image on cuda)
# bug: with use_gpu the model and the input image go to CUDA, but the gradient buffer that the
#      ascent step adds to the image is created with torch.zeros(shape) on the CPU.
import torch
import torch.nn as nn


class GradientAscent:
    def __init__(self, model, img_size=224, lr=1.0, use_gpu=False):
        self.model = model
        self._img_size = img_size
        self._lr = lr
        self.use_gpu = use_gpu
        self.gradients = None
        self.activation = None
        self.handlers = []

    def optimize(self, layer, filter_idx, input_, num_iter=30):
        if type(layer) != nn.modules.conv.Conv2d:
            raise TypeError("The layer must be nn.modules.conv.Conv2d.")
        if torch.cuda.is_available() and self.use_gpu:
            self.model = self.model.to("cuda")
            input_ = input_.to("cuda")
        while len(self.handlers) > 0:
            self.handlers.pop().remove()
        self.handlers.append(self._register_forward_hooks(layer, filter_idx))
        self.handlers.append(self._register_backward_hooks())
        self.gradients = torch.zeros(input_.shape)  # expect: DL202
        return self._ascent(input_, num_iter)

    def _register_forward_hooks(self, layer, filter_idx):
        def _record_activation(module, input_, output):
            self.activation = torch.mean(output[:, filter_idx, :, :])

        return layer.register_forward_hook(_record_activation)

    def _register_backward_hooks(self):
        def _record_gradients(module, grad_in, grad_out):
            if self.gradients.shape == grad_in[0].shape:
                self.gradients = grad_in[0]

        for _, module in self.model.named_modules():
            if isinstance(module, nn.Conv2d) and module.in_channels == 3:
                return module.register_full_backward_hook(_record_gradients)

    def _ascent(self, x, num_iter):
        output = []
        for i in range(num_iter):
            self.model(x)
            self.activation.backward()
            self.gradients /= torch.sqrt(torch.mean(torch.mul(self.gradients, self.gradients))) + 1e-5
            x = x + self.gradients * self._lr
            output.append(x)
        return output
