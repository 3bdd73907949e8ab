# source: https://github.com/weecology/DeepForest/pull/1391
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: predict_image() puts the wrapped detector in eval mode and hands the array to the module-level
#      helper _predict_image_, which builds the input with torch.tensor(image) on the CPU and calls the
#      model on it; a caller that moved the model to CUDA (model.model.to("cuda"), or a GPU-trained
#      model) fails. The PR (closed; the change is stated in its description with a reproduction) moves
#      the input to next(model.parameters()).device before the forward pass; it only inserts that
#      move, so the model call it precedes is marked (DL203).
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
    with torch.no_grad():
        prediction = model(image.unsqueeze(0))  # expect: DL203
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
