# source: https://github.com/jayliu0313/Shape-Guided/issues/11
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
#        (main.py -> shape_guide_core.align -> rgb_sdf_feature.predict_align_data -> Features.Dict_compute_rgb_map,
#        at knn_features = shape_guide_rgb_features_28[knn_idx[patch]])
# bug: Features picks self.device = "cuda" when available and its RGB_Model moves each image there, so the test
#      patch features rgb_patch_28 are GPU tensors; Dict_compute_rgb_map takes the memory bank to self.device, runs
#      torch.cdist/torch.topk there - knn_idx is a GPU tensor - and then moves the bank and the patches back with
#      .cpu() for the dictionary step, indexing the host bank with the GPU knn_idx (PyTorch 1.13+ rejects it; the
#      sibling Find_KNN_feature does knn_idx = knn_idx.cpu() first). The maintainer only answered "use a GPU, or set
#      every tensor to cpu"; the code is unchanged at the repository's last commit, so there is no fix and the
#      marker is on the indexing line of the traceback (DL207). Reductions: timm's wide_resnet50_2 is a small conv
#      backbone, the SDF branch and the data loader are random stand-ins, sklearn's sparse_encode (OMP) is a
#      least-squares stand-in of the same name, np.full is torch.full.
#      Versions: this file follows the repository's features.py as stored in the code index, which takes the bank to
#      self.device in Dict_compute_rgb_map; an audit found commit c530e15 without that move (rgb_lib = self.rgb_patch_lib).
#      The device flow of the failure is the same in both: the bank slice is on the host when knn_idx (GPU) indexes it.
import torch


def sparse_encode(X, dictionary):
    return torch.linalg.lstsq(dictionary.T, X.T).solution.T


class RGB_Model(torch.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.backbone = torch.nn.ModuleList([torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
                                             torch.nn.Conv2d(8, 8, 3, stride=2, padding=1)])
        self.device = device

    def forward(self, x):
        x = x.to(self.device)
        features = []
        for layer in self.backbone:
            x = torch.relu(layer(x))
            features.append(x)
        return features


class Features(torch.nn.Module):
    def __init__(self, image_size=56):
        super().__init__()
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.rgb_feature_extractor = RGB_Model(device=self.device)
        self.rgb_feature_extractor.to(self.device)
        self.image_size = image_size
        self.average = torch.nn.AvgPool2d(3, stride=1)
        self.resize = torch.nn.AdaptiveAvgPool2d((28, 28))
        self.rgb_f_idx_patch_lib = []
        self.rgb_patch_lib = []
        self.rgb_image_preds = []

    def __call__(self, x):
        with torch.no_grad():
            feature_maps = self.rgb_feature_extractor(x)
        return feature_maps

    def foreground_subsampling(self):
        self.rgb_patch_lib = torch.cat(self.rgb_patch_lib, 0)
        self.origin_f_map = torch.full((self.rgb_patch_lib.shape[0],), -1, dtype=torch.long)
        use_f_idices = torch.unique(torch.cat(self.rgb_f_idx_patch_lib, dim=0))
        self.rgb_patch_lib = self.rgb_patch_lib[use_f_idices]
        self.origin_f_map[use_f_idices] = torch.arange(use_f_idices.shape[0])

    def Dict_compute_rgb_map(self, rgb_patch_28, rgb_features_indices, lib_idices, mode='testing'):
        rgb_lib = self.rgb_patch_lib.to(self.device)
        lib_idices = torch.unique(lib_idices.flatten()).tolist()
        s_map_size28 = torch.zeros(28 * 28)
        pdist = torch.nn.PairwiseDistance(p=2, eps=1e-12)
        rgb_indices_28 = []
        for patch_idx in lib_idices:
            rgb_indices_28.append(self.origin_f_map[self.rgb_f_idx_patch_lib[patch_idx]])
        rgb_indices_28 = torch.unique(torch.cat(rgb_indices_28, dim=0))
        shape_guide_rgb_features_28 = rgb_lib[rgb_indices_28]
        foreground_rgb_indices_28 = torch.unique(torch.cat(rgb_features_indices, dim=0))
        rgb_patch_28 = rgb_patch_28[foreground_rgb_indices_28]
        Dict_features_size28 = []
        dist_28 = torch.cdist(rgb_patch_28, shape_guide_rgb_features_28.to(self.device))
        knn_val, knn_idx = torch.topk(dist_28, k=5 + 1, largest=False)
        if mode == 'alignment':
            knn_idx = knn_idx[:, 1:]
        else:
            knn_idx = knn_idx[:, :-1]
        rgb_patch_28 = rgb_patch_28.cpu()
        shape_guide_rgb_features_28 = shape_guide_rgb_features_28.cpu()
        for patch in range(knn_idx.shape[0]):
            knn_features = shape_guide_rgb_features_28[knn_idx[patch]]  # expect: DL207
            code_matrix = sparse_encode(X=rgb_patch_28[patch].view(1, -1), dictionary=knn_features)
            Dict_features_size28.append(torch.matmul(code_matrix, knn_features))
        Dict_features_size28 = torch.cat(Dict_features_size28, 0)
        s_map_size28[foreground_rgb_indices_28] = pdist(rgb_patch_28, Dict_features_size28)
        s = torch.max(s_map_size28)
        s_map = torch.nn.functional.interpolate(s_map_size28.view(1, 1, 28, 28), size=(self.image_size, self.image_size),
                                                mode='bilinear', align_corners=False)
        return s_map.to('cpu'), s


class RGBSDFFeatures(Features):
    def predict_align_data(self, sample, test_data_id):
        rgb_features_indices = [torch.randint(0, 28 * 28, (32,))]
        lib_idices = torch.randint(0, len(self.rgb_f_idx_patch_lib), (4, 3))
        rgb_feature_maps = self(sample[0])
        rgb_resized_maps = [self.resize(self.average(fmap)) for fmap in rgb_feature_maps]
        rgb_patch = torch.cat(rgb_resized_maps, 1)
        rgb_features_size28 = rgb_patch.reshape(rgb_patch.shape[1], -1).T
        rgb_map, rgb_s = self.Dict_compute_rgb_map(rgb_features_size28, rgb_features_indices, lib_idices, mode='alignment')
        self.rgb_image_preds.append(rgb_s.item())


if __name__ == '__main__':
    torch.manual_seed(0)
    methods = RGBSDFFeatures()
    for _ in range(8):
        methods.rgb_patch_lib.append(torch.randn(28 * 28, 16))
        methods.rgb_f_idx_patch_lib.append(torch.randint(0, 8 * 28 * 28, (64,)))
    methods.foreground_subsampling()
    with torch.no_grad():
        for align_data_id in range(3):
            sample = (torch.rand(1, 3, 112, 112),)
            methods.predict_align_data(sample, align_data_id)
    print(methods.rgb_image_preds)
