# source: https://github.com/pytorch/pytorch/pull/2353
# error: TypeError when back-propagating through prod() of a GPU tensor (index built on the CPU)
# bug: the zero-safe backward of prod reverses a dimension with index_select, using an index made by
#      torch.arange on the CPU, while the variable being reversed is a CUDA tensor.
import torch
from torch.autograd import Function, Variable


class Prod(Function):
    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        ctx.save_for_backward(input)
        return input.prod(dim, keepdim=True)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_variables
        return safe_zeros_backward(input, ctx.dim) * grad_output, None


def safe_zeros_backward(inp, dim):
    # cumprod from the left and from the right, excluding the element itself
    size = list(inp.size())
    size[dim] = 1
    ones = Variable(inp.data.new(*size).fill_(1))
    exclusive_normal_nocp = torch.cat((ones, inp.narrow(dim, 0, inp.size(dim) - 1)), dim)
    exclusive_normal = exclusive_normal_nocp.cumprod(dim)

    def reverse_dim(var, dim):
        return var.index_select(dim, Variable(torch.arange(var.size(dim) - 1, -1, -1)).long())  # expect: DL202

    narrow_reverse = reverse_dim(inp.narrow(dim, 1, inp.size(dim) - 1), dim)
    exclusive_reverse_nocp = torch.cat((ones, narrow_reverse), dim)
    exclusive_reverse = reverse_dim(exclusive_reverse_nocp.cumprod(dim), dim)
    return exclusive_normal * exclusive_reverse


if __name__ == '__main__':
    x = Variable(torch.randn(4, 5).cuda(), requires_grad=True)
    y = Prod.apply(x, 1)
    y.sum().backward()
