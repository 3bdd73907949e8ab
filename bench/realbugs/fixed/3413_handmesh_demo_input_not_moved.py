# source: https://github.com/SeanChenxy/HandMesh/issues/3
# fixed twin: commit 4debbaf ("fix issue #3") moves the demo input to the runner's device:
#             torch.from_numpy(base_transform(image, size=224)).unsqueeze(0).to(self.device).
import argparse
import os
import tempfile

import cv2
import numpy as np
import torch
import torch.nn as nn


# --- utils/vis.py ---
def base_transform(img, size, mean=0.5, std=0.5):
    x = cv2.resize(img, (size, size)).astype(np.float32) / 255
    x -= mean
    x /= std
    x = x.transpose(2, 0, 1)
    return x


# --- cmr/cmr_sg.py (stand-in) ---
class CMR_SG(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 7, stride=8)
        self.mesh_head = nn.Linear(8, 778 * 3)
        self.uv_head = nn.Conv2d(8, 21, 1)

    def forward(self, x):
        feat = self.backbone(x)
        mesh = self.mesh_head(feat.mean((2, 3))).view(-1, 778, 3)
        return {'mesh_pred': [mesh], 'uv_pred': self.uv_head(feat)}


# --- run.py ---
class Runner(object):
    def __init__(self, args, model, faces, device):
        super(Runner, self).__init__()
        self.args = args
        self.model = model
        self.faces = faces
        self.device = device
        self.j_regressor = np.zeros([21, 778])
        self.std = torch.tensor(0.20).to(self.device)
        self.face = torch.from_numpy(self.faces[0].astype(np.int64)).to(self.device)

    def demo(self):
        args = self.args
        self.model.eval()
        image_fp = os.path.join(args.work_dir, 'images')
        image_files = [os.path.join(image_fp, i) for i in os.listdir(image_fp) if '_img.jpg' in i]
        with torch.no_grad():
            for step, image_path in enumerate(image_files):
                image_name = image_path.split('/')[-1].split('_')[0]
                image = cv2.imread(image_path)[..., ::-1]
                input = torch.from_numpy(base_transform(image, size=224)).unsqueeze(0).to(self.device)

                out = self.model(input)
                pred = out['mesh_pred'][0] if isinstance(out['mesh_pred'], list) else out['mesh_pred']
                vertex = (pred[0].cpu() * self.std.cpu()).numpy()
                vertex2xyz = np.matmul(self.j_regressor, vertex)
                print(image_name, vertex.shape, vertex2xyz.shape)


# --- main.py ---
if __name__ == '__main__':
    work_dir = tempfile.mkdtemp()
    os.makedirs(os.path.join(work_dir, 'images'))
    cv2.imwrite(os.path.join(work_dir, 'images', '00000000_img.jpg'), (np.random.rand(240, 320, 3) * 255).astype(np.uint8))

    parser = argparse.ArgumentParser()
    parser.add_argument('--phase', type=str, default='demo')
    parser.add_argument('--device_idx', type=int, nargs='+', default=[0])
    parser.add_argument('--work_dir', type=str, default=work_dir)
    args = parser.parse_args([])

    if -1 in args.device_idx or not torch.cuda.is_available():
        device = torch.device('cpu')
    elif len(args.device_idx) == 1:
        device = torch.device('cuda', args.device_idx[0])
    else:
        device = torch.device('cuda')

    model = CMR_SG()
    model = model.to(device)
    faces = [np.zeros((1538, 3), dtype=np.int64)]
    runner = Runner(args, model, faces, device)
    if args.phase == 'demo':
        runner.demo()
