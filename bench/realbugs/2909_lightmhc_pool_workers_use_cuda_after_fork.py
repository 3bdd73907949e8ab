# source: https://github.com/instadeepai/LightMHC/issues/4
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use
#        the 'spawn' start method (raised in a multiprocessing.pool worker, inference.py line 77, in workflow:
#        model = model.to(device), with model.use_gpu=true)
# bug: main() chooses the device with torch.cuda.is_available() in the parent process, which "poisons fork" (as
#      PyTorch's docs of is_available() say, unless PYTORCH_NVML_BASED_CUDA_CHECK=1), and hands that cuda:0 device to
#      workflow() in worker processes of a multiprocessing.Pool, which forks on Linux; each worker then moves its
#      model to the GPU. The issue is open with no fix (no twin); the cause is read from the repository's lightmhc/inference.py. The
#      marker is on the move the traceback points to (DL315). The CSV partitions and PDB output are reduced to
#      tensors here (no pandas, Rosetta or hydra).
import os
import tempfile
from multiprocessing import Pool
from pathlib import Path

import torch
import torch.nn as nn


class Conf:
    class model:
        use_gpu = True
        n_cpus = 2
        checkpoint_path = ""
        hidden = 16

    class data:
        input_csv_path = ""
        output_dir = ""


def get_model(model_conf):
    return nn.Sequential(nn.Linear(20, model_conf.hidden), nn.ReLU(), nn.Linear(model_conf.hidden, 14 * 3))


def inference_step(model, data_test, device):
    with torch.no_grad():
        data_test = data_test.to(device)
        preds = model(data_test)
        preds = preds.cpu().view(len(data_test), 14, 3)
    return preds


def workflow(conf, input_path, output_dir, device, workflow_index=0):
    sequences = torch.load(input_path)
    dataloader = torch.split(sequences, 4)
    model = get_model(conf.model)
    model = model.to(device)  # expect: DL315
    model.load_state_dict(torch.load(conf.model.checkpoint_path, map_location=device)["state_dict"])
    preds = []
    for data_test in dataloader:
        preds.extend(inference_step(model, data_test, device))
    preds = torch.stack(preds)
    torch.save(preds, output_dir / f"workflow_{workflow_index}.pt")
    return preds.shape


def partition_csv(input_csv_path, n_cpus=1):
    rows = torch.load(input_csv_path)
    partition_list = []
    for i in range(n_cpus):
        part = rows[i::n_cpus]
        partition_path = input_csv_path.parent / f"{input_csv_path.stem}_cpu_{i}.pt"
        if part.shape[0] > 0:
            torch.save(part, partition_path)
            partition_list.append(partition_path)
    return partition_list


def main(args):
    device = torch.device("cuda:0") if (args.model.use_gpu and torch.cuda.is_available()) else torch.device("cpu")
    partition_list = partition_csv(Path(args.data.input_csv_path), args.model.n_cpus)
    workflow_args = [(args, Path(input_path), Path(args.data.output_dir), device, i)
                     for i, input_path in enumerate(partition_list)]
    with Pool(processes=args.model.n_cpus) as pool:
        print(pool.starmap(workflow, workflow_args))


if __name__ == "__main__":
    torch.manual_seed(0)
    work = Path(tempfile.mkdtemp())
    Conf.data.input_csv_path = str(work / "xray.pt")
    Conf.data.output_dir = str(work)
    Conf.model.checkpoint_path = str(work / "checkpoint_random.pt")
    torch.save(torch.randn(10, 20), Conf.data.input_csv_path)
    torch.save({"state_dict": get_model(Conf.model).state_dict()}, Conf.model.checkpoint_path)
    main(Conf)
