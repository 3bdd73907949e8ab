# source: https://github.com/yanweiw/itps/pull/2
# fixed twin: the maintainer's follow-up in the PR (commit 867931d on the PR branch, 2ac0ea8 on main, "Propagate device through ConditionalMaze and
#             MazeExp") gives ConditionalMaze a device argument, passes it to UnconditionalMaze.__init__, and passes
#             the chosen device where __main__ constructs ConditionalMaze (MazeExp, dropped here, gets the same change).
import argparse

import einops
import numpy as np
import torch
from contextlib import contextmanager


@contextmanager
def seeded_context(seed):
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.random.set_rng_state(state)


class DiffusionPolicy(torch.nn.Module):
    def __init__(self, horizon=8):
        super().__init__()
        self.horizon = horizon
        self.net = torch.nn.Linear(4, horizon * 2)

    def run_inference(self, obs_batch, guide=None, visualizer=None):
        state = obs_batch["observation.state"].flatten(1)
        actions = self.net(state).view(-1, self.horizon, 2)
        if guide is not None:
            actions = actions + 0.0 * guide.mean()
        return actions.float()


class MazeEnv:
    def __init__(self):
        self.batch_size = 32
        self.running = True

    def gui2xy(self, gui):
        return np.array(gui, dtype=np.float64) / 100.0

    def check_collision(self, xy_traj):
        batch_size, num_steps, _ = xy_traj.shape
        return np.zeros((batch_size, num_steps), dtype=bool)


class UnconditionalMaze(MazeEnv):
    def __init__(self, policy, policy_tag=None, device="cpu"):
        super().__init__()
        self.mouse_pos = None
        self.agent_history_xy = []
        self.policy = policy
        self.policy_tag = policy_tag
        self.device = device

    def infer_target(self, guide=None, visualizer=None):
        agent_hist_xy = self.agent_history_xy[-1]
        agent_hist_xy = np.array(agent_hist_xy).reshape(1, 2)
        if self.policy_tag == 'dp':
            agent_hist_xy = agent_hist_xy.repeat(2, axis=0)
        obs_batch = {
            "observation.state": einops.repeat(
                torch.from_numpy(agent_hist_xy).float().to(self.device), "t d -> b t d", b=self.batch_size
            )
        }
        obs_batch["observation.environment_state"] = einops.repeat(
            torch.from_numpy(agent_hist_xy).float().to(self.device), "t d -> b t d", b=self.batch_size
        )
        if guide is not None:
            guide = torch.from_numpy(guide).float().to(self.device)
        with torch.autocast(device_type=self.device), seeded_context(0):
            actions = self.policy.run_inference(obs_batch, guide=guide, visualizer=visualizer).cpu().numpy()
        return actions

    def update_agent_pos(self, new_agent_pos, history_len=1):
        self.agent_gui_pos = np.array(new_agent_pos)
        agent_xy_pos = self.gui2xy(self.agent_gui_pos)
        self.agent_history_xy.append(agent_xy_pos)
        self.agent_history_xy = self.agent_history_xy[-history_len:]


class ConditionalMaze(UnconditionalMaze):
    def __init__(self, policy, vis_dp_dynamics=False, savepath=None, alignment_strategy=None, policy_tag=None, device="cpu"):
        super().__init__(policy, policy_tag=policy_tag, device=device)
        self.drawing = False
        self.keep_drawing = False
        self.vis_dp_dynamics = vis_dp_dynamics
        self.savepath = savepath
        self.draw_traj = []
        self.xy_pred = None
        self.collisions = None
        self.alignment_strategy = alignment_strategy

    def run(self):
        self.mouse_pos = np.array([120, 340])
        self.draw_traj = [np.array([130, 300]), np.array([160, 260])]
        if not self.drawing:
            if not self.keep_drawing:
                self.update_agent_pos(self.mouse_pos.copy())
            if len(self.draw_traj) > 0:
                guide = np.array([self.gui2xy(point) for point in self.draw_traj])
            else:
                guide = None
            self.xy_pred = self.infer_target(guide, visualizer=None)
            self.collisions = self.check_collision(self.xy_pred)
        print(self.xy_pred.shape, int(self.collisions.sum()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('-gd', '--guided-diffusion', action='store_true')
    parser.add_argument('-s', '--savepath', type=str, default=None)
    args = parser.parse_args([])

    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    if torch.backends.mps.is_available():
        device = "mps"

    alignment_strategy = 'guided-diffusion' if args.guided_diffusion else 'post-hoc'
    policy = DiffusionPolicy()
    policy_tag = 'dp'
    policy.to(device)
    policy.eval()

    interactiveMaze = ConditionalMaze(policy, False, args.savepath, alignment_strategy, policy_tag=policy_tag, device=device)
    interactiveMaze.run()
