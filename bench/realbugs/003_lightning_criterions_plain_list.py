# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2984
# error: RuntimeError in the weighted nll_loss: CPU 'weight' against CUDA input (device mismatch)
# bug: one weighted CrossEntropyLoss per output position is kept in a plain Python list, so
#      Lightning's move of the module to the GPU does not reach the criteria and their CPU
#      class weights meet CUDA logits.
import torch
import pytorch_lightning as pl


class JJG_Transformer(pl.LightningModule):
    def __init__(self, backbone, weights_per_position):
        super().__init__()
        self.backbone = backbone
        self.criterions = []  # expect: DL105
        for weight in weights_per_position:
            self.criterions.append(torch.nn.CrossEntropyLoss(weight=weight))

    def forward(self, images, letters):
        return self.backbone(images, letters)

    def validation_step(self, batch, batch_idx):
        images, targets, letters = batch
        out = self(images, letters)
        loss0 = self.criterions[0](out[:, 0, :], targets[:, 0])
        loss1 = self.criterions[1](out[:, 1, :], targets[:, 1])
        loss = loss0 + loss1
        self.log("val_loss", loss)
        return loss


weights_per_position = [torch.ones(94) for _ in range(26)]
