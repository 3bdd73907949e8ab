# source: https://github.com/PennyLaneAI/pennylane/pull/1426
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and
#        cpu! (when checking arugment for argument mat2 in method wrapper_mm)  (pennylane/interfaces/torch.py,
#        vjp = dy.view(1, -1) @ ctx.jacobian.apply(ctx, *ctx.saved_tensors))
# bug: pennylane/interfaces/torch.py's _TorchInterface evaluates the tape on NumPy copies of the inputs; forward puts
#      its result back on the inputs' GPU, but the Jacobian built by _evaluate_grad_matrix (and returned by the inner
#      _Jacobian function) is torch.from_numpy(...) on the CPU, so backward multiplies the CUDA output gradient dy by
#      a CPU matrix. The fix (PR #1426, commit 614db57) splits the line, checks is_cuda on both operands and moves
#      the CPU one with torch.as_tensor(..., device=...get_device()); the changed line is marked (DL201).
#      Reductions: the quantum tape and device become a one-qubit stand-in (RX(a) RY(b), expectation cos(a)cos(b),
#      its analytic Jacobian and Hessian in NumPy) with the get_parameters/set_parameters/execute_device/jacobian
#      calls the interface makes; the adjoint-state caching, sampled-tape and object-dtype branches and the
#      TorchInterface mixin class are dropped; the driver applies the function to GPU parameters and backpropagates,
#      as the transfer-learning demo's hybrid model does. NumPy is imported as upstream (absent here), so the file
#      does not run on this machine.
import numpy as np
import torch


def args_to_numpy(args):
    """Converts all Torch tensors in a list to NumPy arrays"""
    res = []

    for i in args:
        if isinstance(i, torch.Tensor):
            if i.is_cuda:  # pragma: no cover
                res.append(i.cpu().detach().numpy())
            else:
                res.append(i.detach().numpy())
        else:
            res.append(i)

    # if NumPy array is scalar, convert to a Python float
    res = [i.tolist() if (isinstance(i, np.ndarray) and not i.shape) else i for i in res]

    return res


class _TorchInterface(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_kwargs, *input_):
        """Implements the forward pass QNode evaluation"""
        # detach all input tensors, convert to NumPy array
        ctx.args = args_to_numpy(input_)
        ctx.kwargs = input_kwargs
        ctx.save_for_backward(*input_)

        tape = ctx.kwargs["tape"]
        device = ctx.kwargs["device"]

        # unwrap constant parameters
        ctx.all_params = tape.get_parameters(trainable_only=False)
        ctx.all_params_unwrapped = args_to_numpy(ctx.all_params)

        # evaluate the tape
        tape.set_parameters(ctx.all_params_unwrapped, trainable_only=False)
        res = tape.execute_device(ctx.args, device)
        tape.set_parameters(ctx.all_params, trainable_only=False)

        if hasattr(res, "numpy"):
            res = res.numpy()

        ctx.saved_grad_matrices = {}

        def _evaluate_grad_matrix(grad_matrix_fn):
            if grad_matrix_fn in ctx.saved_grad_matrices:
                return ctx.saved_grad_matrices[grad_matrix_fn]

            tape.set_parameters(ctx.all_params_unwrapped, trainable_only=False)
            grad_matrix = getattr(tape, grad_matrix_fn)(
                device, params=ctx.args, **tape.jacobian_options
            )
            tape.set_parameters(ctx.all_params, trainable_only=False)

            grad_matrix = torch.as_tensor(torch.from_numpy(grad_matrix), dtype=tape.dtype)
            ctx.saved_grad_matrices[grad_matrix_fn] = grad_matrix

            return grad_matrix

        class _Jacobian(torch.autograd.Function):
            @staticmethod
            def forward(ctx_, parent_ctx, *input_):
                """Implements the forward pass QNode Jacobian evaluation"""
                ctx_.dy = parent_ctx.dy
                ctx_.save_for_backward(*input_)
                jacobian = _evaluate_grad_matrix("jacobian")
                return jacobian

            @staticmethod
            def backward(ctx_, ddy):  # pragma: no cover
                """Implements the backward pass QNode vector-Hessian product"""
                hessian = _evaluate_grad_matrix("hessian")

                if torch.squeeze(ddy).ndim > 1:
                    vhp = ctx_.dy.view(1, -1) @ ddy @ hessian @ ctx_.dy.view(-1, 1)
                else:
                    vhp = ddy @ hessian

                vhp = torch.unbind(vhp.view(-1))

                grad_input = []

                # match the type and device of the input tensors
                for i, j in zip(vhp, ctx_.saved_tensors):
                    res = torch.as_tensor(i, dtype=tape.dtype)
                    if j.is_cuda:  # pragma: no cover
                        cuda_device = j.get_device()
                        res = torch.as_tensor(res, device=cuda_device)
                    grad_input.append(res)

                return (None,) + tuple(grad_input)

        ctx.jacobian = _Jacobian

        # if any input tensor uses the GPU, the output should as well
        for i in input_:
            if isinstance(i, torch.Tensor):
                if i.is_cuda:  # pragma: no cover
                    cuda_device = i.get_device()
                    return torch.as_tensor(
                        torch.from_numpy(res), device=cuda_device, dtype=tape.dtype
                    )

        return torch.as_tensor(torch.from_numpy(res), dtype=tape.dtype)

    @staticmethod
    def backward(ctx, dy):  # pragma: no cover
        """Implements the backwards pass QNode vector-Jacobian product"""
        ctx.dy = dy
        vjp = dy.view(1, -1) @ ctx.jacobian.apply(ctx, *ctx.saved_tensors)  # expect: DL201
        vjp = torch.unbind(vjp.view(-1))
        return (None,) + tuple(vjp)


# --- stand-in for a JacobianTape on default.qubit: RX(a) RY(b) |0>, expval(PauliZ) ---
class OneQubitTape:
    dtype = torch.float64
    jacobian_options = {}

    def __init__(self, params):
        self._params = list(params)

    def get_parameters(self, trainable_only=True):
        return self._params

    def set_parameters(self, params, trainable_only=True):
        self._params = list(params)

    def execute_device(self, params, device):
        a, b = params
        return np.array([np.cos(a) * np.cos(b)])

    def jacobian(self, device, params=None, **options):
        a, b = params
        return np.array([[-np.sin(a) * np.cos(b), -np.cos(a) * np.sin(b)]])

    def hessian(self, device, params=None, **options):
        a, b = params
        c = np.cos(a) * np.cos(b)
        s = np.sin(a) * np.sin(b)
        return np.array([[-c, s], [s, -c]])


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    a = torch.tensor(0.1, dtype=torch.float64, device=dev, requires_grad=True)
    b = torch.tensor(0.2, dtype=torch.float64, device=dev, requires_grad=True)
    tape = OneQubitTape([a, b])
    result = _TorchInterface.apply({"tape": tape, "device": "default.qubit"}, a, b)
    result.sum().backward()
    print(result, a.grad, b.grad)
