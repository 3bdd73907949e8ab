# source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/347
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
#        (inference_model.train_indexer(data) with the trunk moved to the GPU)
# bug: utils/inference.py's InferenceModel.train_indexer -> call_indexer -> get_embeddings_from_tensor_or_dataset
#      batches a Dataset with a DataLoader (CPU tensors) and get_embeddings runs self.trunk(x) on each batch without
#      moving it to the trunk's device; the maintainer: "The data is not being transferred to the model's device. I
#      will fix this". The fix (commit 0cdf530 "Add data_device and dtype to InferenceModel", released in 1.0.0.dev0)
#      adds a data_device argument (CUDA when available) and moves tensor inputs with c_f.to_device in
#      get_embeddings; the trunk call that receives the CPU batch is marked (DL203). Reductions: MatchFinder keeps
#      its constructor, CosineSimilarity is a stand-in class, FaissIndexer keeps train/add/search; the matching and
#      save/load methods and LogitGetter are cut; the reporter's efnet_b7 and ImageFolder of 512x512 images become a
#      small CNN and a TensorDataset of 64x64 images. faiss and NumPy are imported as upstream (absent here), so the
#      file does not run on this machine.
import numpy as np
import torch


# --- utils/common_functions.py ---
class Identity(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


def to_dtype(x, tensor=None, dtype=None):
    if not torch.is_autocast_enabled():
        dt = dtype if dtype is not None else tensor.dtype
        if x.dtype != dt:
            x = x.type(dt)
    return x


def to_device(x, tensor=None, device=None, dtype=None):
    dv = device if device is not None else tensor.device
    if x.device != dv:
        x = x.to(dv)
    if dtype is not None:
        x = to_dtype(x, dtype=dtype)
    return x


# --- distances/cosine_similarity.py (stand-in) ---
class CosineSimilarity:
    pass


# --- utils/inference.py ---
class MatchFinder:
    def __init__(self, distance, threshold=None):
        self.distance = distance
        self.threshold = threshold


class FaissIndexer:
    def __init__(self, index=None):
        import faiss as faiss_module

        self.faiss_module = faiss_module
        self.index = index

    def train_index(self, embeddings):
        self.index = self.faiss_module.IndexFlatL2(embeddings.shape[1])
        self.add_to_index(embeddings)

    def add_to_index(self, embeddings):
        self.index.add(embeddings)

    def search_nn(self, query_batch, k):
        D, I = self.index.search(query_batch, k)
        return I, D


class InferenceModel:
    def __init__(self, trunk, embedder=None, match_finder=None, normalize_embeddings=True, indexer=None):
        self.trunk = trunk
        self.embedder = Identity() if embedder is None else embedder
        self.match_finder = (
            MatchFinder(distance=CosineSimilarity(), threshold=0.9)
            if match_finder is None
            else match_finder
        )
        self.indexer = FaissIndexer() if indexer is None else indexer
        self.normalize_embeddings = normalize_embeddings

    def get_embeddings_from_tensor_or_dataset(self, inputs, batch_size):
        inputs = self.process_if_list(inputs)
        embeddings = []
        if isinstance(inputs, (torch.Tensor, list)):
            for i in range(0, len(inputs), batch_size):
                embeddings.append(self.get_embeddings(inputs[i : i + batch_size]))
        elif isinstance(inputs, torch.utils.data.Dataset):
            dataloader = torch.utils.data.DataLoader(inputs, batch_size=batch_size)
            for inp, _ in dataloader:
                embeddings.append(self.get_embeddings(inp))
        else:
            raise TypeError(f"Indexing {type(inputs)} is not supported.")
        return torch.cat(embeddings)

    def train_indexer(self, inputs, batch_size=64):
        self.call_indexer(self.indexer.train_index, inputs, batch_size)

    def call_indexer(self, func, inputs, batch_size):
        embeddings = self.get_embeddings_from_tensor_or_dataset(inputs, batch_size)
        func(embeddings.cpu().numpy())

    def get_nearest_neighbors(self, query, k):
        if not self.indexer.index or not self.indexer.index.is_trained:
            raise RuntimeError("Index must be trained by running `train_indexer`")
        query_emb = self.get_embeddings(query)
        indices, distances = self.indexer.search_nn(query_emb.cpu().numpy(), k)
        return indices, distances

    def get_embeddings(self, x):
        x = self.process_if_list(x)
        self.trunk.eval()
        self.embedder.eval()
        with torch.no_grad():
            x_emb = self.embedder(self.trunk(x))  # expect: DL203
        if self.normalize_embeddings:
            x_emb = torch.nn.functional.normalize(x_emb, p=2, dim=1)
        return x_emb

    def process_if_list(self, x):
        if isinstance(x, list) and all(isinstance(x_, torch.Tensor) for x_ in x):
            return torch.stack(x)
        return x


# --- the reporter's script ---
if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(16, 32)).to(device)
    data = torch.utils.data.TensorDataset(torch.randn(10, 3, 64, 64), torch.arange(10))
    match_finder = MatchFinder(distance=CosineSimilarity(), threshold=0.7)
    inference_model = InferenceModel(model, match_finder=match_finder)
    inference_model.train_indexer(data)
