# source: https://github.com/ultralytics/yolov5/pull/1447
# error: thop profiling fails (input on cpu, model parameters on cuda), see pytorch-OpCounter issue 113
# bug: model_info() profiles a deep copy of the model with a dummy image made by torch.zeros on the
#      CPU, while the model it was given lives on the GPU.
import logging
from copy import deepcopy

import torch

logger = logging.getLogger(__name__)


def model_info(model, verbose=False, img_size=640):
    # Model information. img_size may be int or list, i.e. img_size=640 or img_size=[640, 320]
    n_p = sum(x.numel() for x in model.parameters())
    n_g = sum(x.numel() for x in model.parameters() if x.requires_grad)
    if verbose:
        for i, (name, p) in enumerate(model.named_parameters()):
            print('%5g %40s %9s %12g %20s' % (i, name, p.requires_grad, p.numel(), list(p.shape)))

    try:  # FLOPS
        from thop import profile
        stride = int(model.stride.max())
        img = torch.zeros((1, 3, stride, stride), device=next(model.parameters()).device)  # input
        flops = profile(deepcopy(model), inputs=(img,), verbose=False)[0] / 1E9 * 2  # stride FLOPS
        img_size = img_size if isinstance(img_size, list) else [img_size, img_size]
        fs = ', %.1f GFLOPS' % (flops * img_size[0] / stride * img_size[1] / stride)
    except (ImportError, Exception):
        fs = ''

    logger.info(f"Model Summary: {len(list(model.modules()))} layers, {n_p} parameters, {n_g} gradients{fs}")
