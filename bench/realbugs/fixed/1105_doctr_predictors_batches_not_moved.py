# source: https://github.com/mindee/doctr/pull/808
# fixed twin: each predictor moves its batches to the device of its model's parameters (commit f0eae11).
import math

import torch
from torch import nn


class PreProcessor(nn.Module):
    def __init__(self, output_size, batch_size, mean=(0.5, 0.5, 0.5), std=(1.0, 1.0, 1.0)):
        super().__init__()
        self.output_size, self.batch_size = output_size, batch_size
        self.mean, self.std = mean, std

    def sample_transforms(self, x):
        x = torch.as_tensor(x).permute(2, 0, 1).to(dtype=torch.float32).div(255)
        return nn.functional.interpolate(x.unsqueeze(0), size=self.output_size).squeeze(0)

    def normalize(self, batch):
        mean = torch.tensor(self.mean, dtype=batch.dtype, device=batch.device).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=batch.dtype, device=batch.device).view(-1, 1, 1)
        return (batch - mean) / std

    def forward(self, pages):
        samples = [self.sample_transforms(page) for page in pages]
        num_batches = int(math.ceil(len(samples) / self.batch_size))
        batches = [torch.stack(samples[i * self.batch_size:(i + 1) * self.batch_size], dim=0) for i in range(num_batches)]
        return [self.normalize(b) for b in batches]


class DetectionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x, return_preds=False):
        prob = torch.sigmoid(self.head(x))
        return {"preds": [p.squeeze(0) > 0.5 for p in prob]} if return_preds else {"out_map": prob}


class RecognitionModel(nn.Module):
    def __init__(self, vocab="abc"):
        super().__init__()
        self.vocab = vocab
        self.feat = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.AdaptiveAvgPool2d((1, 4)))
        self.classifier = nn.Linear(8, len(vocab) + 1)

    def forward(self, x, return_preds=False):
        logits = self.classifier(self.feat(x).squeeze(2).transpose(1, 2))
        idx = logits.argmax(-1)
        return {"preds": ["".join(self.vocab[i] for i in row.tolist() if i < len(self.vocab)) for row in idx]}


class DetectionPredictor(nn.Module):
    def __init__(self, pre_processor, model):
        super().__init__()
        self.pre_processor = pre_processor
        self.model = model.eval()

    @torch.no_grad()
    def forward(self, pages, **kwargs):
        processed_batches = self.pre_processor(pages)
        _device = next(self.model.parameters()).device
        predicted_batches = [
            self.model(batch.to(device=_device), return_preds=True, **kwargs)["preds"]
            for batch in processed_batches
        ]
        return [pred for batch in predicted_batches for pred in batch]


class RecognitionPredictor(nn.Module):
    def __init__(self, pre_processor, model):
        super().__init__()
        self.pre_processor = pre_processor
        self.model = model.eval()

    @torch.no_grad()
    def forward(self, crops, **kwargs):
        processed_batches = self.pre_processor(crops)
        _device = next(self.model.parameters()).device
        raw = [
            self.model(batch.to(device=_device), return_preds=True, **kwargs)["preds"]
            for batch in processed_batches
        ]
        return [word for batch in raw for word in batch]


class OCRPredictor(nn.Module):
    def __init__(self, det_predictor, reco_predictor):
        super().__init__()
        self.det_predictor = det_predictor
        self.reco_predictor = reco_predictor

    def forward(self, pages):
        masks = self.det_predictor(pages)
        crops = [page[: max(4, int(mask.sum()) % page.shape[0] + 4), :, :] for page, mask in zip(pages, masks)]
        return self.reco_predictor(crops)


def ocr_predictor():
    det = DetectionPredictor(PreProcessor((32, 32), batch_size=2), DetectionModel())
    reco = RecognitionPredictor(PreProcessor((8, 32), batch_size=4), RecognitionModel())
    return OCRPredictor(det, reco)


if __name__ == "__main__":
    predictor = ocr_predictor()
    if torch.cuda.is_available():
        predictor = predictor.cuda()
    doc = [torch.randint(0, 256, (40, 60, 3), dtype=torch.uint8) for _ in range(3)]
    print(predictor(doc))
