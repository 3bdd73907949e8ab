# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/18
# error: RuntimeError: All input tensors must be on the same device. Received cuda:0 and cpu
# bug: when no initial hidden state is passed, the recurrent graph cell creates it with
#      torch.zeros(...) on the CPU and concatenates it with the CUDA node features.
import torch
from torch_geometric.nn import GCNConv


class DCRNN(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super(DCRNN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.conv_x_z = GCNConv(in_channels + out_channels, out_channels)
        self.conv_x_r = GCNConv(in_channels + out_channels, out_channels)
        self.conv_x_h = GCNConv(in_channels + out_channels, out_channels)

    def _set_hidden_state(self, X, H):
        if H is None:
            H = torch.zeros(X.shape[0], self.out_channels).to(X.device)
        return H

    def _calculate_update_gate(self, X, edge_index, edge_weight, H):
        Z = torch.cat([X, H], dim=1)
        return torch.sigmoid(self.conv_x_z(Z, edge_index, edge_weight))

    def _calculate_reset_gate(self, X, edge_index, edge_weight, H):
        R = torch.cat([X, H], dim=1)
        return torch.sigmoid(self.conv_x_r(R, edge_index, edge_weight))

    def _calculate_candidate_state(self, X, edge_index, edge_weight, H, R):
        H_tilde = torch.cat([X, H * R], dim=1)
        return torch.tanh(self.conv_x_h(H_tilde, edge_index, edge_weight))

    def forward(self, X, edge_index, edge_weight=None, H=None):
        H = self._set_hidden_state(X, H)
        Z = self._calculate_update_gate(X, edge_index, edge_weight, H)
        R = self._calculate_reset_gate(X, edge_index, edge_weight, H)
        H_tilde = self._calculate_candidate_state(X, edge_index, edge_weight, H, R)
        return Z * H + (1 - Z) * H_tilde
