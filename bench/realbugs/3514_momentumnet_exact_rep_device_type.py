# source: https://github.com/michaelsdr/momentumnet/pull/30
# error: (PR "Fix error with multiple GPUs") with the model on GPU 1, "the original val.device.type will move the
#        tensors to GPU 0, generating errors because model and tensors are not in the same device"
# bug: exact_rep_pytorch.TorchExactRep, which keeps the velocity of the memory-free Momentum ResNet exactly
#      reversible, takes its device as device = val.device.type when none is given: "cuda", without the index, so
#      BitStore's store is made with .to("cuda") on the current device, cuda:0, while the velocity's integer
#      representation stays on the input's GPU; the first v *= gamma pushes the remainder bits (on cuda:1) into the
#      store (on cuda:0) and fails. The PR (open; its change is the one the description states, val.device for
#      val.device.type) edits that line, which is marked (DL313, the closest rule: a device derived from a tensor
#      that drops its index and lands on the current GPU instead of the tensor's; no rule is exact). No fix is
#      merged (the stored repository has 7f4c8ab of 2022-02-21 and an unrelated PR merge ref), so no twin.
#      Reductions: TorchExactRep keeps the constructor, the in-place multiply/add path and val; BitStore is whole;
#      MomentumTransformMemory keeps its forward (the backward, which rebuilds the velocity from the saved integer
#      representation, is dropped and the driver evaluates under no_grad); MomentumNetNoBackprop keeps forward;
#      find_parameters lists module.parameters(). The driver puts the net and the input on the last GPU.
import torch
import torch.nn as nn

RADIX_SCALE = 2 ** 52


# --- momentumnet/exact_rep_pytorch.py ---
class TorchExactRep(object):
    def __init__(self, val, from_intrep=False, shape=None, device=None, from_representation=None):
        if from_representation is not None:
            intrep, store = from_representation
            self.intrep = intrep
            self.aux = BitStore(0, 0, store=store)
        else:
            if device is None:
                device = val.device.type  # expect: DL313
            if shape is not None:
                self.intrep = torch.zeros(*shape, dtype=torch.long, device=device)
            else:
                shape = val.shape
                self.intrep = val if from_intrep else self.float_to_intrep(val)
            self.aux = BitStore(shape, device)

    def __imul__(self, a):
        self.mul(a)
        return self

    def __iadd__(self, a):
        self.add(a)
        return self

    def add(self, A):
        self.intrep += self.float_to_intrep(A)
        return self

    def rational_mul(self, n, d):
        self.aux.push(self.intrep % d, d)  # remainder bits kept aside
        self.intrep = torch.div(self.intrep, d, rounding_mode="trunc")
        self.intrep *= n
        self.intrep += self.aux.pop(n)

    def mul(self, a):
        n, d = self.float_to_rational(a)
        self.rational_mul(n, d)
        return self

    def float_to_rational(self, a):
        d = 2 ** 16 // int(a + 1)
        n = int(a * d + 1)
        return n, d

    def float_to_intrep(self, x):
        if type(x) is torch.Tensor:
            return (x * RADIX_SCALE).long()
        return int(x * RADIX_SCALE)

    @property
    def val(self):
        return self.intrep.float() / RADIX_SCALE


class BitStore(object):
    def __init__(self, shape, device, store=None):
        if store is not None:
            self.store = store
        else:
            self.store = torch.zeros(shape, dtype=torch.long).to(device)

    def push(self, N, M):
        self.store *= M
        self.store += N

    def pop(self, M):
        N = self.store % M
        self.store = torch.div(self.store, M, rounding_mode="trunc")
        return N


# --- momentumnet/momentum_net.py ---
def find_parameters(module):
    return list(module.parameters())


class MomentumTransformMemory(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, v, gamma, functions, init_function, is_residual, n_fun_args, *params):
        fun_args = params[:n_fun_args]
        ctx.functions = functions
        ctx.gamma = gamma
        n_iters = len(functions)
        v = TorchExactRep(v)
        with torch.no_grad():
            for i in range(n_iters):
                v *= gamma
                f = functions[i](x, *fun_args)
                if not is_residual:
                    f = f - x
                v += (1 - gamma) * f
                x = x + v.val
        ctx.save_for_backward(x, v.intrep, v.aux.store)
        return x


class MomentumNetNoBackprop(nn.Module):
    def __init__(self, functions, gamma, is_residual=True):
        super(MomentumNetNoBackprop, self).__init__()
        self.n_functions = len(functions)
        for i, function in enumerate(functions):
            self.add_module(str(i), function)
        self.gamma = gamma
        self.is_residual = is_residual

    @property
    def functions(self):
        return [self._modules[str(i)] for i in range(self.n_functions)]

    def forward(self, x, *function_args):
        params = []
        v = torch.zeros_like(x)
        for function in self.functions:
            params += find_parameters(function)
        output = MomentumTransformMemory.apply(x, v, self.gamma, self.functions, None, self.is_residual,
                                               len(function_args), *function_args, *params)
        self.v = v
        return output


# --- driver: a memory-free Momentum ResNet on the last GPU ---
if __name__ == "__main__":
    if torch.cuda.is_available():
        device = torch.device("cuda", torch.cuda.device_count() - 1)
    else:
        device = torch.device("cpu")
    hidden, d = 8, 50
    function = nn.Sequential(nn.Linear(d, hidden), nn.Tanh(), nn.Linear(hidden, d))
    mresnet = MomentumNetNoBackprop([function] * 10, gamma=0.99).to(device)
    x = torch.randn(10, d, device=device)
    with torch.no_grad():
        print(mresnet(x).shape)
