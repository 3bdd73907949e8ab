# source: https://github.com/pytorch/pytorch/issues/17484
# fixed twin: the form the report shows working and the maintainers point to: the tensor is made on the GPU and then
#             wrapped, torch.nn.Parameter(torch.rand(5, device='cuda')), so par is registered.
import torch


class A(torch.nn.Module):
    def __init__(self):
        super(A, self).__init__()
        self.par = torch.nn.Parameter(torch.rand(5, device='cuda'))

    def forward(self):
        pass


if __name__ == "__main__":
    a = A()
    print(a.state_dict())
    print(list(a.parameters()))
