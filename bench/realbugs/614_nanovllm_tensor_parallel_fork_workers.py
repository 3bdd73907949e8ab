# source: https://github.com/GeeeekExplorer/nano-vllm/pull/22
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: the engine starts one model-runner process per extra tensor-parallel rank with torch.multiprocessing's
#      default (fork) context; each runner selects its GPU and allocates on it, which fails whenever
#      CUDA was already initialised in the parent (here: the launching script queries the GPU first).
#      The fix creates the Event and Process from a "spawn" context. Needs two GPUs to show (no rule
#      covers fork after CUDA init; DL303, about CUDA initialisation order, is the closest).
# note: the marker was DL303 (closest code) until DL315 covered this bug, on 2026-11-27; line unchanged
import torch
import torch.multiprocessing as mp


class Config:
    def __init__(self, hidden=64, tensor_parallel_size=2):
        self.hidden = hidden
        self.tensor_parallel_size = tensor_parallel_size


class ModelRunner:
    def __init__(self, config, rank, event):
        self.rank = rank
        self.event = event
        torch.cuda.set_device(rank)
        self.weight = torch.randn(config.hidden, config.hidden, device="cuda")
        self.kv_cache = torch.zeros(4, config.hidden, device="cuda")
        if rank > 0:
            event.wait()

    def run(self, x):
        return x.to(self.weight.device) @ self.weight


class LLMEngine:
    def __init__(self, config):
        self.ps = []
        self.events = []
        for i in range(1, config.tensor_parallel_size):
            event = mp.Event()  # expect: DL315
            process = mp.Process(target=ModelRunner, args=(config, i, event))  # expect: DL315
            process.start()
            self.ps.append(process)
            self.events.append(event)
        self.model_runner = ModelRunner(config, 0, self.events)

    def exit(self):
        for event in self.events:
            event.set()
        for p in self.ps:
            p.join()
            print("rank process exit code:", p.exitcode)


if __name__ == "__main__":
    print("running on", torch.cuda.get_device_name(0))
    n = torch.cuda.device_count()
    engine = LLMEngine(Config(tensor_parallel_size=max(n, 1)))
    print(engine.model_runner.run(torch.randn(2, 64)).shape)
    engine.exit()
