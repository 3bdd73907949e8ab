# source: https://github.com/jiesutd/LatticeLSTM/pull/15
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: load_model_decode receives a `gpu` flag but always restores the (GPU-trained) state dict with a
#      plain torch.load, so decoding on a CPU-only machine fails; the CPU branch was commented out.
import argparse
import time

import torch

from model.seqmodel import SeqModel
from utils.data import Data
from main import evaluate


def load_model_decode(model_dir, data, name, gpu, seg=True):
    data.HP_gpu = gpu
    print("Load Model from file: ", model_dir)
    model = SeqModel(data)
    # if not gpu:
    #     model.load_state_dict(torch.load(model_dir), map_location=lambda storage, loc: storage)
    # else:
    model.load_state_dict(torch.load(model_dir))  # expect: DL301

    print("Decode %s data ..." % (name))
    start_time = time.time()
    speed, acc, p, r, f, pred_results = evaluate(data, model, name)
    time_cost = time.time() - start_time
    if seg:
        print("%s: time:%.2fs, speed:%.2fst/s; acc: %.4f, p: %.4f, r: %.4f, f: %.4f" % (
            name, time_cost, speed, acc, p, r, f))
    return pred_results


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--savedset', default="data/save.dset")
    parser.add_argument('--raw')
    parser.add_argument('--loadmodel')
    args = parser.parse_args()
    gpu = torch.cuda.is_available()
    data = Data()
    data.load(args.savedset)
    data.generate_instance_with_gaz(args.raw, 'raw')
    load_model_decode(args.loadmodel, data, 'raw', gpu, True)
