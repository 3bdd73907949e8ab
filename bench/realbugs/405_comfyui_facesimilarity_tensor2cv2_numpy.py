# source: https://github.com/chflame163/ComfyUI_FaceSimilarity/issues/10
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the node's tensor-to-OpenCV helper calls .numpy() on the IMAGE tensor it is given; images
#      produced by other nodes on the GPU arrive as CUDA tensors, so the conversion fails. The thread
#      names the missing .cpu() call as the fix.
import cv2
import numpy as np
import torch


def tensor2cv2(image: torch.Tensor) -> np.ndarray:
    if image.dim() == 4:
        image = image.squeeze(0)
    npimage = image.numpy()  # expect: DL204
    npimage = np.clip(npimage * 255.0, 0, 255).astype(np.uint8)
    return cv2.cvtColor(npimage, cv2.COLOR_RGB2BGR)


class FaceSimilarity:
    def __init__(self, detector):
        self.detector = detector

    def compare(self, image1, image2):
        faces1 = self.detector(tensor2cv2(image1))
        faces2 = self.detector(tensor2cv2(image2))
        if not faces1 or not faces2:
            return (0.0,)
        a, b = np.asarray(faces1[0]), np.asarray(faces2[0])
        return (float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))),)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    upscaler = torch.nn.Upsample(scale_factor=2).to(device)
    img = upscaler(torch.rand(1, 3, 128, 128, device=device)).permute(0, 2, 3, 1)
    node = FaceSimilarity(detector=lambda arr: [arr.mean(axis=(0, 1))])
    print(node.compare(img, img))
