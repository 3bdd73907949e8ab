# source: https://github.com/AutoAILab/FusionDepth/issues/12
# error: AttributeError: 'list' object has no attribute 'to'
# bug: process_batch moves every entry of the collated input dict to the GPU, but the user's split
# made the KITTI dataset add a "date" string per item, which collation turns into a list of strings.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class KITTIRAWDataset(Dataset):
    def __init__(self, filenames, with_date=True):
        self.filenames = filenames
        self.with_date = with_date

    def __len__(self):
        return len(self.filenames)

    def __getitem__(self, index):
        folder, frame_index = self.filenames[index].split()[:2]
        inputs = {}
        inputs[("color", 0, 0)] = torch.rand(3, 192, 640)
        inputs["depth_gt"] = torch.rand(1, 375, 1242)
        if self.with_date:
            inputs["date"] = folder.split("/")[0]
        return inputs


class Trainer:
    def __init__(self, filenames):
        self.device = torch.device("cuda")
        self.model = nn.Conv2d(3, 1, 3, padding=1).to(self.device)
        self.train_loader = DataLoader(KITTIRAWDataset(filenames), batch_size=12, shuffle=True, num_workers=4)

    def process_batch(self, inputs):
        for key, ipt in inputs.items():
            inputs[key] = ipt.to(self.device)  # expect: DL310
        outputs = self.model(inputs[("color", 0, 0)])
        return outputs, (outputs - inputs[("color", 0, 0)][:, :1]).abs().mean()

    def run_epoch(self):
        for batch_idx, inputs in enumerate(self.train_loader):
            outputs, losses = self.process_batch(inputs)
            losses.backward()
