# source: https://github.com/huggingface/trl/issues/949
# error: (TRL 0.7.1, accelerate launch on several GPUs) ppo_trainer.step -> self.gather_stats(stats) ->
#        dist.all_reduce(v, dist.ReduceOp.SUM) -> RuntimeError: Tensors must be CUDA and dense
# bug: PPOTrainer.step moves each score to self.current_device in _step_safety_checker and then stacks the list with
#      scores = torch.tensor(scores), which builds a new tensor on the CPU; record_step_stats turns it into the
#      ppo/mean_scores and ppo/std_scores stats (named as the cause in trl#715), and in a MULTI_GPU run gather_stats
#      all-reduces every tensor stat over the NCCL group, which rejects the CPU ones. The fix (commit 0ff39d2, PR #681
#      "fix device issue", for trl#680 which names the same line; first in v0.7.2) builds the scores with
#      torch.tensor(scores, device=self.current_device); that line is marked (DL202). Reductions: the accelerator is
#      a namespace with device, distributed_type and num_processes; the policy/ref forward passes, the minibatch
#      optimisation and the KL controller are replaced by log-probabilities computed on current_device from a small
#      model; score scaling/clipping and the query-length stat are kept (scaling and normalising off, as PPOConfig's defaults); stats_to_np is dropped. The driver runs one
#      rank: an NCCL group on the GPU when there is one (the bug), gloo on the CPU otherwise (no error there).
import os
import time
import warnings
from types import SimpleNamespace
from typing import List, Optional

import torch
import torch.distributed as dist


class RunningMoments:
    def __init__(self, accelerator):
        self.mean = 0
        self.std = 1
        self.var = 1
        self.count = 1e-24
        self.accelerator = accelerator

    @torch.no_grad()
    def update(self, xs: torch.Tensor):
        xs_count = xs.numel()
        xs_mean, xs_var = xs.mean(), xs.var(unbiased=False)
        delta = xs_mean - self.mean
        tot_count = self.count + xs_count
        new_sum = xs_var * xs_count
        old_sum = self.var * self.count + delta ** 2 * self.count * xs_count / tot_count
        tot_sum = old_sum + new_sum
        self.mean += delta * xs_count / tot_count
        self.var = tot_sum / tot_count
        self.std = (self.var * tot_count / (tot_count - 1)).float().sqrt()
        self.count = tot_count
        return xs_mean.item(), (xs_var * xs_count / (xs_count - 1)).float().sqrt().item()


class PPOTrainer:
    def __init__(self, config, model, accelerator):
        self.config = config
        self.model = model
        self.accelerator = accelerator
        self.is_distributed = self.accelerator.distributed_type == "MULTI_GPU"
        self.current_step = 0
        if not getattr(self.model, "is_sequential_parallel", False):
            self.current_device = self.accelerator.device
        else:
            self.current_device = torch.device("cuda:0")
        self.model.to(self.current_device)
        self.running = RunningMoments(self.accelerator)

    def _step_safety_checker(self, batch_size: int, queries: List[torch.LongTensor], responses: List[torch.LongTensor],
                             scores: List[torch.FloatTensor], masks: Optional[List[torch.LongTensor]] = None):
        for name, tensor_list in zip(["queries", "responses", "scores"], [queries, responses, scores]):
            if not isinstance(tensor_list, list):
                raise ValueError(f"{name} must be a list of tensors - got {type(tensor_list)}")
            if batch_size is not None and len(tensor_list) != batch_size:
                raise ValueError(f"Batch size ({batch_size}) does not match number of examples")
        queries = [tensor.to(self.current_device) for tensor in queries]
        responses = [tensor.to(self.current_device) for tensor in responses]
        scores = [tensor.to(self.current_device) for tensor in scores]
        masks = [tensor.to(self.current_device) for tensor in masks] if masks is not None else None
        for i, score in enumerate(scores):
            if score.dim() > 1:
                raise ValueError(f"Scores must be 1-dimensional - got {score.dim()} for {score}")
            elif score.dim() == 1:
                scores[i] = score.squeeze()
        return queries, responses, scores, masks

    def step(self, queries, responses, scores, response_masks=None):
        bs = self.config.batch_size
        queries, responses, scores, response_masks = self._step_safety_checker(bs, queries, responses, scores,
                                                                               response_masks)
        scores = torch.tensor(scores)  # expect: DL202
        if self.config.use_score_scaling:
            scores_mean, scores_std = self.running.update(scores)
            if self.config.use_score_norm:
                scores = (scores - self.running.mean) / self.running.std
            else:
                scores /= self.running.std
        if self.config.score_clip is not None:
            scores_dtype = scores.dtype
            scores = torch.clip(scores.float(), -self.config.score_clip, self.config.score_clip).to(dtype=scores_dtype)

        t0 = time.time()
        input_ids = torch.stack([torch.cat([q, r]) for q, r in zip(queries, responses)])
        all_logprobs = torch.log_softmax(self.model(input_ids), dim=-1).max(-1).values
        ref_logprobs = all_logprobs.detach() * 0.9
        masks = torch.ones_like(all_logprobs)
        non_score_reward = -(all_logprobs - ref_logprobs)
        train_stats = {"policy/entropy": all_logprobs.detach().mean(-1)}

        stats = self.record_step_stats(scores=scores, logprobs=all_logprobs.detach(), ref_logprobs=ref_logprobs,
                                       non_score_reward=non_score_reward.detach(), train_stats=train_stats,
                                       kl_coef=0.2, masks=masks, queries=queries, responses=responses)
        if self.is_distributed:
            stats = self.gather_stats(stats)
        stats["time/ppo/total"] = time.time() - t0
        return stats

    def gather_stats(self, stats):
        dist.barrier()
        for k, v in stats.items():
            if isinstance(v, torch.Tensor):
                dist.all_reduce(v, dist.ReduceOp.SUM)
                v /= self.accelerator.num_processes
            stats[k] = v
        return stats

    def record_step_stats(self, kl_coef: float, **data):
        mask = data.pop("masks")
        kl_list = ((data["logprobs"] - data["ref_logprobs"]) * mask).sum(axis=-1)
        mean_kl = kl_list.mean()
        mean_entropy = (-data["logprobs"] * mask).sum(axis=-1).mean()
        mean_non_score_reward = (data["non_score_reward"] * mask).sum() / mask.sum()
        mean_scores = data["scores"].mean()
        std_scores = data["scores"].std()
        if mean_kl.item() < -1.0:
            warnings.warn("KL divergence is starting to become negative")
        stats = {
            "objective/kl": mean_kl,
            "objective/kl_dist": kl_list,
            "objective/kl_coef": kl_coef,
            "objective/entropy": mean_entropy,
            "ppo/mean_non_score_reward": mean_non_score_reward,
            "ppo/mean_scores": mean_scores,
            "ppo/std_scores": std_scores,
        }
        query_lens = torch.tensor([len(query) for query in data["queries"]], dtype=torch.float)
        stats["tokens/queries_len_mean"] = torch.mean(query_lens).cpu().item()
        for k, v in data["train_stats"].items():
            stats[f"ppo/{k}"] = torch.mean(v, axis=0)
        return stats


if __name__ == "__main__":
    use_cuda = torch.cuda.is_available()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl" if use_cuda else "gloo", rank=0, world_size=1)
    accelerator = SimpleNamespace(device=torch.device("cuda", 0) if use_cuda else torch.device("cpu"),
                                  distributed_type="MULTI_GPU", num_processes=dist.get_world_size())
    config = SimpleNamespace(batch_size=4, use_score_scaling=False, use_score_norm=False, score_clip=None)
    model = torch.nn.Sequential(torch.nn.Embedding(50, 16), torch.nn.Linear(16, 50))
    trainer = PPOTrainer(config, model, accelerator)
    queries = [torch.randint(0, 50, (5,)) for _ in range(4)]
    responses = [torch.randint(0, 50, (3,)) for _ in range(4)]
    rewards = [torch.tensor(float(i)) for i in range(4)]
    print(trainer.step(queries, responses, rewards)["ppo/mean_scores"])
    dist.destroy_process_group()
