# source: https://github.com/pytorch/serve/issues/409
# error: (issue title) "model run fails with CUDA version error - b/c server is CPU only vs trained on GPU...dynamically
#        adjust map_location?" - the default image classifier handler's load of a GPU-saved model on a CPU-only server
# bug: BaseHandler.initialize picks self.device = cuda:{gpu_id} when CUDA is available, else cpu, but loads the
#      serialized file with a bare torch.jit.load(model_pt_path) and, when that raises, falls back to the eager model
#      with a bare torch.load(model_pt_path): a model saved on a GPU cannot be restored on the CPU-only server either
#      way, although the handler moves the model to self.device right after. The fix (commit 2b6c9c9, PR #444, "Fix
#      model [scripted and eager] loading error on cpu which was saved on gpu") passes map_location ('cuda' if
#      available else 'cpu') to both loads and picks eager or TorchScript by whether the model file exists instead of
#      by the exception; the two load lines are marked (DL301). Reductions: the model archive is a temporary
#      directory holding model.py, the weights and no index_to_name.json; the context is a namespace with manifest
#      and system_properties; ImageClassifier's PIL/torchvision preprocessing is a ready array and it derives from
#      BaseHandler directly (VisionHandler dropped); the driver writes the weights from wherever it runs (the bug
#      needs weights written on a GPU machine and a CPU-only server). Needs NumPy (the image classifier imports it,
#      as upstream).
import abc
import importlib
import inspect
import json
import logging
import os
import sys
import tempfile
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Variable

logger = logging.getLogger(__name__)

MODEL_PY = '''
import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.features(x))
'''


# --- ts/utils/util.py ---
def list_classes_from_module(module):
    classes = [cls[1] for cls in inspect.getmembers(module, lambda member: inspect.isclass(member) and
                                                     member.__module__ == module.__name__)]
    return classes


# --- ts/torch_handler/base_handler.py ---
class BaseHandler(abc.ABC):
    def __init__(self):
        self.model = None
        self.mapping = None
        self.device = None
        self.initialized = False
        self.manifest = None

    def initialize(self, ctx):
        """First try to load torchscript else load eager mode state_dict based model"""
        self.manifest = ctx.manifest
        properties = ctx.system_properties
        model_dir = properties.get("model_dir")
        self.device = torch.device("cuda:" + str(properties.get("gpu_id")) if torch.cuda.is_available() else "cpu")

        serialized_file = self.manifest['model']['serializedFile']
        model_pt_path = os.path.join(model_dir, serialized_file)
        if not os.path.isfile(model_pt_path):
            raise RuntimeError("Missing the model.pt file")

        try:
            logger.debug('Loading torchscript model')
            self.model = torch.jit.load(model_pt_path)  # expect: DL301
        except RuntimeError as e:
            model_file = self.manifest['model']['modelFile']
            model_def_path = os.path.join(model_dir, model_file)
            if not os.path.isfile(model_def_path):
                raise RuntimeError("Missing the model.py file")

            module = importlib.import_module(model_file.split(".")[0])
            model_class_definitions = list_classes_from_module(module)
            if len(model_class_definitions) != 1:
                raise ValueError("Expected only one class as model definition. {}".format(model_class_definitions))

            model_class = model_class_definitions[0]
            state_dict = torch.load(model_pt_path)  # expect: DL301
            self.model = model_class()
            self.model.load_state_dict(state_dict)
        self.model.to(self.device)
        self.model.eval()

        mapping_file_path = os.path.join(model_dir, "index_to_name.json")
        if os.path.isfile(mapping_file_path):
            with open(mapping_file_path) as f:
                self.mapping = json.load(f)
        else:
            logger.warning('Missing the index_to_name.json file. Inference output will not include class name.')
        self.initialized = True

    @abc.abstractmethod
    def preprocess(self, data):
        pass

    @abc.abstractmethod
    def inference(self, data):
        pass

    @abc.abstractmethod
    def postprocess(self, data):
        pass


# --- ts/torch_handler/image_classifier.py ---
class ImageClassifier(BaseHandler):
    def preprocess(self, data):
        image = data[0].get("data")
        if image is None:
            image = data[0].get("body")
        return image

    def inference(self, data):
        topk = 5
        data = np.expand_dims(data, 0)
        data = torch.from_numpy(data)

        inputs = Variable(data).to(self.device)
        outputs = self.model.forward(inputs)

        ps = F.softmax(outputs, dim=1)
        topk = getattr(ps, self.device.type)().topk(topk)

        probs, classes = (e.cpu().data.numpy().squeeze().tolist() for e in topk)
        results = []
        for index, elem in enumerate(probs):
            results.append({str(classes[index]): str(probs[index])})
        return [results]

    def postprocess(self, data):
        return data


def write_model_archive(model_dir):
    with open(os.path.join(model_dir, "model.py"), "w") as f:
        f.write(MODEL_PY)
    sys.path.insert(0, model_dir)
    module = importlib.import_module("model")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = list_classes_from_module(module)[0]().to(device)
    torch.save(net.state_dict(), os.path.join(model_dir, "model.pt"))


if __name__ == "__main__":
    model_dir = tempfile.mkdtemp()
    write_model_archive(model_dir)
    ctx = SimpleNamespace(manifest={'model': {'serializedFile': 'model.pt', 'modelFile': 'model.py'}},
                          system_properties={"model_dir": model_dir, "gpu_id": 0})
    handler = ImageClassifier()
    handler.initialize(ctx)
    image = torch.rand(3, 32, 32).numpy()
    print(handler.postprocess(handler.inference(handler.preprocess([{"data": image}]))))
