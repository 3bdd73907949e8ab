# source: https://github.com/timesler/facenet-pytorch/pull/228
# fixed twin: commit 80aa083 (PR #228, merged as 787da06) converts NumPy/PIL faces with F.to_tensor(np.float32(face))
#             as before, keeps a tensor face as face.float(), and raises NotImplementedError otherwise.
import os

import numpy as np
import torch
from PIL import Image
from torch.nn.functional import interpolate
from torchvision.transforms import functional as F

try:
    import cv2
except:
    pass


# --- models/utils/detect_face.py ---
def imresample(img, sz):
    im_data = interpolate(img, size=sz, mode="area")
    return im_data


def crop_resize(img, box, image_size):
    if isinstance(img, np.ndarray):
        img = img[box[1]:box[3], box[0]:box[2]]
        out = cv2.resize(img, (image_size, image_size), interpolation=cv2.INTER_AREA).copy()
    elif isinstance(img, torch.Tensor):
        img = img[box[1]:box[3], box[0]:box[2]]
        out = imresample(img.permute(2, 0, 1).unsqueeze(0).float(), (image_size, image_size)).byte().squeeze(0).permute(1, 2, 0)
    else:
        out = img.crop(box).copy().resize((image_size, image_size), Image.BILINEAR)
    return out


def get_size(img):
    if isinstance(img, (np.ndarray, torch.Tensor)):
        return img.shape[1::-1]
    else:
        return img.size


def extract_face(img, box, image_size=160, margin=0, save_path=None):
    margin = [
        margin * (box[2] - box[0]) / (image_size - margin),
        margin * (box[3] - box[1]) / (image_size - margin),
    ]
    raw_image_size = get_size(img)
    box = [
        int(max(box[0] - margin[0] / 2, 0)),
        int(max(box[1] - margin[1] / 2, 0)),
        int(min(box[2] + margin[0] / 2, raw_image_size[0])),
        int(min(box[3] + margin[1] / 2, raw_image_size[1])),
    ]
    face = crop_resize(img, box, image_size)
    if isinstance(face, np.ndarray) or isinstance(face, Image.Image):
        face = F.to_tensor(np.float32(face))
    elif isinstance(face, torch.Tensor):
        face = face.float()
    else:
        raise NotImplementedError
    return face


# --- models/mtcnn.py ---
def fixed_image_standardization(image_tensor):
    processed_tensor = (image_tensor - 127.5) / 128.0
    return processed_tensor


class MTCNN(torch.nn.Module):
    def __init__(self, image_size=160, margin=0, post_process=True, keep_all=False, device=None):
        super().__init__()
        self.image_size = image_size
        self.margin = margin
        self.post_process = post_process
        self.keep_all = keep_all
        self.device = torch.device('cpu')
        if device is not None:
            self.device = device
            self.to(device)

    def detect(self, img, landmarks=False):
        box = np.array([[40.0, 30.0, 140.0, 150.0, 0.99]])
        return np.array([box[:, :4]], dtype=object), np.array([box[:, 4]], dtype=object), None

    def forward(self, img, save_path=None, return_prob=False):
        batch_boxes, batch_probs, batch_points = self.detect(img, landmarks=True)
        faces = self.extract(img, batch_boxes[0], save_path)
        if return_prob:
            return faces, batch_probs
        else:
            return faces

    def extract(self, img, batch_boxes, save_path):
        batch_mode = True
        if (not isinstance(img, (list, tuple)) and not (isinstance(img, np.ndarray) and len(img.shape) == 4)
                and not (isinstance(img, torch.Tensor) and len(img.shape) == 4)):
            img = [img]
            batch_boxes = [batch_boxes]
            batch_mode = False
        save_path = [None for _ in range(len(img))]
        faces = []
        for im, box_im, path_im in zip(img, batch_boxes, save_path):
            if box_im is None:
                faces.append(None)
                continue
            if not self.keep_all:
                box_im = box_im[[0]]
            faces_im = []
            for i, box in enumerate(box_im):
                face = extract_face(im, box, self.image_size, self.margin, path_im)
                if self.post_process:
                    face = fixed_image_standardization(face)
                faces_im.append(face)
            if self.keep_all:
                faces_im = torch.stack(faces_im)
            else:
                faces_im = faces_im[0]
            faces.append(faces_im)
        if not batch_mode:
            faces = faces[0]
        return faces


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    mtcnn = MTCNN(image_size=160, margin=0, device=device)
    img = torch.randint(0, 255, (240, 320, 3), dtype=torch.uint8, device=device)
    face = mtcnn(img)
    print(face.shape, face.device)
