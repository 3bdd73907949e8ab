#!/usr/bin/env python3
# source: https://github.com/numz/ComfyUI-SeedVR2_VideoUpscaler/issues/30
# error: (issue) "Running the inference_cli.py on a server with multiple RTX 4090 GPUs (--cuda_device 0,1,...,7) results
#        in the last few workers processes crashing with CUDA out-of-memory (OOM) errors" - "Torch initializes on each
#        process, while it still 'sees' all GPUs and latches onto physical GPU 0"
# bug: inference_cli.py forces the spawn start method and gives each GPU a worker (_worker_process) that sets
#      CUDA_VISIBLE_DEVICES to its device id before importing the model code. But spawn re-runs the script's module
#      level in every child, and that calls torch.cuda.init() right after importing torch - before the worker narrows
#      the visible devices - so every worker's CUDA is initialised on GPU 0 and the upscalers pile onto it. The fix
#      (commit 59850f6, PR #41 "Fix multi GPUs OOM", merged as 3101bab) deletes the module-level torch.cuda.init()
#      (marked, DL303) and comments out the debug print of torch.cuda.memory_allocated() in main ("may initialize
#      cuda"), a parent-side line not marked. Reductions: cv2 frame extraction/saving are random NumPy frames;
#      configure_runner/generation_loop are a small conv upscaler on the device they pick ("cuda" if available,
#      else "cpu", as upstream's model_manager.py and generation.py do); the model download, PNG/video output and
#      most arguments are dropped. On a CPU-only machine the module-level torch.cuda.init() itself fails, as upstream would
#      ("Torch not compiled with CUDA enabled" on a CPU-only build of torch; "Found no NVIDIA driver" on a CUDA build).
import sys
import os
import argparse
import time
import multiprocessing as mp
if mp.get_start_method(allow_none=True) != 'spawn':
    mp.set_start_method('spawn', force=True)
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")

_pre_parser = argparse.ArgumentParser(add_help=False)
_pre_parser.add_argument("--cuda_device", type=str, default=None)
_pre_args, _ = _pre_parser.parse_known_args()
if _pre_args.cuda_device is not None:
    device_list_env = [x.strip() for x in _pre_args.cuda_device.split(',') if x.strip() != '']
    if len(device_list_env) == 1:
        os.environ["CUDA_VISIBLE_DEVICES"] = device_list_env[0]

import torch
import numpy as np
torch.cuda.init()  # expect: DL303


def extract_frames_from_video(video_path, debug=False, skip_first_frames=0, load_cap=None):
    frames = np.random.rand(8, 32, 32, 3).astype(np.float16)
    return torch.from_numpy(frames), 30.0


# --- src/core/model_manager.py, src/core/generation.py ---
def configure_runner(model_name, model_dir, preserve_vram=False, debug=False):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    runner = torch.nn.Sequential(torch.nn.Conv2d(3, 12, 3, padding=1), torch.nn.PixelShuffle(2))
    return runner.to(device).half()


def generation_loop(runner, images, cfg_scale=1.0, seed=100, res_w=64, batch_size=4, preserve_vram=False,
                    temporal_overlap=0, debug=False):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    outputs = []
    with torch.no_grad():
        for batch in torch.split(images, batch_size):
            x = batch.permute(0, 3, 1, 2).to(device)
            outputs.append(runner(x).permute(0, 2, 3, 1).cpu())
    return torch.cat(outputs)


# --- inference_cli.py ---
def _worker_process(proc_idx, device_id, frames_np, shared_args, return_queue):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(device_id)
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")

    import torch
    frames_tensor = torch.from_numpy(frames_np).to(torch.float16)
    runner = configure_runner(shared_args["model"], shared_args["model_dir"], shared_args["preserve_vram"],
                              shared_args["debug"])
    result_tensor = generation_loop(runner=runner, images=frames_tensor, cfg_scale=shared_args["cfg_scale"],
                                    seed=shared_args["seed"], res_w=shared_args["res_w"],
                                    batch_size=shared_args["batch_size"], preserve_vram=shared_args["preserve_vram"],
                                    temporal_overlap=shared_args["temporal_overlap"], debug=shared_args["debug"])
    return_queue.put((proc_idx, result_tensor.cpu().numpy()))


def _gpu_processing(frames_tensor, device_list, args):
    num_devices = len(device_list)
    chunks = torch.chunk(frames_tensor, num_devices, dim=0)
    manager = mp.Manager()
    return_queue = manager.Queue()
    workers = []
    shared_args = {"model": args.model, "model_dir": "./models/SEEDVR2", "preserve_vram": False, "debug": args.debug,
                   "cfg_scale": 1.0, "seed": 100, "res_w": 64, "batch_size": 4, "temporal_overlap": 0}
    for idx, (device_id, chunk_tensor) in enumerate(zip(device_list, chunks)):
        p = mp.Process(target=_worker_process,
                       args=(idx, device_id, chunk_tensor.cpu().numpy(), shared_args, return_queue))
        p.start()
        workers.append(p)
    results_np = [None] * num_devices
    collected = 0
    while collected < num_devices:
        proc_idx, res_np = return_queue.get()
        results_np[proc_idx] = res_np
        collected += 1
    for p in workers:
        p.join()
    return torch.from_numpy(np.concatenate(results_np, axis=0)).to(torch.float16)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--video_path", type=str, default="input.mp4")
    parser.add_argument("--model", type=str, default="seedvr2_ema_3b_fp16.safetensors")
    parser.add_argument("--cuda_device", type=str, default=None)
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    start_time = time.time()
    frames_tensor, original_fps = extract_frames_from_video(args.video_path, args.debug)
    if args.debug:
        print(f"Frame extraction time: {time.time() - start_time:.2f}s")
        print(f"Initial VRAM: {torch.cuda.memory_allocated() / 1024**3:.2f}GB")
    device_list = [d.strip() for d in str(args.cuda_device).split(',') if d.strip()] if args.cuda_device else ["0"]
    result = _gpu_processing(frames_tensor, device_list, args)
    print(f"Result shape: {result.shape}, dtype: {result.dtype}")


if __name__ == "__main__":
    main()
