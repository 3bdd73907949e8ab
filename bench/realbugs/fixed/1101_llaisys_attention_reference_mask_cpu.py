# source: https://github.com/InfiniTensor/llaisys/pull/11
# fixed twin: the causal keep-mask is made on the query's device, as the PR does.
import argparse

import torch


def random_tensor(shape, dtype_name, device_name):
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    device = torch.device("cuda" if device_name == "nvidia" else "cpu")
    return torch.rand(shape, dtype=dtype, device=device) * 0.2 - 0.1


def torch_self_attention(attn_val, query, key, value, scale):
    query = query.transpose(-2, -3)
    key = key.transpose(-2, -3)
    value = value.transpose(-2, -3)
    L, S = query.size(-2), key.size(-2)
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    temp_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=S - L)
    attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
    value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    attn_weight = query @ key.transpose(-2, -1) * scale
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_val.copy_((attn_weight @ value).transpose(-2, -3))


def test_op_self_attention(qlen, kvlen, nh, nkvh, hd, dtype_name="f32", device_name="cpu"):
    q = random_tensor((qlen, nh, hd), dtype_name, device_name)
    k = random_tensor((kvlen, nkvh, hd), dtype_name, device_name)
    v = random_tensor((kvlen, nkvh, hd), dtype_name, device_name)
    out = random_tensor((qlen, nh, hd), dtype_name, device_name)
    torch_self_attention(out, q, k, v, 1.0 / hd**0.5)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="nvidia" if torch.cuda.is_available() else "cpu", choices=["cpu", "nvidia"])
    args = parser.parse_args()
    for shape in [(2, 2, 1, 1, 4), (5, 11, 4, 2, 8)]:
        print(test_op_self_attention(*shape, "f32", args.device).shape)
