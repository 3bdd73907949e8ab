# source: https://github.com/CSAILVision/NetDissect-Lite/pull/5
# fixed twin: the NaN guard takes the maximum of the logits copied to the host (commit fd5a997).
import numpy as np
import torch
import torch.nn as nn


class settings:
    GPU = torch.cuda.is_available()
    FEATURE_NAMES = ["layer2"]
    BATCH_SIZE = 2


features_blobs = []


def hook_feature(module, input, output):
    features_blobs.append(output.data.cpu().numpy())


def loadmodel(hook_fn):
    model = nn.Sequential()
    model.add_module("layer1", nn.Conv2d(3, 4, 3, padding=1))
    model.add_module("layer2", nn.Conv2d(4, 4, 3, padding=1))
    model.add_module("pool", nn.AdaptiveAvgPool2d(1))
    model.add_module("flat", nn.Flatten())
    model.add_module("fc", nn.Linear(4, 5))
    for name in settings.FEATURE_NAMES:
        model._modules.get(name).register_forward_hook(hook_fn)
    if settings.GPU:
        model.cuda()
    model.eval()
    return model


class FeatureOperator:
    def __init__(self, batches):
        self.batches = batches

    def feature_extraction(self, model):
        maxfeatures = []
        for batch in self.batches:
            del features_blobs[:]
            input = torch.from_numpy(batch[:, ::-1, :, :].copy())
            input.div_(255.0 * 0.224)
            if settings.GPU:
                input = input.cuda()
            with torch.no_grad():
                logit = model.forward(input)
                while np.isnan(logit.data.cpu().max()):
                    del features_blobs[:]
                    logit = model.forward(input)
            for feat_batch in features_blobs:
                maxfeatures.append(np.max(np.max(feat_batch, 3), 2))
        return np.concatenate(maxfeatures)


if __name__ == "__main__":
    model = loadmodel(hook_feature)
    batches = [np.random.rand(settings.BATCH_SIZE, 3, 8, 8).astype(np.float32) * 255 for _ in range(2)]
    print(FeatureOperator(batches).feature_extraction(model).shape)
