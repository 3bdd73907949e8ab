# source: https://github.com/pytorch/pytorch/issues/29807
# error: (no exception at .cuda()) a.params still holds CPU tensors after a.cuda(); using them with CUDA inputs fails with "Expected all tensors to be on the same device"
# bug: the module registers each tensor as a buffer and also keeps a plain Python list of the
#      tensors it registered. module.cuda() replaces the registered buffers with CUDA copies, but
#      the list keeps referring to the original CPU tensors. No code fix (the maintainer points to
#      module.buffers()); the line the thread is about (filling the list) is marked. No rule
#      covers a list of buffer references; DL103 (plain tensor attribute not moved) is the closest.
import torch
import torch.nn as nn


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        params = [torch.rand(1, 3) for _ in range(4)]
        self.params = []
        for i, param in enumerate(params):
            self.register_buffer("param_{}".format(i), param)
            self.params.append(getattr(self, "param_{}".format(i)))  # expect: DL103

    def forward(self, x):
        for p in self.params:
            x = x + p
        return x


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    a = MyModule()
    a.to(device)
    print([p.device for p in a.params], [b.device for b in a.buffers()])
    print(a(torch.zeros(2, 3, device=device)))
