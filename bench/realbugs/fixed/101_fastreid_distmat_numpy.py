# source: https://github.com/JDAI-CV/fast-reid/pull/509
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the visualisation script collects features from a predictor whose model runs on the configured
#      GPU, builds the cosine distance matrix from them and calls .numpy() on it without .cpu().
import numpy as np
import torch
import torch.nn.functional as F
import tqdm

from fastreid.config import get_cfg
from fastreid.data import build_reid_test_loader
from fastreid.evaluation.rank import evaluate_rank
from fastreid.modeling.meta_arch import build_model


class DefaultPredictor:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = build_model(cfg)
        self.model.eval()
        self.model.to(torch.device(cfg.MODEL.DEVICE))

    def __call__(self, images):
        with torch.no_grad():
            images = images.to(self.cfg.MODEL.DEVICE)
            feats = self.model(images)
            return F.normalize(feats)


class FeatureExtractionDemo(object):
    def __init__(self, cfg):
        self.cfg = cfg
        self.predictor = DefaultPredictor(cfg)

    def run_on_loader(self, data_loader):
        for batch in data_loader:
            predictions = self.predictor(batch["images"])
            yield predictions, batch["targets"].numpy(), batch["camid"].numpy()


if __name__ == '__main__':
    cfg = get_cfg()
    cfg.merge_from_file("configs/VeRi/sbs_R50-ibn.yml")
    test_loader, num_query = build_reid_test_loader(cfg, dataset_name="VeRi")
    demo = FeatureExtractionDemo(cfg)

    feats, pids, camids = [], [], []
    for (feat, pid, camid) in tqdm.tqdm(demo.run_on_loader(test_loader), total=len(test_loader)):
        feats.append(feat)
        pids.extend(pid)
        camids.extend(camid)

    feats = torch.cat(feats, dim=0)
    q_feat = feats[:num_query]
    g_feat = feats[num_query:]
    q_pids = np.asarray(pids[:num_query])
    g_pids = np.asarray(pids[num_query:])
    q_camids = np.asarray(camids[:num_query])
    g_camids = np.asarray(camids[num_query:])

    distmat = 1 - torch.mm(q_feat, g_feat.t())
    distmat = distmat.cpu().numpy()

    cmc, all_ap, all_inp = evaluate_rank(distmat, q_pids, g_pids, q_camids, g_camids)
    print("mAP", np.mean(all_ap))
