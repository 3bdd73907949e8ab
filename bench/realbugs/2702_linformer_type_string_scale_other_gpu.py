# source: https://github.com/tatp22/linformer-pytorch/issues/22
# error: RuntimeError in the DDP process of rank 1 (the message is cut off in the stored report): the scale is on cuda:0, the scores on cuda:1
# bug: each linear-attention head scales its scores by sqrt(dim) built as torch.tensor(dim).type(Q.type()). The
#      type string "torch.cuda.FloatTensor" carries no index, so the scale is made on the current GPU (cuda:0, the
#      training script never sets it per process), while the process of rank 1 runs on cuda:1. The maintainer's
#      fix (release 0.19.3) appends .to(Q.device) to that line, which is marked (DL313: a type-string cast that
#      picks the current GPU, not the tensor's).
import torch
import torch.nn as nn


def get_linear(input_size, dim):
    lin = nn.Linear(input_size, dim)
    nn.init.xavier_normal_(lin.weight)
    return lin


class LinearAttentionHead(nn.Module):
    def __init__(self, dim, dropout, E_proj, F_proj):
        super().__init__()
        self.E = E_proj
        self.F = F_proj
        self.dim = dim
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V):
        K = torch.transpose(K, 1, 2)
        K = self.E(K)
        Q = torch.matmul(Q, K)
        P_bar = Q / torch.sqrt(torch.tensor(self.dim).type(Q.type()))  # expect: DL313
        P_bar = self.dropout(P_bar.softmax(dim=-1))
        V = torch.transpose(V, 1, 2)
        V = torch.transpose(self.F(V), 1, 2)
        return torch.matmul(P_bar, V)


class MHAttention(nn.Module):
    def __init__(self, input_size, channels, dim_k, nhead, dropout=0.1):
        super().__init__()
        dim = channels // nhead
        self.heads = nn.ModuleList()
        self.to_q = nn.ModuleList()
        self.to_k = nn.ModuleList()
        self.to_v = nn.ModuleList()
        for _ in range(nhead):
            E, F = get_linear(input_size, dim_k), get_linear(input_size, dim_k)
            self.heads.append(LinearAttentionHead(dim, dropout, E, F))
            self.to_q.append(nn.Linear(channels, dim))
            self.to_k.append(nn.Linear(channels, dim))
            self.to_v.append(nn.Linear(channels, dim))
        self.w_o = nn.Linear(dim * nhead, channels)

    def forward(self, tensor):
        outs = []
        for head, q, k, v in zip(self.heads, self.to_q, self.to_k, self.to_v):
            outs.append(head(q(tensor), k(tensor), v(tensor)))
        return self.w_o(torch.cat(outs, dim=-1))


class LinformerLM(nn.Module):
    def __init__(self, num_tokens, input_size, channels, dim_k, nhead):
        super().__init__()
        self.embed = nn.Embedding(num_tokens, channels)
        self.attn = MHAttention(input_size, channels, dim_k, nhead)
        self.to_logits = nn.Linear(channels, num_tokens)

    def forward(self, tokens):
        return self.to_logits(self.attn(self.embed(tokens)))


def demo_basic(rank, world_size):
    device = torch.device(f"cuda:{rank}" if torch.cuda.device_count() > rank else "cpu")
    model = LinformerLM(num_tokens=100, input_size=32, channels=16, dim_k=8, nhead=2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    tokens = torch.randint(100, (3, 32)).to(device)
    outputs = model(tokens)
    loss = nn.functional.cross_entropy(outputs.transpose(1, 2), tokens)
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    world_size = 2
    for rank in range(world_size):
        print(rank, demo_basic(rank, world_size))
