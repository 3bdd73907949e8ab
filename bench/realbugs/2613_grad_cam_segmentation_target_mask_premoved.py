# source: https://github.com/jacobgil/pytorch-grad-cam/pull/546
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
# bug: SemanticSegmentationTarget moves the user's mask to the GPU in __init__ whenever CUDA (or MPS)
#      is available, whatever device the model runs on. A user who runs Grad-CAM with the model on
#      the CPU (or on another accelerator) on a machine with a GPU gets a GPU mask multiplied with CPU
#      scores in __call__ (issue 545). The merged fix removes the moves from __init__ and moves the
#      mask to model_output.device when the target is called. Marked: the two moves the fix removed
#      (DL302: a GPU chosen only because one exists) and the multiplication it changed (DL201).
import torch
import torch.nn as nn


class SemanticSegmentationTarget:
    def __init__(self, category, mask):
        self.category = category
        self.mask = torch.as_tensor(mask)
        if torch.cuda.is_available():
            self.mask = self.mask.cuda()  # expect: DL302
        if torch.backends.mps.is_available():
            self.mask = self.mask.to("mps")  # expect: DL302

    def __call__(self, model_output):
        return (model_output[self.category, :, :] * self.mask).sum()  # expect: DL201


class SegModelOutputWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model.eval()
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._save_activation)

    def _save_activation(self, module, inp, out):
        self.activations = out
        out.register_hook(lambda g: setattr(self, "gradients", g))

    def __call__(self, input_tensor, targets):
        outputs = self.model(input_tensor)
        self.model.zero_grad()
        loss = sum(target(output) for target, output in zip(targets, outputs))
        loss.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(dim=1))


if __name__ == "__main__":
    device = "cpu"
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1))
    model = SegModelOutputWrapper(backbone).to(device)
    image = torch.rand(1, 3, 16, 16, device=device)
    with torch.no_grad():
        mask = (model(image)[0].argmax(dim=0) == 2).float().tolist()
    cam = GradCAM(model, target_layer=backbone[0])
    grayscale_cam = cam(image, targets=[SemanticSegmentationTarget(2, mask)])
    print(grayscale_cam.shape)
