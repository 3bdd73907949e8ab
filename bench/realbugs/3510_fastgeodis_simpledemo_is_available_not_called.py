# source: https://github.com/masadcv/FastGeodis/issues/7
# error: (no traceback) "Run an example notebook in colab with no GPU" - the examples pick "cuda" on a CPU-only
#        runtime, and the first move to it fails
# bug: samples/simpledemo2d.py chooses device = "cuda" if torch.cuda.is_available else "cpu"; the function object
#      is always truthy, so the image tensor is moved to CUDA on a machine without one and the CPU path of
#      FastGeodis.generalised_geodesic2d is never reached. The fix (commit 2a3e081, "fix torch cuda is_available
#      typo in examples") calls is_available() in the script, the notebook and the README; the script's line is
#      marked (DL307). The program is the sample script with the plotting reduced to two panels and another seed
#      point; FastGeodis (a C++/CUDA extension), NumPy, Pillow and Matplotlib are imported as upstream (absent
#      here), so the file does not run on this machine.
import matplotlib.pyplot as plt
import numpy as np
import torch
from PIL import Image

import FastGeodis

device = "cuda" if torch.cuda.is_available else "cpu"  # expect: DL307
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
