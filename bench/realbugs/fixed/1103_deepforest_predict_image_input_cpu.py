# source: https://github.com/weecology/DeepForest/pull/1391
# fixed twin: the input is moved to the device of the model's parameters before the forward pass, as the PR describes.
import torch
import torch.nn as nn


class TinyRetinaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.box_head = nn.Conv2d(8, 4, 1)
        self.score_head = nn.Conv2d(8, 1, 1)

    def forward(self, images):
        features = self.backbone(images)
        boxes = self.box_head(features).flatten(2).transpose(1, 2)
        scores = torch.sigmoid(self.score_head(features)).flatten(1)
        return [{"boxes": b, "scores": s, "labels": torch.zeros_like(s, dtype=torch.long)} for b, s in zip(boxes, scores)]


def format_boxes(prediction, score_thresh=0.5):
    keep = prediction["scores"] > score_thresh
    return [tuple(box.tolist()) for box in prediction["boxes"][keep].cpu()]


def _predict_image_(model, image=None, path=None):
    image = torch.tensor(image).permute(2, 0, 1)
    image = image / 255
    image = image.to(next(model.parameters()).device)
    with torch.no_grad():
        prediction = model(image.unsqueeze(0))
    return format_boxes(prediction[0])


class deepforest:
    def __init__(self):
        self.model = TinyRetinaNet()

    def predict_image(self, image=None, path=None):
        self.model.eval()
        return _predict_image_(model=self.model, image=image, path=path)


if __name__ == "__main__":
    m = deepforest()
    m.model.to("cuda" if torch.cuda.is_available() else "cpu")
    rgb = [[[float((r * c + k) % 255) for k in range(3)] for c in range(16)] for r in range(16)]
    print(len(m.predict_image(image=rgb)))
