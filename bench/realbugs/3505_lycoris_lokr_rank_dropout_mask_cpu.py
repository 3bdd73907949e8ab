# source: https://github.com/KohakuBlueleaf/LyCORIS/issues/291
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (lycoris/modules/lokr.py line 378, in get_weight: weight *= drop; LoKr trained with rank_dropout=0.05 on CUDA)
# bug: LokrModule.get_weight rebuilds the weight delta from the Kronecker factors, which live on the GPU with the
#      network, and, in training with rank_dropout, draws the per-row mask with torch.rand(weight.size(0)), a CPU
#      tensor; the in-place weight *= drop then mixes the CUDA weight with the CPU mask (a (rows, 1) tensor, not a
#      0-dim one). The reporter names the cause and the change (torch.rand(..., device=weight.device)); the issue is
#      open and the newest stored snapshot (f49d30d, 2025-10-04) predates it, so no fix is known: no twin. The mask's
#      line, the line the proposed change edits, is marked (DL202); the in-place product the traceback points to is the
#      DL201 candidate. Reductions: LycorisBaseModule keeps the Linear case (op, shape, multiplier, the dropout
#      settings, org_forward, apply_to); LokrModule keeps the Linear branch with full w1 and w2 factors (use_w1,
#      use_w2), the scale and the scalar buffer, get_weight and the non-bypass forward; DoRA, Tucker, conv, bypass
#      mode and the state-dict hooks are dropped. The driver stands for an sd-scripts style trainer: a two-Linear
#      model, one LoKr wrapper per Linear collected in a ModuleList network, all moved to cuda when available.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- lycoris/functional/general.py, lokr.py ---
def factorization(dimension: int, factor: int = -1):
    if factor > 0 and (dimension % factor) == 0:
        m = factor
        n = dimension // factor
        if m > n:
            n, m = m, n
        return m, n
    if factor < 0:
        factor = dimension
    m, n = 1, dimension
    length = m + n
    while m < n:
        new_m = m + 1
        while dimension % new_m != 0:
            new_m += 1
        new_n = dimension // new_m
        if new_m + new_n > length or new_m > factor:
            break
        m, n = new_m, new_n
    if m > n:
        n, m = m, n
    return m, n


def make_kron(w1, w2, scale):
    for _ in range(w2.dim() - w1.dim()):
        w1 = w1.unsqueeze(-1)
    w2 = w2.contiguous()
    rebuild = torch.kron(w1, w2)
    if scale != 1:
        rebuild = rebuild * scale
    return rebuild


# --- lycoris/modules/base.py ---
class LycorisBaseModule(nn.Module):
    def __init__(self, lora_name, org_module: nn.Module, multiplier=1.0, dropout=0.0, rank_dropout=0.0,
                 module_dropout=0.0, rank_dropout_scale=False, bypass_mode=None, **kwargs):
        super().__init__()
        self.lora_name = lora_name
        self.module_type = "linear"
        self.shape = (org_module.out_features, org_module.in_features)
        self.op = F.linear
        self.kw_dict = {}
        self.bypass_mode = bypass_mode
        self.dropout = dropout
        self.rank_dropout = rank_dropout
        self.rank_dropout_scale = rank_dropout_scale
        self.module_dropout = module_dropout
        self.multiplier = multiplier
        self.org_forward = org_module.forward
        self.org_module = [org_module]

    def _current_weight(self):
        return self.org_module[0].weight.detach()

    def apply_to(self, **kwargs):
        module = self.org_module[0]
        self.org_forward = module.forward
        module.forward = self.forward


# --- lycoris/modules/lokr.py ---
class LokrModule(LycorisBaseModule):
    def __init__(self, lora_name, org_module: nn.Module, multiplier=1.0, lora_dim=4, alpha=1, dropout=0.0,
                 rank_dropout=0.0, module_dropout=0.0, factor: int = -1, rank_dropout_scale=False,
                 full_matrix=False, **kwargs):
        super().__init__(lora_name, org_module, multiplier, dropout, rank_dropout, module_dropout,
                         rank_dropout_scale)
        in_dim = org_module.in_features
        out_dim = org_module.out_features
        self.shape = (out_dim, in_dim)
        in_m, in_n = factorization(in_dim, factor)
        out_l, out_k = factorization(out_dim, factor)
        shape = ((out_l, out_k), (in_m, in_n))
        self.use_w1 = True
        self.lokr_w1 = nn.Parameter(torch.empty(shape[0][0], shape[1][0]))
        self.use_w2 = True
        self.lokr_w2 = nn.Parameter(torch.empty(shape[0][1], shape[1][1]))
        alpha = lora_dim  # use_w1 and use_w2: scale = 1
        self.scale = alpha / lora_dim
        self.register_buffer("alpha", torch.tensor(alpha * 1.0))
        self.register_buffer("scalar", torch.tensor(1.0), persistent=False)
        torch.nn.init.constant_(self.lokr_w2, 0)
        torch.nn.init.kaiming_uniform_(self.lokr_w1, a=math.sqrt(5))

    def get_weight(self, shape):
        weight = make_kron(self.lokr_w1, self.lokr_w2, self.scale)
        dtype = weight.dtype
        if shape is not None:
            weight = weight.view(shape)
        if self.training and self.rank_dropout:
            drop = (torch.rand(weight.size(0)) > self.rank_dropout).to(dtype)  # expect: DL202
            drop = drop.view(-1, *[1] * len(weight.shape[1:]))
            if self.rank_dropout_scale:
                drop /= drop.mean()
            weight *= drop
        return weight

    def forward(self, x: torch.Tensor, *args, **kwargs):
        if self.module_dropout and self.training:
            if torch.rand(1) < self.module_dropout:
                return self.org_forward(x, *args, **kwargs)
        base = self.org_forward(x, *args, **kwargs)
        base_weight = self._current_weight().to(x.device)
        diff_weight = self.get_weight(self.shape).to(base_weight.dtype) * self.scalar
        if self.multiplier == 1:
            new_weight = base_weight + diff_weight
        else:
            new_weight = base_weight + diff_weight * self.multiplier
        delta_weight = new_weight - base_weight
        delta = self.op(x, delta_weight, None, **self.kw_dict)
        return base + delta


# --- the trainer (an sd-scripts style driver) ---
if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    unet = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
    loras = [LokrModule(f"lora_unet_{i}", m, multiplier=1.0, lora_dim=4, alpha=1, rank_dropout=0.05,
                        factor=8, full_matrix=True)
             for i, m in enumerate(unet) if isinstance(m, nn.Linear)]
    for lora in loras:
        lora.apply_to()
    network = nn.ModuleList(loras)
    unet.requires_grad_(False)
    unet.to(device)
    network.to(device)
    network.train()
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-4)
    latents = torch.randn(4, 32, device=device)
    target = torch.randn(4, 32, device=device)
    loss = F.mse_loss(unet(latents), target)
    loss.backward()
    optimizer.step()
    print(loss.item())
