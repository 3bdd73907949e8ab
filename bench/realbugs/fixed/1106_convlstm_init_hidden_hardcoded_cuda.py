# source: https://github.com/ndrplz/ConvLSTM_pytorch/pull/10
# fixed twin: the zero states are made on the device of the cell's convolution weight (commit 6d61754, PR 12).
import torch
import torch.nn as nn


class ConvLSTMCell(nn.Module):
    def __init__(self, input_size, input_dim, hidden_dim, kernel_size, bias):
        super().__init__()
        self.height, self.width = input_size
        self.hidden_dim = hidden_dim
        padding = kernel_size[0] // 2, kernel_size[1] // 2
        self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size, padding=padding, bias=bias)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state
        combined = torch.cat([input_tensor, h_cur], dim=1)
        cc_i, cc_f, cc_o, cc_g = torch.split(self.conv(combined), self.hidden_dim, dim=1)
        i, f, o, g = torch.sigmoid(cc_i), torch.sigmoid(cc_f), torch.sigmoid(cc_o), torch.tanh(cc_g)
        c_next = f * c_cur + i * g
        return o * torch.tanh(c_next), c_next

    def init_hidden(self, batch_size):
        return (torch.zeros(batch_size, self.hidden_dim, self.height, self.width, device=self.conv.weight.device),
                torch.zeros(batch_size, self.hidden_dim, self.height, self.width, device=self.conv.weight.device))


class ConvLSTM(nn.Module):
    def __init__(self, input_size, input_dim, hidden_dim, kernel_size, num_layers, batch_first=False):
        super().__init__()
        self.num_layers, self.batch_first = num_layers, batch_first
        cells = []
        for i in range(num_layers):
            cur_input_dim = input_dim if i == 0 else hidden_dim
            cells.append(ConvLSTMCell(input_size, cur_input_dim, hidden_dim, kernel_size, bias=True))
        self.cell_list = nn.ModuleList(cells)

    def forward(self, input_tensor):
        if not self.batch_first:
            input_tensor = input_tensor.permute(1, 0, 2, 3, 4)
        hidden_state = self._init_hidden(batch_size=input_tensor.size(0))
        cur_layer_input = input_tensor
        for layer_idx in range(self.num_layers):
            h, c = hidden_state[layer_idx]
            outputs = []
            for t in range(input_tensor.size(1)):
                h, c = self.cell_list[layer_idx](cur_layer_input[:, t], [h, c])
                outputs.append(h)
            cur_layer_input = torch.stack(outputs, dim=1)
        return cur_layer_input, (h, c)

    def _init_hidden(self, batch_size):
        return [self.cell_list[i].init_hidden(batch_size) for i in range(self.num_layers)]


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ConvLSTM((8, 8), 3, 6, (3, 3), num_layers=2, batch_first=True).to(device)
    out, _ = model(torch.randn(2, 4, 3, 8, 8, device=device))
    print(out.shape)
