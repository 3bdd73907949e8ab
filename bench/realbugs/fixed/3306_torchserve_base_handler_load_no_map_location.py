# source: https://github.com/pytorch/serve/issues/409
# fixed twin: commit 2b6c9c9 (PR #444) passes map_location = 'cuda' if torch.cuda.is_available() else 'cpu' to
#             torch.load and torch.jit.load, and loads the eager model when model.py exists, TorchScript otherwise.
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

        model_file = self.manifest['model']['modelFile']
        model_def_path = os.path.join(model_dir, model_file)

        map_location = 'cuda' if torch.cuda.is_available() else 'cpu'

        if os.path.isfile(model_def_path):
            module = importlib.import_module(model_file.split(".")[0])
            model_class_definitions = list_classes_from_module(module)
            if len(model_class_definitions) != 1:
                raise ValueError("Expected only one class as model definition. {}".format(model_class_definitions))

            model_class = model_class_definitions[0]
            state_dict = torch.load(model_pt_path, map_location=map_location)
            self.model = model_class()
            self.model.load_state_dict(state_dict)
        else:
            logger.debug('No model file found for eager mode, trying to load torchscript model')
            self.model = torch.jit.load(model_pt_path, map_location=map_location)
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
