# source: https://github.com/yuanyuanli85/Fast_Human_Pose_Estimation_Pytorch/issues/7
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the demo's inference helper moves the image to --device (default cuda) but the model, built and
#      loaded on the CPU in load_model, is never moved there (fix commit 13fa58a adds model.to(device)).
import argparse
from collections import OrderedDict

import cv2
import numpy as np
import torch

import pose.models as models


def load_image(imgfile, w, h):
    image = cv2.imread(imgfile)
    image = cv2.resize(image, (w, h))
    image = image[:, :, ::-1] / 255.0
    image = image.transpose((2, 0, 1))
    return image[np.newaxis, :, :, :]


def load_model(arch, stacks, blocks, num_classes, checkpoint_resume):
    model = models.__dict__[arch](num_stacks=stacks, num_blocks=blocks, num_classes=num_classes)
    checkpoint = torch.load(checkpoint_resume, map_location=lambda storage, loc: storage)
    new_state_dict = OrderedDict()
    for k, v in checkpoint['state_dict'].items():
        new_state_dict[k[7:]] = v
    model.load_state_dict(new_state_dict)
    model.eval()
    return model


def inference(model, image, device):
    input_tensor = torch.from_numpy(image).float().to(device)
    model = model.to(device)
    output = model(input_tensor)
    output = output[-1]
    output = output.data.cpu()
    return output[0].numpy()


def main(args):
    model = load_model(args.arch, args.stacks, args.blocks, args.num_classes, args.checkpoint)
    image = load_image(args.image, args.in_res, args.in_res)
    heatmaps = inference(model, image, args.device)
    print(heatmaps.shape)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--arch', '-a', default='hg')
    parser.add_argument('-s', '--stacks', default=8, type=int)
    parser.add_argument('-b', '--blocks', default=1, type=int)
    parser.add_argument('--num-classes', default=16, type=int)
    parser.add_argument('--checkpoint', required=True, type=str)
    parser.add_argument('--in_res', required=True, type=int)
    parser.add_argument('--image', default='data/sample.jpg', type=str)
    parser.add_argument('--device', default='cuda', type=str)
    main(parser.parse_args())
