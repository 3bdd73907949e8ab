# source: https://github.com/masadcv/FastGeodis/issues/7
# fixed twin: commit 2a3e081 ("fix torch cuda is_available typo in examples") calls torch.cuda.is_available().
import matplotlib.pyplot as plt
import numpy as np
import torch
from PIL import Image

import FastGeodis

device = "cuda" if torch.cuda.is_available() else "cpu"
image = np.asarray(Image.open("data/img2d.png"), np.float32)

image_pt = torch.from_numpy(image).unsqueeze_(0).unsqueeze_(0)
image_pt = image_pt.to(device)
mask_pt = torch.ones_like(image_pt)
mask_pt[..., 64, 80] = 0

v = 1e10
iterations = 2

# lamb = 1: geodesic distance; lamb = 0: euclidean distance
geodesic_dist = FastGeodis.generalised_geodesic2d(image_pt, mask_pt, v, 1.0, iterations)
geodesic_dist = np.squeeze(geodesic_dist.cpu().numpy())
euclidean_dist = FastGeodis.generalised_geodesic2d(image_pt, mask_pt, v, 0.0, iterations)
euclidean_dist = np.squeeze(euclidean_dist.cpu().numpy())

plt.figure()
plt.subplot(1, 2, 1)
plt.imshow(geodesic_dist)
plt.plot(80, 64, "mo")
plt.subplot(1, 2, 2)
plt.imshow(euclidean_dist)
plt.plot(80, 64, "mo")
plt.show()
