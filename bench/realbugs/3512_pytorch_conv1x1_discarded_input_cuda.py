# source: https://github.com/pytorch/pytorch/issues/547
# error: TypeError: FloatSpatialConvolutionMM_updateOutput received an invalid combination of arguments - got (int,
#        torch.FloatTensor, torch.FloatTensor, torch.cuda.FloatTensor, torch.cuda.FloatTensor, ...) (PyTorch 0.1.x; in
#        PyTorch 2.x the same mix reads "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should
#        be the same or input should be a MKLDNN tensor and weight is a dense tensor", as quoted in
#        comfyui_controlnet_aux#567)
# bug: the reporter's snippet moves the 1x1 Conv2d with net.cuda(), which converts the module in place, and then
#      calls x.cuda() on the input Variable as a statement: Tensor/Variable.cuda() returns a copy on the GPU and
#      leaves x on the CPU, so net(x) gets a CPU input with CUDA weights. The maintainers' answer (apaszke: "You
#      probably forgot to send the input to the GPU"; colesbury: "This creates a copy on the GPU and immediately
#      discards it", use x = x.cuda()) is the fix; there is no upstream change, so no twin. The discarded move the
#      answer corrects is marked (DL101); net(x), where the error is raised, is the DL203/DL201 candidate. The
#      program is the report's snippet, at module level as reported, with the 100x100 input kept.
import torch
import torch.nn as nn
from torch.autograd import Variable


net = nn.Conv2d(1, 6, kernel_size=(1, 1))
net.cuda()
x = Variable(torch.randn(1, 1, 100, 100))
x.cuda()  # expect: DL101
net(x)
