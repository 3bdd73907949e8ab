# source: https://github.com/isl-org/Open3D-ML/pull/502
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch.gather in filter_valid_label)
# bug: filter_valid_label moves the labels and the valid indices to the pipeline's device but leaves
#      the scores where the caller made them. run_inference hands it the predicted scores that
#      the model's inference_end has already brought back to the host (a NumPy array there; a CPU
#      tensor here, as numpy may be absent), so with device set to a GPU the gather of the scores
#      with the GPU indices fails. The PR moves the scores to the device as well,
#      scores.reshape(-1, num_classes).to(device); the changed line is marked (DL201: the scores
#      and the indices it gathers them with are on different devices).
import torch
import torch.nn as nn


def filter_valid_label(scores, labels, num_classes, ignored_label_inds, device):
    valid_scores = scores.reshape(-1, num_classes)  # expect: DL201
    valid_labels = labels.reshape(-1).to(device)
    ignored_bool = torch.zeros_like(valid_labels, dtype=torch.bool)
    for ign_label in ignored_label_inds:
        ignored_bool = torch.logical_or(ignored_bool, torch.eq(valid_labels, ign_label))
    valid_idx = torch.where(torch.logical_not(ignored_bool))[0].to(device)
    valid_scores = torch.gather(valid_scores, 0, valid_idx.unsqueeze(-1).expand(-1, num_classes))
    valid_labels = torch.gather(valid_labels, 0, valid_idx)
    reducing_list = torch.arange(0, num_classes, dtype=torch.int64)
    inserted_value = torch.zeros([1], dtype=torch.int64)
    for ign_label in ignored_label_inds:
        if ign_label >= 0:
            reducing_list = torch.cat([reducing_list[:ign_label], inserted_value, reducing_list[ign_label:]], 0)
    valid_labels = torch.gather(reducing_list.to(device), 0, valid_labels.long())
    return valid_scores, valid_labels


class PointNetSeg(nn.Module):
    def __init__(self, num_classes=4, ignored_label_inds=(0,)):
        super().__init__()
        self.num_classes = num_classes
        self.ignored_label_inds = list(ignored_label_inds)
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, num_classes))

    def forward(self, points):
        return self.net(points)

    def inference_end(self, results):
        return {"predict_labels": results.argmax(-1).cpu(), "predict_scores": results.softmax(-1).cpu()}


class SemanticSegmentation:
    def __init__(self, model, device):
        self.device = torch.device(device)
        self.model = model.to(self.device)

    def run_inference(self, data):
        model = self.model
        model.eval()
        with torch.no_grad():
            results = model(data["point"].to(self.device))
            inference_result = model.inference_end(results)
        valid_scores, valid_labels = filter_valid_label(
            torch.as_tensor(inference_result["predict_scores"]), torch.as_tensor(data["label"]),
            model.num_classes, model.ignored_label_inds, self.device)
        accuracy = (valid_scores.argmax(-1) == valid_labels).float().mean()
        return inference_result, accuracy.item()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pipeline = SemanticSegmentation(PointNetSeg(), device)
    data = {"point": torch.rand(128, 3), "label": torch.randint(0, 5, (128,))}
    _, acc = pipeline.run_inference(data)
    print(acc)
