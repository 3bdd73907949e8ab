# source: https://github.com/LikeLy-Journey/SegmenTron/issues/44
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: the model zoo restores pretrained weights (released from GPU training) with a plain
#      torch.load, so tensors go back to CUDA and building any model fails on a CPU-only machine.
#      The reporter's fix in the (closed) issue passes map_location=torch.device(cfg.DEVICE) for the
#      pretrained checkpoint; the test-phase load below has the same shape but was not named.
import logging
from collections import OrderedDict

import torch
import torch.nn as nn


class Cfg:
    PHASE = "train"
    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    PRETRAINED_MODEL_PATH = "pretrained/deeplabv3_plus_resnet101_segmentron.pth"
    TEST_MODEL_PATH = ""


cfg = Cfg()


def load_model_pretrain(model):
    if cfg.PHASE == "train":
        if cfg.PRETRAINED_MODEL_PATH:
            logging.info("load pretrained model from {}".format(cfg.PRETRAINED_MODEL_PATH))
            state_dict_to_load = torch.load(cfg.PRETRAINED_MODEL_PATH)  # expect: DL301
            state_dict = model.state_dict()
            suitable = OrderedDict((k, v) for k, v in state_dict_to_load.items() if v.shape == state_dict[k].shape)
            logging.info(model.load_state_dict(suitable, strict=False))
    else:
        if cfg.TEST_MODEL_PATH:
            logging.info(model.load_state_dict(torch.load(cfg.TEST_MODEL_PATH), strict=False))


def get_segmentation_model():
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 19, 1))
    load_model_pretrain(model)
    return model


if __name__ == "__main__":
    model = get_segmentation_model().to(torch.device(cfg.DEVICE))
    out = model(torch.rand(1, 3, 512, 512, device=cfg.DEVICE))
