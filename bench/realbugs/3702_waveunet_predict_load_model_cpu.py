# source: https://github.com/f90/Wave-U-Net-Pytorch/issues/3
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
#        (predict.py line 23, utils.load_model(model, None, args.load_model) -> utils.py line 140,
#        checkpoint = torch.load(path))
# bug: predict.py only moves the Waveunet to the GPU with --cuda, but utils.load_model reads the (GPU-trained)
#      checkpoint with a bare torch.load(path), so running without --cuda on a machine without an NVIDIA GPU fails
#      while loading. The fix (commit 0dd7c7d "Force loading model into CPU if --cuda flag not set (fix issue #3)")
#      gives load_model a cuda argument, loads with map_location='cpu' when it is false, and passes args.cuda from
#      predict.py (and train.py); the torch.load line is marked (DL301).
#      Reductions: Waveunet becomes a one-conv-per-instrument separator with the same constructor call and
#      separate/instruments attributes; test.predict_song keeps model.eval() and `sources = predict(mix_audio, model)`,
#      and test.predict keeps the torch.from_numpy(...).unsqueeze(0) frame (left on the CPU: DataParallel scatters
#      it), utils.compute_output and the .squeeze(0).cpu().numpy() conversion, but both run on one random stereo
#      NumPy excerpt instead of loading, resampling, padding and framing the mixture with librosa/NumPy, and
#      write_wav's soundfile call is kept; most of the argparse options are kept, train.py is not. As upstream the
#      script reads the checkpoint at --load_model, absent here, and soundfile is imported as upstream (absent here),
#      so the file does not run on this machine.
import argparse
import os
from collections import OrderedDict

import numpy as np
import soundfile
import torch
import torch.nn as nn


# --- utils.py ---
def compute_output(model, inputs):
    all_outputs = {}

    if model.separate:
        for inst in model.instruments:
            output = model(inputs, inst)
            all_outputs[inst] = output[inst].detach().clone()
    else:
        all_outputs = model(inputs)

    return all_outputs


def write_wav(path, audio, sr):
    soundfile.write(path, audio.T, sr, "PCM_16")


class DataParallel(torch.nn.DataParallel):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super(DataParallel, self).__init__(module, device_ids, output_device, dim)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


def load_model(model, optimizer, path):
    if isinstance(model, torch.nn.DataParallel):
        model = model.module  # load state dict of wrapped module
    checkpoint = torch.load(path)  # expect: DL301
    try:
        model.load_state_dict(checkpoint['model_state_dict'])
    except:
        # work-around for loading checkpoints where DataParallel was saved instead of inner module
        model_state_dict_fixed = OrderedDict()
        prefix = 'module.'
        for k, v in checkpoint['model_state_dict'].items():
            if k.startswith(prefix):
                k = k[len(prefix):]
            model_state_dict_fixed[k] = v
        model.load_state_dict(model_state_dict_fixed)
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
    if 'state' in checkpoint:
        state = checkpoint['state']
    else:
        # older checkpoints only store step, rest of state won't be there
        state = {'step': checkpoint['step']}
    return state


# --- waveunet.py (stand-in) ---
class Waveunet(nn.Module):
    def __init__(self, num_inputs, num_channels, num_outputs, instruments, kernel_size, target_output_size,
                 conv_type, res, separate=False, depth=1, strides=2):
        super(Waveunet, self).__init__()
        self.instruments = instruments
        self.separate = separate
        self.waveunets = nn.ModuleDict({inst: nn.Conv1d(num_inputs, num_outputs, kernel_size, padding=kernel_size // 2)
                                        for inst in instruments})

    def forward(self, x, inst=None):
        if not self.separate:
            return {i: self.waveunets[i](x) for i in self.instruments}
        return {inst: self.waveunets[inst](x)}


# --- test.py (reduced) ---
def predict(audio, model):
    outputs = {}

    # Iterate over mixture magnitudes, fetch network prediction
    with torch.no_grad():
        # Convert to Pytorch tensor for model prediction
        curr_input = torch.from_numpy(audio).unsqueeze(0)

        # Predict
        for key, curr_targets in compute_output(model, curr_input).items():
            outputs[key] = curr_targets.squeeze(0).cpu().numpy()

    return outputs


def predict_song(args, audio_path, model):
    model.eval()

    mix_audio = np.random.rand(args.channels, int(args.output_size * args.sr)).astype(np.float32)

    sources = predict(mix_audio, model)

    return sources


# --- predict.py ---
def main(args):
    # MODEL
    num_features = [args.features*i for i in range(1, args.levels+1)] if args.feature_growth == "add" else \
                   [args.features*2**i for i in range(0, args.levels)]
    target_outputs = int(args.output_size * args.sr)
    model = Waveunet(args.channels, num_features, args.channels, args.instruments, kernel_size=args.kernel_size,
                     target_output_size=target_outputs, depth=args.depth, strides=args.strides,
                     conv_type=args.conv_type, res=args.res, separate=args.separate)

    if args.cuda:
        model = DataParallel(model)
        print("move model to gpu")
        model.cuda()

    print("Loading model from checkpoint " + str(args.load_model))
    state = load_model(model, None, args.load_model)
    print('Step', state['step'])

    preds = predict_song(args, args.input, model)

    output_folder = os.path.dirname(args.input) if args.output is None else args.output
    for inst in preds.keys():
        write_wav(os.path.join(output_folder, os.path.basename(args.input) + "_" + inst + ".wav"), preds[inst], args.sr)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--instruments', type=str, nargs='+', default=["bass", "drums", "other", "vocals"])
    parser.add_argument('--cuda', action='store_true', help='Use CUDA (default: False)')
    parser.add_argument('--features', type=int, default=32)
    parser.add_argument('--load_model', type=str, default='checkpoints/waveunet/model')
    parser.add_argument('--levels', type=int, default=6)
    parser.add_argument('--depth', type=int, default=1)
    parser.add_argument('--sr', type=int, default=44100)
    parser.add_argument('--channels', type=int, default=2)
    parser.add_argument('--kernel_size', type=int, default=5)
    parser.add_argument('--output_size', type=float, default=2.0)
    parser.add_argument('--strides', type=int, default=4)
    parser.add_argument('--conv_type', type=str, default="gn")
    parser.add_argument('--res', type=str, default="fixed")
    parser.add_argument('--separate', type=int, default=1)
    parser.add_argument('--feature_growth', type=str, default="double")
    parser.add_argument('--input', type=str, default=os.path.join("audio_examples", "Cristina Vane - So Easy", "mix.mp3"))
    parser.add_argument('--output', type=str, default=None)

    args = parser.parse_args()

    main(args)
