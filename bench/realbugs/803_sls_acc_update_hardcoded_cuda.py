# source: https://github.com/IssamLaradji/sls/issues/7
# error: RuntimeError: Expected all tensors to be on the same device (parameters on cuda:1, saved copies moved to cuda:0)
# bug: the accelerated line-search optimizer moves its saved parameter copies with .cuda(), which
#      picks the current GPU rather than the GPU the parameter lives on; on a node with several
#      GPUs a model on cuda:1 meets copies on cuda:0. The fix agreed in the thread moves them with
#      .to(p_current.device) / .to(p_model.data.device); both lines are marked.
import torch


def polyak_update(params_model, params_current, grad_current, params_old, momentum):
    for p_model, p_current, g_current, p_old in zip(params_model, params_current, grad_current, params_old):
        if g_current is None:
            continue
        p_model.data = p_model.data + momentum * (p_current - p_old.cuda())  # expect: DL302


def nesterov_update(params_model, grad_current, y_params_old, gamma):
    for p_model, g_current, y_old in zip(params_model, grad_current, y_params_old):
        if g_current is None:
            continue
        p_model.data = (1 - gamma) * p_model.data + gamma * y_old.cuda()  # expect: DL302


if __name__ == "__main__":
    device = torch.device("cuda:1" if torch.cuda.device_count() > 1 else "cpu")
    params = [torch.randn(4, 4, device=device, requires_grad=True)]
    current = [p.detach().clone() for p in params]
    old = [p.detach().cpu() for p in params]
    grads = [torch.ones_like(p) for p in params]
    polyak_update(params, current, grads, old, 0.6)
    nesterov_update(params, grads, old, 0.5)
    print(params[0].device)
