# source: https://github.com/WenjieDu/PyPOTS/pull/794
# error: (PR description) "ensuring padding tensors are created on the same device as the input, preventing device
#        mismatch errors during GPU execution" - torch.cat of a CPU NaN pad and the CUDA window
# bug: BaseNNModel picks a CUDA device when one is available and moves the model and, in
#      _send_data_to_given_device, every batch there; BaseNNRepresentor.predict/represent (inherited by TS2Vec)
#      hands the batch's X to _TS2Vec.forward, which calls TS2VecEncoder.encode. With sliding_length set, encode pads each window with
#      nn/modules/ts2vec/utils.torch_pad_nan, which builds the NaN padding with torch.full(padshape, np.nan) on the CPU
#      and concatenates it with the CUDA slice. PR #794 (commit 59211b8, merged in bfff5c2) adds device=arr.device,
#      dtype=arr.dtype to both torch.full calls; those two lines are marked (DL202). Reductions: the dilated conv
#      encoder is one Conv1d; BaseDataset returns (index, X, missing_mask) from an in-memory dict; no training loop,
#      optimizer wrapper, AMP, saving or downstream SVM/ridge helpers; predict returns the concatenated
#      representations instead of gather_listed_dicts. Needs NumPy (upstream imports it; absent on this machine).
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


# --- pypots/nn/modules/ts2vec/utils.py ---
def torch_pad_nan(arr, left=0, right=0, dim=0):
    if left > 0:
        padshape = list(arr.shape)
        padshape[dim] = left
        arr = torch.cat((torch.full(padshape, np.nan), arr), dim=dim)  # expect: DL202
    if right > 0:
        padshape = list(arr.shape)
        padshape[dim] = right
        arr = torch.cat((arr, torch.full(padshape, np.nan)), dim=dim)  # expect: DL202
    return arr


# --- pypots/nn/modules/ts2vec/backbone.py ---
class TS2VecEncoder(nn.Module):
    def __init__(self, n_features: int, n_pred_features: int, d_hidden: int, n_layers: int, mask_mode: str = "binomial"):
        super().__init__()
        self.mask_mode = mask_mode
        self.input_fc = nn.Linear(n_features, d_hidden)
        self.feature_extractor = nn.Conv1d(d_hidden, n_pred_features, kernel_size=3, padding=1)
        self.repr_dropout = nn.Dropout(p=0.1)

    def forward(self, x, mask=None):
        nan_mask = ~x.isnan().any(axis=-1)
        x[~nan_mask] = 0
        x = self.input_fc(x)
        if mask is None:
            mask = "all_true"
        if mask == "all_true":
            mask = x.new_full((x.size(0), x.size(1)), True, dtype=torch.bool)
        mask &= nan_mask
        x[~mask] = 0
        x = x.transpose(1, 2)
        x = self.repr_dropout(self.feature_extractor(x))
        return x.transpose(1, 2)

    def _eval_with_pooling(self, x, mask=None, slicing=None, encoding_window=None):
        out = self.forward(x, mask)
        if encoding_window == "full_series":
            if slicing is not None:
                out = out[:, slicing]
            out = F.max_pool1d(out.transpose(1, 2), kernel_size=out.size(1)).transpose(1, 2)
        else:
            if slicing is not None:
                out = out[:, slicing]
        return out.cpu()

    @torch.no_grad()
    def encode(self, x: torch.Tensor, mask: Optional[str] = None, encoding_window: Optional[str] = None,
               causal: bool = False, sliding_length: Optional[int] = None, sliding_padding: int = 0) -> torch.Tensor:
        n_samples, n_steps, _ = x.shape
        if sliding_length is not None:
            reprs = []
            for i in range(0, n_steps, sliding_length):
                left = i - sliding_padding
                right = i + sliding_length + (sliding_padding if not causal else 0)
                x_sliding = torch_pad_nan(
                    x[:, max(left, 0): min(right, n_steps)],
                    left=-left if left < 0 else 0,
                    right=right - n_steps if right > n_steps else 0,
                    dim=1,
                )
                out = self._eval_with_pooling(x_sliding, mask, slicing=slice(sliding_padding, sliding_padding + sliding_length),
                                              encoding_window=encoding_window)
                reprs.append(out)
            reprs = torch.cat(reprs, dim=1)
            if encoding_window == "full_series":
                reprs = F.max_pool1d(reprs.transpose(1, 2).contiguous(), kernel_size=reprs.size(1)).squeeze(1)
        else:
            reprs = self._eval_with_pooling(x, mask, encoding_window=encoding_window)
            if encoding_window == "full_series":
                reprs = reprs.squeeze(1)
        return reprs


# --- pypots/representation/ts2vec/core.py ---
class _TS2Vec(nn.Module):
    def __init__(self, n_steps, n_features, n_pred_features, d_hidden, n_layers, mask_mode, temporal_unit=0):
        super().__init__()
        self.encoder = TS2VecEncoder(n_features, n_pred_features, d_hidden, n_layers, mask_mode)

    def forward(self, inputs: dict, calc_criterion: bool = False, mask: str = None, encoding_window=None,
                causal=False, sliding_length=None, sliding_padding=0) -> dict:
        X = inputs["X"]
        results = {}
        reprs = self.encoder.encode(X, mask, encoding_window, causal, sliding_length, sliding_padding)
        results["representation"] = reprs
        return results


# --- pypots/data/dataset/base.py ---
class BaseDataset(Dataset):
    def __init__(self, data, return_X_ori=False, return_X_pred=False, return_y=False, file_type="hdf5"):
        self.X = torch.as_tensor(data["X"], dtype=torch.float32)

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        X = self.X[idx]
        missing_mask = (~torch.isnan(X)).type(torch.float32)
        return torch.tensor(idx), torch.nan_to_num(X), missing_mask


# --- pypots/base.py ---
class BaseNNModel:
    def __init__(self, batch_size, num_workers=0, device=None):
        self.batch_size = batch_size
        self.num_workers = num_workers
        self._setup_device(device)

    def _setup_device(self, device):
        if device is None:
            if torch.cuda.is_available() and torch.cuda.device_count() > 0:
                self.device = torch.device("cuda")
            else:
                self.device = torch.device("cpu")
        else:
            self.device = torch.device(device)

    def _send_model_to_given_device(self) -> None:
        self.model = self.model.to(self.device)

    def _send_data_to_given_device(self, data):
        if isinstance(self.device, (torch.device, list)):
            data = map(lambda x: x.to(self.device), data)
        else:
            data = map(lambda x: x.to("cpu"), data)
        return data


# --- pypots/representation/base.py ---
class BaseNNRepresentor(BaseNNModel):
    @torch.no_grad()
    def predict(self, test_set, file_type="hdf5", **kwargs) -> dict:
        self.model.eval()
        test_dataset = BaseDataset(test_set, return_X_ori=False, return_X_pred=False, return_y=False, file_type=file_type)
        test_dataloader = DataLoader(test_dataset, batch_size=self.batch_size, shuffle=False, num_workers=self.num_workers)
        dict_result_collector = []
        for idx, data in enumerate(test_dataloader):
            inputs = self._assemble_input_for_testing(data)
            results = self.model(inputs, **kwargs)
            dict_result_collector.append(results["representation"])
        return {"representation": torch.cat(dict_result_collector)}

    def represent(self, test_set, file_type="hdf5", mask=None, encoding_window=None, causal=False,
                  sliding_length=None, sliding_padding=0):
        result_dict = self.predict(test_set, file_type=file_type, mask=mask, encoding_window=encoding_window,
                                   causal=causal, sliding_length=sliding_length, sliding_padding=sliding_padding)
        return result_dict["representation"]


# --- pypots/representation/ts2vec/model.py ---
class TS2Vec(BaseNNRepresentor):
    def __init__(self, n_steps, n_features, n_output_dims, d_hidden, n_layers, mask_mode="binomial",
                 batch_size=32, num_workers=0, device=None):
        super().__init__(batch_size, num_workers, device)
        self.model = _TS2Vec(n_steps, n_features, n_output_dims, d_hidden, n_layers, mask_mode)
        self._send_model_to_given_device()

    def _assemble_input_for_training(self, data: list) -> dict:
        indices, X, missing_mask = self._send_data_to_given_device(data)
        missing_mask = missing_mask.to(torch.bool)
        inputs = {"indices": indices, "X": torch.masked_fill(X, ~missing_mask, torch.nan)}
        return inputs

    def _assemble_input_for_testing(self, data: list) -> dict:
        return self._assemble_input_for_training(data)


if __name__ == "__main__":
    X = torch.randn(16, 24, 5)
    X[X > 1.5] = float("nan")
    ts2vec = TS2Vec(n_steps=24, n_features=5, n_output_dims=8, d_hidden=16, n_layers=2, batch_size=8)
    reprs = ts2vec.represent({"X": X}, encoding_window="full_series", sliding_length=8, sliding_padding=4)
    print(reprs.shape)
