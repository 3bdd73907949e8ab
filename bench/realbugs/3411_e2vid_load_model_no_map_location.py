# source: https://github.com/uzh-rpg/rpg_e2vid/pull/24
# error: (PR "Fix load to work with CPU") "Add map_location to torch.load in order to fix an issue with an absence of
#        CUDA devices" - the released checkpoint cannot be deserialized on a machine without CUDA
# bug: run_reconstruction.py loads the network with utils/loading_utils.load_model(args.path_to_model) and only then
#      asks get_device(args.use_gpu) for cuda:0 or the CPU; load_model restores the whole checkpoint dict (arch, model
#      config, state_dict), saved from GPU training, with a bare torch.load, so a CPU-only run fails inside load_model
#      before the model is ever moved to the chosen device. The PR (open; the repository unchanged) adds map_location
#      to that torch.load; the line is marked (DL301). Reductions: the E2VID network is a one-conv model with the same
#      constructor (a config dict with num_bins) and forward(event_tensor, prev_states); the event-file reading with
#      pandas, the voxel-grid construction and ImageReconstructor are replaced by one random voxel grid on the device;
#      the driver writes the checkpoint from wherever it runs (the bug needs it written on a GPU) with use_gpu off.
import argparse
import os
import tempfile

import torch
import torch.nn as nn


# --- model/model.py ---
class BaseE2VID(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_bins = int(config['num_bins'])


class E2VIDRecurrent(BaseE2VID):
    def __init__(self, config):
        super(E2VIDRecurrent, self).__init__(config)
        self.head = nn.Conv2d(self.num_bins, 1, 3, padding=1)

    def forward(self, event_tensor, prev_states):
        return torch.sigmoid(self.head(event_tensor)), prev_states


# --- utils/loading_utils.py ---
def load_model(path_to_model):
    print('Loading model {}...'.format(path_to_model))
    raw_model = torch.load(path_to_model)  # expect: DL301
    arch = raw_model['arch']

    try:
        model_type = raw_model['model']
    except KeyError:
        model_type = raw_model['config']['model']

    model = eval(arch)(model_type)
    model.load_state_dict(raw_model['state_dict'])
    return model


def get_device(use_gpu):
    if use_gpu and torch.cuda.is_available():
        device = torch.device('cuda:0')
    else:
        device = torch.device('cpu')
    print('Device:', device)
    return device


# --- run_reconstruction.py ---
if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), 'E2VID_lightweight.pth.tar')
    trained = E2VIDRecurrent({'num_bins': 5}).to('cuda' if torch.cuda.is_available() else 'cpu')
    torch.save({'arch': 'E2VIDRecurrent', 'model': {'num_bins': 5}, 'state_dict': trained.state_dict()}, path)

    parser = argparse.ArgumentParser(description='Evaluating a trained network')
    parser.add_argument('-c', '--path_to_model', required=True, type=str)
    parser.add_argument('--use_gpu', dest='use_gpu', action='store_true')
    parser.set_defaults(use_gpu=False)
    args = parser.parse_args(['-c', path])

    model = load_model(args.path_to_model)
    device = get_device(args.use_gpu)

    model = model.to(device)
    model.eval()

    height, width = 24, 32
    event_tensor = torch.rand(1, model.num_bins, height, width, device=device)
    with torch.no_grad():
        image, states = model(event_tensor, None)
    print(image.shape)
