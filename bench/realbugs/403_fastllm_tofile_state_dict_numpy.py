# source: https://github.com/ztxz16/fastllm/issues/231
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the exporter walks the model's state_dict and calls .numpy() on every weight to write it to
#      the flm file; it assumes the model is on the CPU, but a model loaded onto the GPU (as the
#      conversion script for some models does) hands it CUDA tensors. Fix from the thread: .cpu() first.
import struct

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def write_string(fo, s):
    data = s.encode()
    fo.write(struct.pack("i", len(data)))
    fo.write(data)


def tofile(export_path, model, tokenizer, dtype="float16"):
    weights = model.state_dict()
    with open(export_path, "wb") as fo:
        write_string(fo, type(model).__name__)
        fo.write(struct.pack("i", len(weights)))
        for key in weights:
            cur = weights[key].numpy().astype("float16" if dtype == "float16" else "float32")  # expect: DL204
            write_string(fo, key)
            fo.write(struct.pack("i", len(cur.shape)))
            for dim in cur.shape:
                fo.write(struct.pack("i", dim))
            fo.write(cur.tobytes())


if __name__ == "__main__":
    name = "baichuan-inc/Baichuan2-7B-Chat"
    tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(name, trust_remote_code=True, torch_dtype=torch.float16)
    model = model.cuda().eval()
    tofile("baichuan2-7b-fp16.flm", model, tokenizer)
