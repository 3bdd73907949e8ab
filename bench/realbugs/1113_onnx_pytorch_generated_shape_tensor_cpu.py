# source: https://github.com/fumihwh/onnx-pytorch/issues/28
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the ONNX-to-PyTorch converter emits each ONNX Shape node as t_out = torch.tensor(t_in.shape)
#      in the generated forward, so the shape tensor is made on the CPU; the converted model works on
#      the CPU, but on the GPU the shape slice is concatenated with the model's registered constants
#      (moved to CUDA with the model) to build a Reshape target. The fix (commit 29cd1da, PR 29) makes
#      the Shape generator emit device=t_in.device. The program below is such a generated model; its
#      Shape line is marked (DL202).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self._vars = nn.ParameterDict()
        self._vars["t_conv_w"] = nn.Parameter(torch.randn(8, 3, 3, 3) * 0.1)
        self._vars["t_fc_w"] = nn.Parameter(torch.randn(10, 8 * 4 * 4) * 0.1)
        self.register_buffer("t_minus_one", torch.tensor([-1], dtype=torch.int64))

    def forward(self, *inputs):
        t_input, = inputs
        t_321 = F.relu(F.conv2d(t_input, self._vars["t_conv_w"], padding=1))
        t_322 = F.adaptive_avg_pool2d(t_321, (4, 4))
        t_323 = torch.tensor(t_322.shape)  # expect: DL202
        t_324 = t_323[0:1]
        t_325 = torch.cat([t_324, self.t_minus_one])
        t_326 = torch.reshape(t_322, tuple(t_325.tolist()))
        t_327 = F.linear(t_326, self._vars["t_fc_w"])
        return t_327


@torch.no_grad()
def test_run_model(inputs=[torch.randn(2, 3, 16, 16)]):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Model()
    model.eval()
    model.to(device)
    rs = model(*[inp.to(device) for inp in inputs])
    print(rs.shape)
    return rs


if __name__ == "__main__":
    test_run_model()
