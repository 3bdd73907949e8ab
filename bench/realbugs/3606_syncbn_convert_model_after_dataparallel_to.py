# source: https://github.com/vacancy/Synchronized-BatchNorm-PyTorch/issues/34
# error: RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of
#        them on device: cpu
# bug: the reporter wraps the model with nn.DataParallel(model, device_ids=gpus).to(device) and only then calls the
#      library's convert_model, which unwraps the DataParallel, builds a new SynchronizedBatchNorm*d for every BatchNorm
#      (constructed on the CPU), copies over running_mean/running_var and the affine weights (CUDA tensors) but not
#      num_batches_tracked, and re-wraps the result in a DataParallelWithCallback; the fresh CPU buffer fails
#      DataParallel's device check at the first forward. The reporter's change (and the maintainer's advice in #37,
#      "call model.cuda() after your model = convert_model(model)") converts first and wraps and moves afterwards; the
#      convert_model call after the move is marked (DL205, the closest rule: a DataParallel whose module is not all on
#      device_ids[0] before its first forward). Reductions: convert_model keeps the BatchNorm2d case only;
#      _SynchronizedBatchNorm keeps the non-parallel F.batch_norm path (the SyncMaster reduction is cut) and
#      DataParallelWithCallback its replicate override without the callbacks; net() is a small conv/BN network and
#      gpus the visible devices. No upstream code change (the library code at 0d261dd was as shown).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import DataParallel
from torch.nn.modules.batchnorm import _BatchNorm


# --- sync_batchnorm/batchnorm.py ---
class _SynchronizedBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True):
        super(_SynchronizedBatchNorm, self).__init__(num_features, eps=eps, momentum=momentum, affine=affine)
        self._is_parallel = False
        self._parallel_id = None
        self._slave_pipe = None

    def forward(self, input):
        # If it is not parallel computation or is in evaluation mode, use PyTorch's implementation.
        return F.batch_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training, self.momentum, self.eps)


class SynchronizedBatchNorm2d(_SynchronizedBatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError('expected 4D input (got {}D input)'.format(input.dim()))


# --- sync_batchnorm/replicate.py ---
class DataParallelWithCallback(DataParallel):
    def replicate(self, module, device_ids):
        modules = super(DataParallelWithCallback, self).replicate(module, device_ids)
        return modules


def convert_model(module):
    if isinstance(module, torch.nn.DataParallel):
        mod = module.module
        mod = convert_model(mod)
        mod = DataParallelWithCallback(mod)
        return mod

    mod = module
    for pth_module, sync_module in zip([torch.nn.modules.batchnorm.BatchNorm2d],
                                       [SynchronizedBatchNorm2d]):
        if isinstance(module, pth_module):
            mod = sync_module(module.num_features, module.eps, module.momentum, module.affine)
            mod.running_mean = module.running_mean
            mod.running_var = module.running_var
            if module.affine:
                mod.weight.data = module.weight.data.clone().detach()
                mod.bias.data = module.bias.data.clone().detach()

    for name, child in module.named_children():
        mod.add_module(name, convert_model(child))

    return mod


# --- the reporter's training script ---
def net():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


if __name__ == "__main__":
    use_gpu = torch.cuda.is_available()
    gpus = list(range(torch.cuda.device_count()))
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = net()  # my model

    if use_gpu:
        model = torch.nn.DataParallel(model, device_ids=gpus).to(device)

    model = convert_model(model)  # expect: DL205

    x = torch.randn(8, 3, 32, 32).to(device)
    print(model(x).shape)
