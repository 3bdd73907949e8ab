# source: https://github.com/huggingface/trl/pull/515
# error: RuntimeError: CUDA error: invalid device ordinal (PR: "With this fix, it is possible to run training in
#        multi-node environments and avoid the dreaded RuntimeError: CUDA error: invalid device ordinal")
# bug: trl/models/modeling_base.py's PreTrainedModelWrapper._get_current_device returns Accelerator().process_index,
#      the job-wide rank, as the CUDA device index; from_pretrained puts it in device_map={"": current_device} for
#      8-bit/4-bit loads (and the reward adapter's score head is moved .to() it), so on every node after the first the
#      model is placed on a GPU index the node does not have. The fix (commit 36b77ae) returns
#      dummy_accelerator.local_process_index instead; the process_index line is marked (DL309). Reductions:
#      from_pretrained keeps the argument split (without the peft quantization kwargs), the quantized-load device_map
#      override and the parent class load (the peft adapter, reward adapter and v_head state loading are cut);
#      AutoModelForCausalLMWithValueHead keeps its class attributes and a Linear value head; the driver is a PPO
#      script's model load under a multi-node `accelerate launch`. accelerate and transformers are imported as upstream
#      (absent here), so the file does not run on this machine; the checkpoint is downloaded as upstream.
import logging

import torch
import torch.nn as nn
from accelerate import Accelerator
from transformers import AutoModelForCausalLM


# --- trl/models/modeling_base.py ---
class PreTrainedModelWrapper(nn.Module):
    transformers_parent_class = None
    supported_args = None

    def __init__(self, pretrained_model=None, **kwargs):
        super().__init__()
        self.pretrained_model = pretrained_model
        self.config = pretrained_model.config
        self.is_loaded_in_8bit = getattr(pretrained_model, "is_loaded_in_8bit", False)
        self.is_loaded_in_4bit = getattr(pretrained_model, "is_loaded_in_4bit", False)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        if kwargs is not None:
            trl_model_args, pretrained_kwargs = cls._split_kwargs(kwargs)
        else:
            trl_model_args, pretrained_kwargs = {}, {}

        current_device = cls._get_current_device()
        if isinstance(pretrained_model_name_or_path, str):
            is_loaded_in_8bit = pretrained_kwargs["load_in_8bit"] if "load_in_8bit" in pretrained_kwargs else False
            is_loaded_in_4bit = pretrained_kwargs["load_in_4bit"] if "load_in_4bit" in pretrained_kwargs else False
        else:
            is_loaded_in_8bit = getattr(pretrained_model_name_or_path, "is_loaded_in_8bit", False)
            is_loaded_in_4bit = getattr(pretrained_model_name_or_path, "is_loaded_in_4bit", False)

        if (is_loaded_in_8bit or is_loaded_in_4bit) and "device_map" not in pretrained_kwargs:
            # warn users
            logging.warning(
                "The `device_map` argument is not provided. We will override the device_map argument."
                " to set the entire"
                " model on the current device. If you want to set the model on multiple devices, please provide"
                " a custom `device_map` argument."
            )
            pretrained_kwargs["device_map"] = {"": current_device}

        pretrained_model = cls.transformers_parent_class.from_pretrained(
            pretrained_model_name_or_path, *model_args, **pretrained_kwargs
        )
        model = cls(pretrained_model, **trl_model_args)
        return model

    @classmethod
    def _get_current_device(cls):
        dummy_accelerator = Accelerator()
        current_device = dummy_accelerator.process_index  # expect: DL309
        return current_device if torch.cuda.is_available() else "cpu"

    @classmethod
    def _split_kwargs(cls, kwargs):
        supported_kwargs = {}
        unsupported_kwargs = {}
        for key, value in kwargs.items():
            if key in cls.supported_args:
                supported_kwargs[key] = value
            else:
                unsupported_kwargs[key] = value
        return supported_kwargs, unsupported_kwargs


# --- trl/models/modeling_value_head.py ---
class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper):
    transformers_parent_class = AutoModelForCausalLM
    supported_args = ("summary_dropout_prob", "v_head_initializer_range", "v_head_init_strategy")

    def __init__(self, pretrained_model, **kwargs):
        super().__init__(pretrained_model, **kwargs)
        self.v_head = nn.Linear(self.config.hidden_size, 1)


# --- a PPO script under a two-node `accelerate launch` ---
if __name__ == "__main__":
    model = AutoModelForCausalLMWithValueHead.from_pretrained("facebook/opt-350m", load_in_8bit=True)
    print(model.pretrained_model.device)
