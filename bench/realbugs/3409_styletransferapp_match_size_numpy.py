# source: https://github.com/puneet29/StyleTransferApp/issues/2
# error: (python stylize.py ... --cuda 1) stylize.py line 38, content_image = match_size(content_image, output) ->
#        utils.py line 34, img = image.clone().clamp(0, 255).numpy() -> TypeError: can't convert CUDA tensor to numpy.
#        Use Tensor.cpu() to copy the tensor to host memory first.
# bug: stylize() moves the content image to device (cuda with --cuda 1) and brings only the network's output back with
#      .cpu(); it then hands the still-CUDA content image to utils.match_size, which converts it with .numpy() to resize
#      it with PIL. The reporter's fix (closed by them; utils.py unchanged upstream) adds .cpu() before .numpy() in
#      match_size; with no upstream fix the traceback's line is marked (DL204). Reductions: TransformNet is a
#      two-layer stand-in with the same interface; the content image is a random PIL image instead of a file; the
#      state dict is saved and loaded from a temporary file; argparse is kept with the flags. Needs NumPy,
#      Pillow and torchvision, as upstream (Image.ANTIALIAS is as upstream; newer Pillow removed it).
import argparse
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torchvision import transforms


# --- transformer.py ---
class TransformNet(nn.Module):
    def __init__(self):
        super(TransformNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


# --- utils.py ---
def load_image(filename, size=None, scale=None):
    img = Image.open(filename).convert('RGB')
    if(size is not None):
        img = img.resize((size, size), Image.ANTIALIAS)
    if(scale is not None):
        img = img.resize((int(img.size[0] / scale), int(img.size[1] / scale)), Image.ANTIALIAS)
    return(img)


def match_size(image, imageToMatch):
    img = image.clone().clamp(0, 255).numpy()  # expect: DL204
    img = img.squeeze(0)
    img = img.transpose(1, 2, 0).astype('uint8')
    img = Image.fromarray(img)
    img = img.resize((imageToMatch.shape[3], imageToMatch.shape[2]), Image.ANTIALIAS)
    transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Lambda(lambda x: x.mul(255))
    ])
    img = transform(img)
    return(img)


def save_image(path, image):
    img = image.clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype('uint8')
    img = Image.fromarray(img)
    img.save(path)


# --- stylize.py ---
def stylize(args):
    device = torch.device('cuda' if args.cuda else 'cpu')

    content_image = load_image(args.content_image, scale=args.content_scale)
    content_transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Lambda(lambda x: x.mul(255))
    ])
    content_image = content_transform(content_image)
    content_image = content_image.unsqueeze(0).to(device)

    with torch.no_grad():
        style_model = TransformNet()
        state_dict = torch.load(args.model)
        style_model.load_state_dict(state_dict)
        style_model.to(device)
        output = style_model(content_image).cpu()

    content_image = match_size(content_image, output)
    weighted_output = output * args.style_strength + (content_image * (1 - args.style_strength))
    save_image(args.output_image, weighted_output[0])


if __name__ == "__main__":
    workdir = tempfile.mkdtemp()
    content_path = os.path.join(workdir, "ju1.jpg")
    Image.fromarray((np.random.rand(32, 32, 3) * 255).astype('uint8')).save(content_path)
    model_path = os.path.join(workdir, "last-model.model")
    torch.save(TransformNet().state_dict(), model_path)

    eval_arg_parser = argparse.ArgumentParser(description="parser for fast-neural-style-evaluation")
    eval_arg_parser.add_argument("--content-image", type=str, required=True)
    eval_arg_parser.add_argument("--content-scale", type=float, default=None)
    eval_arg_parser.add_argument("--output-image", type=str, required=True)
    eval_arg_parser.add_argument("--model", type=str, required=True)
    eval_arg_parser.add_argument("--cuda", type=int, required=True)
    eval_arg_parser.add_argument("--style-strength", type=float, default=1.0)
    args = eval_arg_parser.parse_args(["--content-image", content_path, "--output-image",
                                       os.path.join(workdir, "ju-fin.jpg"), "--model", model_path,
                                       "--cuda", "1" if torch.cuda.is_available() else "0"])
    if(args.cuda and not torch.cuda.is_available()):
        print('ERROR: cuda is not available, try running on CPU')
        sys.exit(1)
    stylize(args)
