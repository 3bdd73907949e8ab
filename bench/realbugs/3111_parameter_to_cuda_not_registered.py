# source: https://github.com/pytorch/pytorch/issues/17484
# error: no exception: a.state_dict() is an empty OrderedDict() - "parameters do not register if they are
#        initialized with a .to('cuda') function call on the parameter level"
# bug: A.__init__ assigns self.par = torch.nn.Parameter(torch.rand(5)).to('cuda'); .to() on a Parameter returns a
#      plain (non-leaf) tensor, so Module.__setattr__ stores an ordinary attribute: par is missing from
#      parameters() and state_dict(), an optimizer built from a.parameters() never updates it, and a checkpoint
#      never saves it. The reporter's second snippet, torch.nn.Parameter(torch.rand(5, device='cuda')), registers
#      it, and the maintainers closed the report as expected behaviour (see pytorch#9303); that is the fix applied
#      here and the replaced line is marked (DL102). The reporter's module is kept as written (an empty forward and
#      the hard-coded 'cuda', so it is GPU-only); the state_dict and parameters() checks are the report's.
import torch


class A(torch.nn.Module):
    def __init__(self):
        super(A, self).__init__()
        self.par = torch.nn.Parameter(torch.rand(5)).to('cuda')  # expect: DL102

    def forward(self):
        pass


if __name__ == "__main__":
    a = A()
    print(a.state_dict())
    print(list(a.parameters()))
