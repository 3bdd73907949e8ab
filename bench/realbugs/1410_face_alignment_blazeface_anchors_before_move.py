# source: https://github.com/1adrianb/face-alignment/pull/200
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (net_blazeface.py, _decode_boxes)
# bug: the BlazeFace detector wrapper builds the network, loads its weights, then loads the anchor
#      boxes with load_anchors_from_npy, which stores them as a plain tensor attribute on the device
#      the network is on at that moment (the CPU); only afterwards is the network moved to the
#      requested device, and .to() does not move plain attributes, so decoding the CUDA box
#      regressions against the CPU anchors fails. The fix (commit ab91b04) passes the target device
#      to load_anchors_from_npy and makes the attribute there: both changed lines are marked (DL103:
#      a plain tensor attribute of an nn.Module is not moved by model.to(device)).
import torch
import torch.nn as nn


class BlazeFace(nn.Module):
    def __init__(self, num_anchors=32):
        super().__init__()
        self.num_anchors = num_anchors
        self.x_scale = self.y_scale = self.w_scale = self.h_scale = 128.0
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=4, padding=1), nn.ReLU())
        self.regressor = nn.Linear(8 * 8 * 8, num_anchors * 4)
        self.classifier = nn.Linear(8 * 8 * 8, num_anchors)

    def _device(self):
        return self.regressor.weight.device

    def load_anchors_from_npy(self, arr):
        self.anchors = torch.tensor(arr, dtype=torch.float32, device=self._device())  # expect: DL103
        assert self.anchors.shape == (self.num_anchors, 4)

    def forward(self, x):
        h = self.backbone(x).flatten(1)
        return self.regressor(h).view(-1, self.num_anchors, 4), self.classifier(h).view(-1, self.num_anchors, 1)

    def _decode_boxes(self, raw_boxes, anchors):
        x_center = raw_boxes[..., 0] / self.x_scale * anchors[:, 2] + anchors[:, 0]
        y_center = raw_boxes[..., 1] / self.y_scale * anchors[:, 3] + anchors[:, 1]
        w = raw_boxes[..., 2] / self.w_scale * anchors[:, 2]
        h = raw_boxes[..., 3] / self.h_scale * anchors[:, 3]
        return torch.stack([y_center - h / 2, x_center - w / 2, y_center + h / 2, x_center + w / 2], dim=-1)

    def predict_on_batch(self, x):
        x = x.to(self._device()).float() / 127.5 - 1.0
        with torch.no_grad():
            raw_boxes, raw_scores = self(x)
        boxes = self._decode_boxes(raw_boxes, self.anchors)
        return torch.cat([boxes, raw_scores.sigmoid()], dim=-1)


class BlazeFaceDetector:
    def __init__(self, device, model_weights, model_anchors):
        self.device = device
        self.face_detector = BlazeFace()
        self.face_detector.load_state_dict(model_weights)
        self.face_detector.load_anchors_from_npy(model_anchors)  # expect: DL103
        self.face_detector.min_score_thresh = 0.5
        self.face_detector.to(device)
        self.face_detector.eval()

    def detect_from_batch(self, images):
        return self.face_detector.predict_on_batch(images)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    weights = BlazeFace().state_dict()
    anchors = [[0.5, 0.5, 1.0, 1.0]] * 32
    detector = BlazeFaceDetector(device, weights, anchors)
    images = torch.randint(0, 256, (2, 3, 32, 32))
    print(detector.detect_from_batch(images).shape)
