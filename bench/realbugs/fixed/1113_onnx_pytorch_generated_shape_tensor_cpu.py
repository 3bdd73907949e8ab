# source: https://github.com/fumihwh/onnx-pytorch/issues/28
# fixed twin: the generated Shape line makes the shape tensor on its input's device, as the generator emits since commit 29cd1da.
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
        t_323 = torch.tensor(t_322.shape, device=t_322.device)
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
