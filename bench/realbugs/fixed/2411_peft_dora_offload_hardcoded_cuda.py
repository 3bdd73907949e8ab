# source: https://github.com/huggingface/peft/pull/3734
# fixed twin: the offloaded factors are moved to the base layer's device, module.get_base_layer().weight.device, instead of xpu/cuda (the change PR 3734 proposes).
import torch
import torch.nn as nn


def is_xpu_available():
    return hasattr(torch, "xpu") and torch.xpu.is_available()


class DoraLinearLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = None

    def update_layer(self, base_layer, lora_A, lora_B, scaling, place_on_cpu=False):
        weight = base_layer.weight
        lora_weight = (lora_B @ lora_A).to(weight.device)
        weight_norm = (weight + scaling * lora_weight).norm(p=2, dim=1)
        if place_on_cpu:
            weight_norm = weight_norm.to("cpu")
        self.weight = nn.Parameter(weight_norm, requires_grad=True)


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=4, alpha=8, ephemeral_gpu_offload=False):
        super().__init__()
        self.base_layer = base_layer
        self.ephemeral_gpu_offload = ephemeral_gpu_offload
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling = {"default": alpha / r}
        self.lora_magnitude_vector = nn.ModuleDict()

    def get_base_layer(self):
        return self.base_layer


class DoraLinearVariant:
    @staticmethod
    def init(module, adapter_name):
        dora_layer = DoraLinearLayer()
        lora_A = module.lora_A[adapter_name].weight
        lora_B = module.lora_B[adapter_name].weight
        place_on_cpu = module.ephemeral_gpu_offload and (lora_A.device.type == "cpu" or lora_B.device.type == "cpu")
        if module.ephemeral_gpu_offload:
            if lora_A.device.type in ["cuda", "xpu"]:
                lora_B = lora_B.to(lora_A.device)
            else:
                if lora_B.device.type not in ["cuda", "xpu"]:
                    lora_B = lora_B.to(module.get_base_layer().weight.device)
                lora_A = lora_A.to(lora_B.device)
        dora_layer.update_layer(base_layer=module.get_base_layer(), lora_A=lora_A, lora_B=lora_B,
                                scaling=module.scaling[adapter_name], place_on_cpu=place_on_cpu)
        module.lora_magnitude_vector[adapter_name] = dora_layer


if __name__ == "__main__":
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    base = nn.Linear(32, 32).to(accelerator)
    layer = LoraLinear(base, ephemeral_gpu_offload=True)
    DoraLinearVariant.init(layer, "default")
    print(layer.lora_magnitude_vector["default"].weight.shape)
