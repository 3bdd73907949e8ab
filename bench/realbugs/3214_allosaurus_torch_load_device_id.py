# source: https://github.com/xinjli/allosaurus/issues/4
# error: (issue) "specifying any device ID other than 0 (like say 1) still runs the inference on GPU 0"
#        (python -m allosaurus.run --device_id 1 -i <audio>; the reporter's workaround is CUDA_VISIBLE_DEVICES)
# bug: run.py takes the GPU from --device_id (-1 = CPU); read_recognizer -> read_am builds the acoustic model and
#      am/utils.torch_load restores the released weights with a bare torch.load(str(path)) whenever device_id >= 0,
#      so the GPU-saved state dict comes back on the GPU it was saved from (cuda:0) before the model is moved with
#      model.cuda(device_id) - a run on --device_id 1 allocates on GPU 0 (and a machine without that GPU cannot load
#      it). The reporter's PR #7 (commit 1fd423b, "Fixed torch_load to load on GPU device_id rather than GPU 0") adds
#      map_location=torch.device(f'cuda:{device_id}'); that line is marked (DL301). Reductions: the acoustic model is
#      an LSTM and a linear phone layer; the preprocess model (audio -> features) and the phone inventory/LM are a
#      random feature matrix and an argmax; the features are built with torch instead of NumPy (np.expand_dims,
#      ndarray_to_tensor) and apply_to_tensor's recursion is a list comprehension; the model's forward leaves out
#      upstream's pack_padded_sequence/pad_packed_sequence over input_lengths (which move_to_tensor also puts on
#      cuda:device_id); the released model.pt is written
#      by the driver (from cuda:0 on a GPU machine) when missing.
import argparse
import os
from collections import OrderedDict
from pathlib import Path

import torch
import torch.nn as nn


class AllosaurusTorchModel(nn.Module):
    def __init__(self, input_size=40, hidden_size=32, phone_size=10):
        super().__init__()
        self.blstm_layer = nn.LSTM(input_size, hidden_size, batch_first=True, bidirectional=True)
        self.phone_layer = nn.Linear(hidden_size * 2, phone_size)

    def forward(self, input_tensor, input_lengths):
        hidden, _ = self.blstm_layer(input_tensor)
        return torch.log_softmax(self.phone_layer(hidden), dim=-1)


# --- am/utils.py ---
def torch_load(model, path, device_id, unit_mask=None):
    if device_id >= 0:
        model_state_dict = torch.load(str(path))  # expect: DL301
    else:
        model_state_dict = torch.load(str(path), map_location=torch.device('cpu'))

    new_state_dict = OrderedDict()
    for k, v in model_state_dict.items():
        if k.startswith('allophone_layer_dict'):
            continue
        if k.startswith('module.'):
            name = k[7:]
        else:
            name = k
        new_state_dict[name] = v

    if hasattr(model, 'module'):
        model.module.load_state_dict(new_state_dict)
    else:
        model.load_state_dict(new_state_dict)

    if device_id >= 0:
        model = model.cuda(device_id)

    del model_state_dict, new_state_dict


def tensor_to_cuda(sample, device_id=0):
    return [tensor.to(device_id) for tensor in sample]


def move_to_tensor(sample, device_id=-1):
    if device_id >= 0:
        sample = tensor_to_cuda(sample, device_id)
    return sample


# --- am/factory.py ---
def read_am(model_path, inference_config):
    model = AllosaurusTorchModel()
    torch_load(model, str(model_path / 'model.pt'), inference_config.device_id)
    return model


# --- app.py ---
def read_recognizer(inference_config):
    model_path = Path(inference_config.model)
    assert model_path.exists(), f"{inference_config.model} is not a valid model"
    am = read_am(model_path, inference_config)
    return Recognizer(am, inference_config)


class Recognizer:
    def __init__(self, am, config):
        self.am = am
        self.config = config

    def recognize(self, filename, lang_id):
        feat = torch.randn(50, 40)
        feats = feat.unsqueeze(0)
        feat_len = torch.tensor([feat.shape[0]], dtype=torch.int32)
        tensor_batch_feat, tensor_batch_feat_len = move_to_tensor([feats, feat_len], self.config.device_id)
        tensor_batch_lprobs = self.am(tensor_batch_feat, tensor_batch_feat_len)
        if self.config.device_id >= 0:
            batch_lprobs = tensor_batch_lprobs.cpu().detach()
        else:
            batch_lprobs = tensor_batch_lprobs.detach()
        return batch_lprobs[0].argmax(-1).tolist()


if __name__ == '__main__':
    parser = argparse.ArgumentParser('Allosaurus phone recognizer')
    parser.add_argument('-d', '--device_id', type=int, default=-1, help='cuda device id, -1 means cpu')
    parser.add_argument('-m', '--model', type=str, default='/tmp/allosaurus_latest')
    parser.add_argument('-l', '--lang', type=str, default='ipa')
    parser.add_argument('-i', '--input', type=str, default='sample.wav')
    args = parser.parse_args()

    if not os.path.exists(os.path.join(args.model, 'model.pt')):
        os.makedirs(args.model, exist_ok=True)
        released = AllosaurusTorchModel()
        if torch.cuda.is_available():
            released = released.cuda(0)
        torch.save(released.state_dict(), os.path.join(args.model, 'model.pt'))

    recognizer = read_recognizer(args)
    phones = recognizer.recognize(args.input, args.lang)
    print(phones)
