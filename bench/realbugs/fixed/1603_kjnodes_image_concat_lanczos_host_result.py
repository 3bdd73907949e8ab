# source: https://github.com/kijai/ComfyUI-KJNodes/issues/117
# fixed twin: the resized second image is moved to image1's device before the concatenation, as the reporter's fix does.
import torch
import torch.nn.functional as F


def lanczos(samples, width, height):
    # stands in for the PIL round trip: every image goes to the host and is resampled there
    host = samples.cpu()
    return F.interpolate(host, size=(height, width), mode="bicubic", align_corners=False).clamp(0, 1)


def common_upscale(samples, width, height, upscale_method, crop):
    if upscale_method == "lanczos":
        return lanczos(samples, width, height)
    return F.interpolate(samples, size=(height, width), mode=upscale_method)


class ImageConcanate:
    def concatenate(self, image1, image2, direction, match_image_size, first_image_shape=None):
        if image1.shape[0] != image2.shape[0]:
            n = max(image1.shape[0], image2.shape[0])
            image1 = image1.repeat(n // image1.shape[0], 1, 1, 1)
            image2 = image2.repeat(n // image2.shape[0], 1, 1, 1)
        if match_image_size:
            target_shape = first_image_shape if first_image_shape is not None else image1.shape
            aspect = image2.shape[2] / image2.shape[1]
            if direction in ["left", "right"]:
                target_height = target_shape[1]
                target_width = int(target_height * aspect)
            else:
                target_width = target_shape[2]
                target_height = int(target_width / aspect)
            image2_for_upscale = image2.movedim(-1, 1)
            image2_resized = common_upscale(image2_for_upscale, target_width, target_height, "lanczos", "disabled")
            image2_resized = image2_resized.movedim(1, -1)
        else:
            image2_resized = image2
        if image1.shape[-1] != image2_resized.shape[-1]:
            if image1.shape[-1] < image2_resized.shape[-1]:
                alpha = torch.ones((*image1.shape[:-1], 1), device=image1.device)
                image1 = torch.cat((image1, alpha), dim=-1)
            else:
                alpha = torch.ones((*image2_resized.shape[:-1], 1), device=image2_resized.device)
                image2_resized = torch.cat((image2_resized, alpha), dim=-1)
        image2_resized = image2_resized.to(image1.device)
        if direction == "right":
            concatenated_image = torch.cat((image1, image2_resized), dim=2)
        elif direction == "down":
            concatenated_image = torch.cat((image1, image2_resized), dim=1)
        elif direction == "left":
            concatenated_image = torch.cat((image2_resized, image1), dim=2)
        else:
            concatenated_image = torch.cat((image2_resized, image1), dim=1)
        return (concatenated_image,)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    image1 = torch.rand(1, 32, 48, 3, device=device)
    image2 = torch.rand(1, 16, 16, 3, device=device)
    out, = ImageConcanate().concatenate(image1, image2, "right", True)
    print(out.shape, out.device)
