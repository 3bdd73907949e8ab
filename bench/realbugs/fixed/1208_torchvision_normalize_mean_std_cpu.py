# source: https://github.com/pytorch/vision/pull/787
# fixed twin: mean and std are made on the image's device (merged PR 787).
import torch


def _is_tensor_image(img):
    return torch.is_tensor(img) and img.ndimension() == 3


def normalize(tensor, mean, std, inplace=False):
    if not _is_tensor_image(tensor):
        raise TypeError("tensor is not a torch image.")
    if not inplace:
        tensor = tensor.clone()
    mean = torch.tensor(mean, dtype=torch.float32, device=tensor.device)
    std = torch.tensor(std, dtype=torch.float32, device=tensor.device)
    tensor.sub_(mean[:, None, None]).div_(std[:, None, None])
    return tensor


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        return normalize(tensor, self.mean, self.std, self.inplace)


class Denormalize(Normalize):
    def __init__(self, mean, std):
        super().__init__([-m / s for m, s in zip(mean, std)], [1.0 / s for s in std])


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    to_input, denormalize = Normalize(mean, std), Denormalize(mean, std)
    detector = torch.nn.Conv2d(3, 4, 3, padding=1).to(device)
    img = to_input(torch.rand(3, 32, 32)).unsqueeze(0).to(device)
    scores = detector(img)
    shown = denormalize(img[0])
    return scores.shape, shown.shape


if __name__ == "__main__":
    print(main())
