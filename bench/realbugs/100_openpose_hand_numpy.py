# source: https://github.com/Hzzone/pytorch-openpose/pull/16
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the hand-pose estimator moves the network and the input to the GPU when one is available,
#      then calls .numpy() directly on the network output, which lives on the GPU.
import cv2
import numpy as np
import torch

from model import handpose_model


class Hand(object):
    def __init__(self, model_path):
        self.model = handpose_model()
        if torch.cuda.is_available():
            self.model = self.model.cuda()
        self.model.load_state_dict(torch.load(model_path, map_location="cpu"))
        self.model.eval()

    def __call__(self, oriImg):
        scales = [0.5, 1.0, 1.5, 2.0]
        heatmap_avg = np.zeros((oriImg.shape[0], oriImg.shape[1], 22))
        for scale in scales:
            resized = cv2.resize(oriImg, (0, 0), fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
            im = np.transpose(np.float32(resized[:, :, :, np.newaxis]), (3, 2, 0, 1)) / 256 - 0.5
            im = np.ascontiguousarray(im)

            data = torch.from_numpy(im).float()
            if torch.cuda.is_available():
                data = data.cuda()
            with torch.no_grad():
                output = self.model(data).numpy()  # expect: DL204

            heatmap = np.transpose(np.squeeze(output), (1, 2, 0))
            heatmap = cv2.resize(heatmap, (oriImg.shape[1], oriImg.shape[0]), interpolation=cv2.INTER_CUBIC)
            heatmap_avg += heatmap / len(scales)
        return heatmap_avg
