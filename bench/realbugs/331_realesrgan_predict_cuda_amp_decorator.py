# source: https://github.com/ai-forever/Real-ESRGAN/issues/12
# error: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling (even with device=torch.device('cpu'))
# bug: the upscaler is built for the device main.py picks (cuda if available, else cpu) and moves
#      its network there, but predict() is decorated with torch.cuda.amp.autocast(), which always
#      names CUDA; the fix enters torch.autocast(device_type=self.device.type) inside predict.
import numpy as np
import torch
from PIL import Image

from RealESRGAN.rrdbnet_arch import RRDBNet
from RealESRGAN.utils import pad_reflect, split_image_into_overlapping_patches, stich_together, unpad_image


class RealESRGAN:
    def __init__(self, device, scale=4):
        self.device = device
        self.scale = scale
        self.model = RRDBNet(num_in_ch=3, num_out_ch=3, num_feat=64, num_block=23, num_grow_ch=32, scale=scale)

    def load_weights(self, model_path):
        loadnet = torch.load(model_path, map_location="cpu")
        self.model.load_state_dict(loadnet["params_ema"], strict=True)
        self.model.eval()
        self.model.to(self.device)

    @torch.cuda.amp.autocast()  # expect: DL308
    def predict(self, lr_image, batch_size=4, patches_size=192, padding=24, pad_size=15):
        scale = self.scale
        lr_image = pad_reflect(np.array(lr_image), pad_size)
        patches, p_shape = split_image_into_overlapping_patches(lr_image, patch_size=patches_size, padding_size=padding)
        img = torch.FloatTensor(patches / 255).permute((0, 3, 1, 2)).to(self.device).detach()
        with torch.no_grad():
            res = self.model(img[0:batch_size])
            for i in range(batch_size, img.shape[0], batch_size):
                res = torch.cat((res, self.model(img[i:i + batch_size])), 0)
        sr_image = res.permute((0, 2, 3, 1)).clamp_(0, 1).cpu()
        np_sr_image = sr_image.numpy()
        padded_size_scaled = tuple(np.multiply(p_shape[0:2], scale)) + (3,)
        scaled_image_shape = tuple(np.multiply(lr_image.shape[0:2], scale))
        np_sr_image = stich_together(np_sr_image, padded_image_shape=padded_size_scaled, target_shape=scaled_image_shape, padding_size=padding * scale)
        sr_img = (np_sr_image * 255).astype(np.uint8)
        sr_img = unpad_image(sr_img, pad_size * scale)
        return Image.fromarray(sr_img)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = RealESRGAN(device, scale=4)
    model.load_weights("weights/RealESRGAN_x4.pth")
    sr_image = model.predict(Image.open("inputs/lr_image.png").convert("RGB"))
    sr_image.save("results/sr_image.png")
