# source: https://github.com/av-savchenko/hsemotion/pull/1
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you
#        are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your
#        storages to the CPU.
# bug: HSEmotionRecognizer takes a device argument (default 'cpu') and moves the model there after loading, but it
#      loads the pickled model with a bare torch.load(path), which restores a model saved from a GPU onto the GPU
#      and fails on a CPU-only machine (the PR's reporter hit it with another of the project's checkpoints). The
#      merged fix (commit 55228e6) passes map_location=torch.device('cpu') when device == 'cpu'; the torch.load line
#      it changed is marked (DL301). weights_only=False restates the default of the PyTorch the project used, so that
#      the whole pickled model still loads on PyTorch 2.6+. The NumPy classifier head is written with torch here.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyEfficientNet(nn.Module):
    def __init__(self, num_classes=8, width=16):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, width, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Sequential(nn.Linear(width, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


MODEL_DIR = tempfile.mkdtemp()


def get_model_path(model_name):
    return os.path.join(MODEL_DIR, model_name + ".pt")


class HSEmotionRecognizer:
    def __init__(self, model_name="enet_b0_8_best_vgaf", device="cpu"):
        self.device = device
        self.idx_to_class = {0: "Anger", 1: "Contempt", 2: "Disgust", 3: "Fear", 4: "Happiness", 5: "Neutral",
                             6: "Sadness", 7: "Surprise"}
        self.img_size = 224 if "_b0_" in model_name else 260
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

        path = get_model_path(model_name)
        model = torch.load(path, weights_only=False)  # expect: DL301
        if isinstance(model.classifier, torch.nn.Sequential):
            self.classifier_weights = model.classifier[0].weight.cpu().data
            self.classifier_bias = model.classifier[0].bias.cpu().data
        else:
            self.classifier_weights = model.classifier.weight.cpu().data
            self.classifier_bias = model.classifier.bias.cpu().data
        model.classifier = torch.nn.Identity()
        model = model.to(device)
        self.model = model.eval()

    def test_transforms(self, img):
        img = F.interpolate(img.unsqueeze(0), size=(self.img_size, self.img_size), mode="bilinear", align_corners=False)
        return (img.squeeze(0) - self.mean) / self.std

    def get_probab(self, features):
        return features @ self.classifier_weights.t() + self.classifier_bias

    def extract_features(self, face_img):
        img_tensor = self.test_transforms(face_img)
        img_tensor.unsqueeze_(0)
        features = self.model(img_tensor.to(self.device))
        return features.data.cpu()

    def predict_emotions(self, face_img, logits=True):
        features = self.extract_features(face_img)
        scores = self.get_probab(features)[0]
        pred = int(torch.argmax(scores))
        if not logits:
            scores = torch.softmax(scores, dim=0)
        return self.idx_to_class[pred], scores


if __name__ == "__main__":
    torch.manual_seed(0)
    trained = TinyEfficientNet()
    if torch.cuda.is_available():
        trained = trained.cuda()
    torch.save(trained, get_model_path("enet_b0_8_best_vgaf"))

    fer = HSEmotionRecognizer(model_name="enet_b0_8_best_vgaf", device="cpu")
    face_img = torch.rand(3, 120, 100)
    print(fer.predict_emotions(face_img, logits=False))
