# source: https://github.com/TransformerLensOrg/TransformerLens/issues/217
# error: (issue) HookedTransformer.from_pretrained(model_name, device="cuda:2"); logits, cache =
#        model.run_with_cache(token) - logits on device 2, model.cfg.device cuda:2, but
#        cache["blocks.0.mlp.hook_post"].get_device() is 0 ("cache is not set to the same device as the model")
# bug: HookedTransformer places its weights and activations on cfg.device, but HookedRootModule.run_with_cache (which
#      HookedTransformer.run_with_cache wraps, passing no device) gets its hooks from get_caching_hooks, and that - like
#      add_caching_hooks - replaces device=None with "cuda" if torch.cuda.is_available() else "cpu"; each save_hook
#      then copies the activation to the current GPU with tensor.detach().to(device), so a model on cuda:2 fills its
#      cache on cuda:0 (and any later arithmetic between cache and logits mixes devices). The fix (commit 25a9c07,
#      PR #250 "Device aware cache", which closed #217 and #202) drops both defaults, so .to(None) keeps each
#      activation on its layer's device; the two default lines are marked (DL302, the closest: a hard-coded "cuda"
#      in code whose device comes from the model's configuration). Reductions: the transformer is an embedding, two
#      blocks with an MLP and hook points, and an unembedding; LensHandle keeps its fields; ActivationCache is the plain
#      dict; backward hooks, contexts and the other HookedRootModule helpers are dropped; to_tokens maps characters to
#      ids. The bug needs a second GPU (--device cuda:1).
# versions: hook_points.py is the one just before the fix (25a9c07^: run_with_cache gets its hooks from
#      get_caching_hooks inside hooks(), both added in 97cc6cfa on 2023-03-26, after the issue was filed); the model's
#      placement (self.to(cfg.device)) is the issue-time code (0fb07cf, where run_with_cache called add_caching_hooks
#      directly, with the same "cuda" default). At 25a9c07^ itself get_device_for_block_index builds
#      torch.device("cuda:2", 0), which raises, so the reported symptom needs the issue-time placement; both marked
#      defaults are in both versions.
import argparse
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple, Union

import torch
import torch.nn as nn


# --- transformer_lens/hook_points.py ---
@dataclass
class LensHandle:
    hook: torch.utils.hooks.RemovableHandle
    is_permanent: bool = False
    context_level: Optional[int] = None


class HookPoint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fwd_hooks: List[LensHandle] = []
        self.ctx = {}
        self.name = None

    def add_hook(self, hook, dir="fwd", is_permanent=False, level=None) -> None:
        def full_hook(module, module_input, module_output):
            return hook(module_output, hook=self)
        handle = self.register_forward_hook(full_hook)
        self.fwd_hooks.append(LensHandle(handle, is_permanent, level))

    def remove_hooks(self, dir="fwd", including_permanent=False, level=None) -> None:
        output_handles = []
        for handle in self.fwd_hooks:
            if including_permanent or ((not handle.is_permanent) and (level is None or handle.context_level == level)):
                handle.hook.remove()
            else:
                output_handles.append(handle)
        self.fwd_hooks = output_handles

    def forward(self, x):
        return x


class HookedRootModule(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.is_caching = False
        self.context_level = 0

    def setup(self):
        self.mod_dict = {}
        self.hook_dict: Dict[str, HookPoint] = {}
        for name, module in self.named_modules():
            module.name = name
            self.mod_dict[name] = module
            if "HookPoint" in str(type(module)):
                self.hook_dict[name] = module

    def reset_hooks(self, clear_contexts=True, direction="both", including_permanent=False, level=None):
        for hp in self.hook_dict.values():
            hp.remove_hooks(direction, including_permanent=including_permanent, level=level)

    @contextmanager
    def hooks(self, fwd_hooks=[], bwd_hooks=[], reset_hooks_end=True, clear_contexts=False):
        try:
            self.context_level += 1
            for name, hook in fwd_hooks:
                if type(name) == str:
                    self.mod_dict[name].add_hook(hook, dir="fwd", level=self.context_level)
                else:
                    for hook_name, hp in self.hook_dict.items():
                        if name(hook_name):
                            hp.add_hook(hook, dir="fwd", level=self.context_level)
            yield self
        finally:
            if reset_hooks_end:
                self.reset_hooks(clear_contexts, including_permanent=False, level=self.context_level)
            self.context_level -= 1

    def add_caching_hooks(self, names_filter=None, incl_bwd=False, device=None, remove_batch_dim=False, cache=None):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: DL302
        if cache is None:
            cache = {}
        if names_filter is None:
            names_filter = lambda name: True
        elif type(names_filter) == str:
            filter_str = names_filter
            names_filter = lambda name: name == filter_str

        def save_hook(tensor, hook):
            if remove_batch_dim:
                cache[hook.name] = tensor.detach().to(device)[0]
            else:
                cache[hook.name] = tensor.detach().to(device)

        for name, hp in self.hook_dict.items():
            if names_filter(name):
                hp.add_hook(save_hook, "fwd")
        return cache

    def run_with_cache(self, *model_args, names_filter=None, device=None, remove_batch_dim=False, incl_bwd=False,
                       reset_hooks_end=True, clear_contexts=False, **model_kwargs):
        cache_dict, fwd, bwd = self.get_caching_hooks(names_filter, incl_bwd, device, remove_batch_dim=remove_batch_dim)
        with self.hooks(fwd_hooks=fwd, bwd_hooks=bwd, reset_hooks_end=reset_hooks_end, clear_contexts=clear_contexts):
            model_out = self(*model_args, **model_kwargs)
        return model_out, cache_dict

    def get_caching_hooks(self, names_filter=None, incl_bwd=False, device=None, remove_batch_dim=False, cache=None):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: DL302
        if cache is None:
            cache = {}
        if names_filter is None:
            names_filter = lambda name: True
        elif type(names_filter) == str:
            filter_str = names_filter
            names_filter = lambda name: name == filter_str

        def save_hook(tensor, hook):
            if remove_batch_dim:
                cache[hook.name] = tensor.detach().to(device)[0]
            else:
                cache[hook.name] = tensor.detach().to(device)

        fwd_hooks = []
        bwd_hooks = []
        for name, hp in self.hook_dict.items():
            if names_filter(name):
                fwd_hooks.append((name, save_hook))
        return cache, fwd_hooks, bwd_hooks


# --- transformer_lens/components.py, HookedTransformer.py ---
@dataclass
class HookedTransformerConfig:
    d_model: int = 16
    d_mlp: int = 32
    d_vocab: int = 128
    n_layers: int = 2
    device: Optional[str] = None


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.W_in = nn.Parameter(torch.randn(cfg.d_model, cfg.d_mlp) / cfg.d_model ** 0.5)
        self.W_out = nn.Parameter(torch.randn(cfg.d_mlp, cfg.d_model) / cfg.d_mlp ** 0.5)
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()

    def forward(self, x):
        pre_act = self.hook_pre(x @ self.W_in)
        post_act = self.hook_post(torch.relu(pre_act))
        return post_act @ self.W_out


class TransformerBlock(nn.Module):
    def __init__(self, cfg, block_index):
        super().__init__()
        self.mlp = MLP(cfg)
        self.hook_resid_pre = HookPoint()
        self.hook_resid_post = HookPoint()

    def forward(self, resid_pre):
        resid_pre = self.hook_resid_pre(resid_pre)
        return self.hook_resid_post(resid_pre + self.mlp(resid_pre))


class HookedTransformer(HookedRootModule):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)
        self.hook_embed = HookPoint()
        self.blocks = nn.ModuleList([TransformerBlock(cfg, block_index) for block_index in range(cfg.n_layers)])
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab)
        self.setup()

    @classmethod
    def from_pretrained(cls, model_name, device=None):
        cfg = HookedTransformerConfig(device=device or ("cuda" if torch.cuda.is_available() else "cpu"))
        model = cls(cfg)
        model.to(cfg.device)
        return model

    def to_tokens(self, text):
        return torch.tensor([[ord(c) % self.cfg.d_vocab for c in text]], device=self.cfg.device)

    def forward(self, tokens):
        residual = self.hook_embed(self.embed(tokens.to(self.cfg.device)))
        for block in self.blocks:
            residual = block(residual)
        return self.unembed(residual)

    def run_with_cache(self, *model_args, return_cache_object=True, remove_batch_dim=False, **kwargs):
        out, cache_dict = super().run_with_cache(*model_args, remove_batch_dim=remove_batch_dim, **kwargs)
        return out, cache_dict


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda:1" if torch.cuda.device_count() > 1 else None)
    args = parser.parse_args()
    model = HookedTransformer.from_pretrained("toy", device=args.device)
    token = model.to_tokens("testing 1 2 3")
    logits, cache = model.run_with_cache(token)
    print(logits.device)
    print(model.cfg.device)
    print(cache["blocks.0.mlp.hook_post"].device)
