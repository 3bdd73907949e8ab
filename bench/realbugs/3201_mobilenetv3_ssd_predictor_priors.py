# source: https://github.com/shaoshengsong/MobileNetV3-SSD/issues/5
# error: RuntimeError: expected backend CPU and dtype Float but got backend CUDA and dtype Float
#        (run_ssd_example.py -> predictor.predict -> self.net.forward(images) -> ssd.py forward ->
#        box_utils.convert_locations_to_boxes: locations[..., :2] * center_variance * priors[..., 2:] + priors[..., :2])
# bug: SSD.__init__ picks self.device = cuda:0 whenever CUDA is available and, for a test net, stores
#      self.priors = config.priors.to(self.device) as a plain attribute (not a buffer). run_ssd_example.py then builds
#      the predictor with create_mobilenetv3_ssd_lite_predictor, whose default is device=torch.device('cpu'), and
#      Predictor moves the net there with self.net.to(self.device) - which moves the parameters but not the plain
#      priors - and the images too. On a GPU machine the CPU locations meet the CUDA priors in
#      convert_locations_to_boxes. The issue is open with no upstream fix (commenters change the predictor's default
#      device to cuda:0); the line the traceback points to is marked (DL201; the unregistered self.priors (DL103) and
#      the stored self.device (DL206) are the other candidates). Reductions: the MobileNetV3 backbone, extras and
#      heads are two small conv heads over a fixed prior grid; cv2 image reading and the numpy preprocessing are a
#      torch HWC image scaled in PredictionTransform; NMS is a top-k.
import sys
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

SSDSpec = namedtuple("SSDSpec", ["feature_map_size", "shrinkage", "box_size"])


def generate_ssd_priors(specs, image_size, clamp=True):
    priors = []
    for spec in specs:
        scale = image_size / spec.shrinkage
        for j in range(spec.feature_map_size):
            for i in range(spec.feature_map_size):
                x_center = (i + 0.5) / scale
                y_center = (j + 0.5) / scale
                size = spec.box_size / image_size
                priors.append([x_center, y_center, size, size])
    priors = torch.tensor(priors)
    if clamp:
        torch.clamp(priors, 0.0, 1.0, out=priors)
    return priors


class config:
    image_size = 32
    image_mean = 127.0
    image_std = 128.0
    iou_threshold = 0.45
    center_variance = 0.1
    size_variance = 0.2
    specs = [SSDSpec(4, 8, 12), SSDSpec(2, 16, 24)]
    priors = generate_ssd_priors(specs, image_size)


def convert_locations_to_boxes(locations, priors, center_variance, size_variance):
    if priors.dim() + 1 == locations.dim():
        priors = priors.unsqueeze(0)
    return torch.cat([
        locations[..., :2] * center_variance * priors[..., 2:] + priors[..., :2],  # expect: DL201
        torch.exp(locations[..., 2:] * size_variance) * priors[..., 2:]
    ], dim=locations.dim() - 1)


def center_form_to_corner_form(locations):
    return torch.cat([locations[..., :2] - locations[..., 2:] / 2,
                      locations[..., :2] + locations[..., 2:] / 2], locations.dim() - 1)


class SSD(nn.Module):
    def __init__(self, num_classes, is_test=False, config=None, device=None):
        super(SSD, self).__init__()
        self.num_classes = num_classes
        self.base_net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=8, padding=1), nn.ReLU())
        self.extras = nn.Sequential(nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.classification_headers = nn.ModuleList([nn.Conv2d(8, num_classes, 3, padding=1) for _ in range(2)])
        self.regression_headers = nn.ModuleList([nn.Conv2d(8, 4, 3, padding=1) for _ in range(2)])
        self.is_test = is_test
        self.config = config
        if device:
            self.device = device
        else:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        if is_test:
            self.config = config
            self.priors = config.priors.to(self.device)

    def compute_header(self, i, x):
        confidence = self.classification_headers[i](x)
        confidence = confidence.permute(0, 2, 3, 1).contiguous().view(x.size(0), -1, self.num_classes)
        location = self.regression_headers[i](x)
        location = location.permute(0, 2, 3, 1).contiguous().view(x.size(0), -1, 4)
        return confidence, location

    def forward(self, x):
        x = self.base_net(x)
        c0, l0 = self.compute_header(0, x)
        x = self.extras(x)
        c1, l1 = self.compute_header(1, x)
        confidences = torch.cat([c0, c1], 1)
        locations = torch.cat([l0, l1], 1)
        if self.is_test:
            confidences = F.softmax(confidences, dim=2)
            boxes = convert_locations_to_boxes(
                locations, self.priors, self.config.center_variance, self.config.size_variance
            )
            boxes = center_form_to_corner_form(boxes)
            return confidences, boxes
        return confidences, locations

    def load(self, model):
        self.load_state_dict(torch.load(model, map_location=lambda storage, loc: storage))


class PredictionTransform:
    def __init__(self, size, mean=0.0, std=1.0):
        self.size, self.mean, self.std = size, mean, std

    def __call__(self, image):
        image = image.permute(2, 0, 1).float().unsqueeze(0)
        image = F.interpolate(image, size=(self.size, self.size))[0]
        return (image - self.mean) / self.std


class Predictor:
    def __init__(self, net, size, mean=0.0, std=1.0, nms_method=None,
                 iou_threshold=0.45, filter_threshold=0.01, candidate_size=200, sigma=0.5, device=None):
        self.net = net
        self.transform = PredictionTransform(size, mean, std)
        self.iou_threshold = iou_threshold
        self.filter_threshold = filter_threshold
        self.candidate_size = candidate_size
        if device:
            self.device = device
        else:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.net.to(self.device)
        self.net.eval()

    def predict(self, image, top_k=-1, prob_threshold=None):
        cpu_device = torch.device("cpu")
        height, width, _ = image.shape
        image = self.transform(image)
        images = image.unsqueeze(0)
        images = images.to(self.device)
        with torch.no_grad():
            scores, boxes = self.net.forward(images)
        boxes = boxes[0].to(cpu_device)
        scores = scores[0].to(cpu_device)
        probs, labels = scores[:, 1:].max(1)
        keep = probs.argsort(descending=True)[:top_k]
        picked = boxes[keep] * torch.tensor([width, height, width, height])
        return picked, labels[keep] + 1, probs[keep]


def create_mobilenetv3_ssd_lite(num_classes, is_test=False):
    return SSD(num_classes, is_test=is_test, config=config)


def create_mobilenetv3_ssd_lite_predictor(net, candidate_size=200, nms_method=None, sigma=0.5, device=torch.device('cpu')):
    predictor = Predictor(net, config.image_size, config.image_mean,
                          config.image_std,
                          nms_method=nms_method,
                          iou_threshold=config.iou_threshold,
                          candidate_size=candidate_size,
                          sigma=sigma,
                          device=device)
    return predictor


if __name__ == "__main__":
    net_type = sys.argv[1] if len(sys.argv) > 1 else "mb3-ssd-lite"
    class_names = ["BACKGROUND", "person", "car"]
    if net_type == 'mb3-ssd-lite':
        net = create_mobilenetv3_ssd_lite(len(class_names), is_test=True)
    else:
        print("The net type is wrong.")
        sys.exit(1)
    predictor = create_mobilenetv3_ssd_lite_predictor(net, candidate_size=200)
    image = torch.randint(0, 255, (48, 64, 3), dtype=torch.uint8)
    boxes, labels, probs = predictor.predict(image, 10, 0.4)
    print(f"Found {len(probs)} objects.")
