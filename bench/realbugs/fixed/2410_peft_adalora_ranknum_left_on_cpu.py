# source: https://github.com/huggingface/peft/pull/583
# fixed twin: _replace_module also moves the submodules named "ranknum" to the old weight's device (commit 019b7ff, PR 583).
import torch
import torch.nn as nn
import torch.nn.functional as F


class AdaLoraLayer:
    def __init__(self, in_features, out_features):
        self.r = {}
        self.lora_alpha = {}
        self.scaling = {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ParameterDict({})
        self.lora_E = nn.ParameterDict({})
        self.lora_B = nn.ParameterDict({})
        self.ranknum = nn.ParameterDict({})
        self.in_features = in_features
        self.out_features = out_features

    def update_layer(self, adapter_name, r, lora_alpha, lora_dropout):
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout.update(nn.ModuleDict({adapter_name: nn.Dropout(p=lora_dropout)}))
        self.lora_A.update(nn.ParameterDict({adapter_name: nn.Parameter(torch.zeros(r, self.in_features))}))
        self.lora_E.update(nn.ParameterDict({adapter_name: nn.Parameter(torch.zeros(r, 1))}))
        self.lora_B.update(nn.ParameterDict({adapter_name: nn.Parameter(torch.zeros(self.out_features, r))}))
        self.ranknum.update(nn.ParameterDict({adapter_name: nn.Parameter(torch.zeros(1), requires_grad=False)}))
        self.ranknum[adapter_name].data.fill_(float(r))
        self.scaling[adapter_name] = lora_alpha if lora_alpha > 0 else float(r)
        nn.init.normal_(self.lora_A[adapter_name], mean=0.0, std=0.02)
        nn.init.normal_(self.lora_B[adapter_name], mean=0.0, std=0.02)
        self.to(self.weight.device)


class SVDLinear(nn.Linear, AdaLoraLayer):
    def __init__(self, adapter_name, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.0):
        nn.Linear.__init__(self, in_features, out_features)
        AdaLoraLayer.__init__(self, in_features=in_features, out_features=out_features)
        self.weight.requires_grad = False
        self.update_layer(adapter_name, r, lora_alpha, lora_dropout)
        self.active_adapter = adapter_name

    def forward(self, x):
        result = F.linear(x, self.weight, bias=self.bias)
        a = self.active_adapter
        update = self.lora_dropout[a](x) @ (self.lora_A[a] * self.lora_E[a]).T @ self.lora_B[a].T
        result += update * self.scaling[a] / (self.ranknum[a] + 1e-5)
        return result


class AdaLoraModel(nn.Module):
    def __init__(self, model, r=6, lora_alpha=32, target_modules=("query_key_value",)):
        super().__init__()
        self.model = model
        for key, target in list(model.named_modules()):
            parent_name, _, child_name = key.rpartition(".")
            if child_name not in target_modules:
                continue
            parent = model.get_submodule(parent_name) if parent_name else model
            new_module = SVDLinear("default", target.in_features, target.out_features, r=r, lora_alpha=lora_alpha)
            self._replace_module(parent, child_name, new_module, target)

    def _replace_module(self, parent_module, child_name, new_module, old_module):
        setattr(parent_module, child_name, new_module)
        new_module.weight = old_module.weight
        if old_module.bias is not None:
            new_module.bias = old_module.bias
        for name, module in new_module.named_modules():
            if "lora_" in name:
                module.to(old_module.weight.device)
            if "ranknum" in name:
                module.to(old_module.weight.device)

    def forward(self, x):
        return self.model(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query_key_value = nn.Linear(dim, dim)
        self.dense = nn.Linear(dim, dim)

    def forward(self, x):
        return self.dense(torch.relu(self.query_key_value(x)))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    base = nn.Sequential(Block(16), Block(16)).to(device)
    model = AdaLoraModel(base)
    x = torch.randn(4, 16, device=device)
    loss = model(x).pow(2).mean()
    loss.backward()
    print(float(loss))
