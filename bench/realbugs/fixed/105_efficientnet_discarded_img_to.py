# source: https://github.com/lukemelas/EfficientNet-PyTorch/issues/52
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: inference snippet calls img.to(device) as a bare statement; Tensor.to is not in-place, so the
#      image stays on the CPU while the model (moved with model.to(device)) is on the GPU.
import torch
from efficientnet_pytorch import EfficientNet
from PIL import Image
from torchvision import transforms

device = torch.device('cuda:0')
model = EfficientNet.from_pretrained('efficientnet-b0')

tfms = transforms.Compose([
    transforms.Resize(224),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
img = tfms(Image.open('img.png')).unsqueeze(0)
img = img.to(device)
model.to(device)
model.eval()
with torch.no_grad():
    outputs = model(img)
print(outputs.argmax(1))
