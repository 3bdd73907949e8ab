# source: https://github.com/mit-ll-responsible-ai/equine/issues/206
# error: (no crash) train/calibration tensors silently stay on the CPU; every episode re-copies them to the device
# bug: train_model calls train_x.to(self.device) (and the same for train_y, calib_x, calib_y) as bare
#      statements; Tensor.to is not in-place, so the moves are thrown away.
from typing import Any, Callable

import torch
from torch.utils.data import TensorDataset

from equine.equine import Equine
from equine.equine_protonet import Protonet
from equine.utils import generate_episode, generate_support, stratified_train_test_split


class EquineProtonet(Equine):
    def __init__(self, embedding_model: torch.nn.Module, emb_out_dim: int, device: str = "cpu"):
        super().__init__(embedding_model)
        self.device = device
        self.model = Protonet(embedding_model, emb_out_dim, device=device)

    def train_model(self, dataset: TensorDataset, num_episodes: int, calib_frac: float = 0.2,
                    support_size: int = 25, way: int = 3, episode_size: int = 100,
                    loss_fn: Callable = torch.nn.functional.cross_entropy,
                    opt_class: Callable = torch.optim.Adam) -> dict[str, Any]:
        self.train()
        X, Y = dataset[:]
        train_x, calib_x, train_y, calib_y = stratified_train_test_split(X, Y, test_size=calib_frac)
        optimizer = opt_class(self.parameters())

        train_x.to(self.device)  # expect: DL101
        train_y.to(self.device)  # expect: DL101
        calib_x.to(self.device)  # expect: DL101
        calib_y.to(self.device)  # expect: DL101

        for i in range(num_episodes):
            optimizer.zero_grad()
            support, episode_x, episode_y = generate_episode(train_x, train_y, support_size, way, episode_size)
            self.model.update_support(support)
            _, dists = self.model(episode_x)
            loss_value = loss_fn(torch.neg(dists).to(self.device), episode_y.to(self.device))
            loss_value.backward()
            optimizer.step()

        self.eval()
        full_support = generate_support(train_x, train_y, support_size,
                                        selected_labels=torch.unique(train_y).tolist())
        self.model.update_support(full_support)
        X_embed = self.model.compute_embeddings(calib_x)
        pred_probs, dists = self.model(calib_x)
        return {"calib_embeddings": X_embed, "calib_labels": calib_y}

