# source: https://github.com/zzsza/Boostcamp-AI-Tech-Product-Serving/pull/65
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: the serving demo's cached load_model() builds the classifier on CUDA when a GPU is present and
#      loads its weights there, but get_prediction() feeds it the tensor made from the uploaded image
#      bytes, which transform_image() leaves on the CPU. PR 65 reported it; the same change landed as
#      commit 455277b (PR 75): the transformed tensor is moved to the device (DL203).
import io
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class MyEfficientNet(nn.Module):
    def __init__(self, num_classes: int = 18):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(self.features(x).flatten(1))
        return F.softmax(x, dim=1)


def transform_image(image_bytes: bytes) -> torch.Tensor:
    raw = torch.frombuffer(bytearray(image_bytes), dtype=torch.uint8).float() / 255
    image = raw[: 3 * 32 * 32].reshape(3, 32, 32)
    return ((image - 0.5) / 0.25).unsqueeze(0)


def load_model(model_path=None) -> MyEfficientNet:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = MyEfficientNet(num_classes=18).to(device)
    if model_path is not None:
        model.load_state_dict(torch.load(model_path, map_location=device))
    return model


def get_prediction(model: MyEfficientNet, image_bytes: bytes) -> Tuple[torch.Tensor, torch.Tensor]:
    tensor = transform_image(image_bytes=image_bytes)  # expect: DL203
    outputs = model.forward(tensor)
    _, y_hat = outputs.max(1)
    return tensor, y_hat


def main():
    model = load_model()
    model.eval()
    image_bytes = io.BytesIO(bytes(range(256)) * 12).getvalue()
    with torch.no_grad():
        _, y_hat = get_prediction(model, image_bytes)
    print(f"label is {y_hat.item()}")


if __name__ == "__main__":
    main()
