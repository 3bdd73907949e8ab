# source: https://github.com/uchida-takumi/CustomizedLinear/pull/1
# error: device mismatch on GPU: the connection mask stays on the CPU after model.cuda()
# bug: the connectivity mask is stored as a plain tensor attribute, so moving the layer moves
#      weight and bias but not the mask that forward multiplies into the weight.
import math

import torch
import torch.nn as nn


class CustomizedLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None, mask=None):
        if mask is not None:
            weight = weight * mask
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        ctx.save_for_backward(input, weight, bias, mask)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias, mask = ctx.saved_tensors
        grad_input = grad_output.mm(weight)
        grad_weight = grad_output.t().mm(input)
        if mask is not None:
            grad_weight = grad_weight * mask
        grad_bias = grad_output.sum(0).squeeze(0)
        return grad_input, grad_weight, grad_bias, None


class CustomizedLinear(nn.Module):
    def __init__(self, mask, bias=True):
        super(CustomizedLinear, self).__init__()
        self.input_features = mask.shape[0]
        self.output_features = mask.shape[1]
        if isinstance(mask, torch.Tensor):
            self.mask = mask.type(torch.float).t()  # expect: DL103
        else:
            self.mask = torch.tensor(mask, dtype=torch.float).t()  # expect: DL103

        self.weight = nn.Parameter(torch.Tensor(self.output_features, self.input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(self.output_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        self.weight.data = self.weight.data * self.mask

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input):
        return CustomizedLinearFunction.apply(input, self.weight, self.bias, self.mask)
