# source: https://github.com/pytorch/examples/issues/599
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
#        (python super_resolve.py --input_image ... --model model_epoch_30.pth, without --cuda; at out = model(input))
# bug: main.py trains Net on torch.device("cuda" if opt.cuda else "cpu") and checkpoint() pickles the whole module
#      with torch.save(model, path), so a model trained with --cuda is saved with its parameters on the GPU.
#      super_resolve.py restores it with a bare torch.load(opt.model) - the module comes back on the GPU - and moves
#      model and input only under --cuda: without the flag the image tensor stays on the CPU and meets the GPU
#      weights. The only answer is the workaround "pass --cuda"; the script still loads without map_location and
#      moves the input only behind the flag (now --accel), so there is no fix. The marker is on the call the
#      traceback points to (DL203: the restored module is on the GPU, the input was never moved; DL301 on the
#      torch.load is the other candidate). Reductions: main.py's training is one step on random data, the PIL image
#      and YCbCr handling are a random luminance tensor, the numpy/PIL output is left out; torch.load runs under
#      torch.serialization.safe_globals as upstream's later commit abfa4f9 (torch>=2.6) does, so that the pickled
#      module loads at all with today's weights_only default.
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.init as init


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def train_main(argv):
    parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
    parser.add_argument('--upscale_factor', type=int, default=2)
    parser.add_argument('--cuda', action='store_true', help='use cuda?')
    parser.add_argument('--out_dir', type=str, default='.')
    opt = parser.parse_args(argv)
    if opt.cuda and not torch.cuda.is_available():
        raise Exception("No GPU found, please run without --cuda")
    device = torch.device("cuda" if opt.cuda else "cpu")
    model = Net(upscale_factor=opt.upscale_factor).to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    input, target = torch.rand(4, 1, 16, 16).to(device), torch.rand(4, 1, 32, 32).to(device)
    optimizer.zero_grad()
    loss = criterion(model(input), target)
    loss.backward()
    optimizer.step()
    model_out_path = os.path.join(opt.out_dir, "model_epoch_{}.pth".format(1))
    torch.save(model, model_out_path)
    return model_out_path


def super_resolve(argv):
    parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
    parser.add_argument('--input_image', type=str, required=True, help='input image to use')
    parser.add_argument('--model', type=str, required=True, help='model file to use')
    parser.add_argument('--output_filename', type=str, help='where to save the output image')
    parser.add_argument('--cuda', action='store_true', help='use cuda')
    opt = parser.parse_args(argv)
    y = torch.rand(24, 32)
    with torch.serialization.safe_globals([Net, nn.ReLU, nn.Conv2d, nn.PixelShuffle]):
        model = torch.load(opt.model)
    input = y.view(1, -1, y.size(0), y.size(1))
    if opt.cuda:
        model = model.cuda()
        input = input.cuda()
    out = model(input)  # expect: DL203
    out = out.cpu()
    out_img_y = out[0].detach() * 255.0
    out_img_y = out_img_y.clamp(0, 255)
    print('output image', tuple(out_img_y.shape))


if __name__ == "__main__":
    out_dir = tempfile.mkdtemp()
    train_args = ['--cuda'] if torch.cuda.is_available() else []
    path = train_main(train_args + ['--out_dir', out_dir])
    super_resolve(['--input_image', 'dataset/BSDS300/images/test/16077.jpg', '--model', path,
                   '--output_filename', 'out.png'])
