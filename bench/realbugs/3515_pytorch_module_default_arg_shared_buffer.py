# source: https://github.com/pytorch/pytorch/issues/58140
# error: RuntimeError at the second t = Test2(torch.ones(5)).cuda() (the message is cut in the stored text; the
#        operands are a CPU input and a CUDA buffer: "Expected all tensors to be on the same device")
# bug: Test2.__init__ takes its submodule as a default argument, test1 = Test1(); Python evaluates the default once,
#      so every Test2 built without the argument shares the same Test1 instance. The first Test2(...).cuda() moves
#      that shared Test1's registered buffer test_tensor to the GPU; the second Test2 construction runs
#      self.test1(x) inside __init__ on its CPU input, and Test1.forward multiplies the CPU x with the buffer that
#      now lives on CUDA. The reporter reads it as "a global CUDA device being set for internal nn.Module buffers";
#      the code shows the shared default instance. The issue is closed without a change to PyTorch (the thread's
#      answers are not in the stored text), so no twin; the product the traceback ends in is marked (DL201). The
#      program is the report's snippet, kept whole.
import torch
import torch.nn as nn


class Test1(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("test_tensor", torch.ones(5))

    def forward(self, x):
        return x * self.test_tensor  # expect: DL201


class Test2(nn.Module):
    def __init__(self, x, test1=Test1()):
        super().__init__()
        self.test1 = test1
        x = self.test1(x)

    def forward(self, x):
        return self.test1(x)


t = Test2(torch.ones(5)).cuda()
t = Test2(torch.ones(5)).cuda()
