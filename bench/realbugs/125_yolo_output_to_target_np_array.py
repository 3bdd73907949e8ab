# source: https://github.com/cwq159/PyTorch-Spiking-YOLOv3/issues/51
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: non_max_suppression returns a Python list of per-image CUDA tensors, so output_to_target's
#      isinstance(output, torch.Tensor) guard never copies them; the box coordinates and confidences
#      collected from them are 0-dim CUDA tensors and np.array(targets) fails.
import numpy as np
import torch

from models import Darknet
from utils.datasets import LoadImagesAndLabels
from utils.utils import non_max_suppression, plot_images


def output_to_target(output, width, height):
    if isinstance(output, torch.Tensor):
        output = output.cpu().numpy()

    targets = []
    for i, o in enumerate(output):
        if o is not None:
            for pred in o:
                box = pred[:4]
                w = (box[2] - box[0]) / width
                h = (box[3] - box[1]) / height
                x = box[0] / width + w / 2
                y = box[1] / height + h / 2
                conf = pred[4]
                cls = int(pred[5])
                targets.append([i, cls, x, y, w, h, conf])

    return np.array(targets)  # expect: DL204


def test(cfg, data_path, weights, batch_size=16, img_size=416):
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    model = Darknet(cfg, img_size)
    model.load_state_dict(torch.load(weights, map_location=device)['model'])
    model.to(device)
    model.eval()

    dataset = LoadImagesAndLabels(data_path, img_size, batch_size)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=batch_size,
                                             collate_fn=dataset.collate_fn)
    for batch_i, (imgs, targets, paths, shapes) in enumerate(dataloader):
        imgs = imgs.to(device).float() / 255.0
        _, _, height, width = imgs.shape
        with torch.no_grad():
            inf_out, train_out = model(imgs)
            output = non_max_suppression(inf_out, conf_thres=0.001, iou_thres=0.6)
        if batch_i < 1:
            plot_images(imgs, output_to_target(output, width, height), paths=paths, fname='test_batch%g_pred.jpg' % batch_i)
