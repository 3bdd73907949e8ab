# source: https://github.com/microsoft/FS-Mol/pull/46
# error: RuntimeError: Expected all tensors to be on the same device (ProtoNet evaluation on GPU; test batches on the CPU)
# bug: the test script builds the prototypical network on cuda, but evaluate_protonet_model turns each
#      test task into CPU batches and runs the model on them without moving them to model.device.
from typing import List, Tuple

import numpy as np
import torch

from fs_mol.data import FSMolDataset, FSMolTaskSample
from fs_mol.data.protonet import get_protonet_batcher, task_sample_to_pn_task_sample
from fs_mol.models.protonet import PrototypicalNetwork
from fs_mol.utils.metrics import BinaryEvalMetrics, compute_binary_task_metrics
from fs_mol.utils.protonet_utils import PrototypicalNetworkTrainer
from fs_mol.utils.test_utils import eval_model
from fs_mol.utils.torch_utils import torchify


def run_on_batches(model: PrototypicalNetwork, batches, batch_labels: List[torch.Tensor],
                   train: bool = False) -> Tuple[float, BinaryEvalMetrics]:
    model.train() if train else model.eval()
    total_loss, total_num_samples = 0.0, 0
    task_preds, task_labels = [], []
    for batch_features, labels in zip(batches, batch_labels):
        batch_logits = model(batch_features)
        batch_loss = model.compute_loss(batch_logits, labels)
        if train:
            batch_loss.backward()
        total_loss += batch_loss.detach() * batch_features.num_query_samples
        total_num_samples += batch_features.num_query_samples
        batch_preds = torch.nn.functional.softmax(batch_logits, dim=1).detach().cpu().numpy()
        task_preds.append(batch_preds[:, 1])
        task_labels.append(labels.detach().cpu().numpy())
    metrics = compute_binary_task_metrics(
        predictions=np.concatenate(task_preds, axis=0), labels=np.concatenate(task_labels, axis=0)
    )
    return total_loss.cpu().item() / total_num_samples, metrics


def evaluate_protonet_model(model: PrototypicalNetwork, dataset: FSMolDataset,
                            support_sizes=(16, 128), num_samples=5, seed=0, batch_size=320):
    batcher = get_protonet_batcher(max_num_graphs=batch_size)

    def test_model_fn(task_sample: FSMolTaskSample, temp_out_folder: str, seed: int) -> BinaryEvalMetrics:
        pn_task_sample = torchify(
            task_sample_to_pn_task_sample(task_sample, batcher), device=model.device
        )
        _, result_metrics = run_on_batches(
            model,
            batches=pn_task_sample.batches,
            batch_labels=pn_task_sample.batch_labels,
            train=False,
        )
        return result_metrics

    return eval_model(test_model_fn=test_model_fn, dataset=dataset,
                      train_set_sample_sizes=list(support_sizes), num_samples=num_samples, seed=seed)


def main(model_file: str, dataset: FSMolDataset):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = PrototypicalNetworkTrainer.build_from_model_file(model_file, device=device)
    return evaluate_protonet_model(model, dataset)
