# source: https://github.com/IssamLaradji/sls/issues/7
# fixed twin: the saved copies are moved to the device of the parameter they belong to (the fix agreed in the thread).
import torch


def polyak_update(params_model, params_current, grad_current, params_old, momentum):
    for p_model, p_current, g_current, p_old in zip(params_model, params_current, grad_current, params_old):
        if g_current is None:
            continue
        p_model.data = p_model.data + momentum * (p_current - p_old.to(p_current.device))


def nesterov_update(params_model, grad_current, y_params_old, gamma):
    for p_model, g_current, y_old in zip(params_model, grad_current, y_params_old):
        if g_current is None:
            continue
        p_model.data = (1 - gamma) * p_model.data + gamma * y_old.to(p_model.data.device)


if __name__ == "__main__":
    device = torch.device("cuda:1" if torch.cuda.device_count() > 1 else "cpu")
    params = [torch.randn(4, 4, device=device, requires_grad=True)]
    current = [p.detach().clone() for p in params]
    old = [p.detach().cpu() for p in params]
    grads = [torch.ones_like(p) for p in params]
    polyak_update(params, current, grads, old, 0.6)
    nesterov_update(params, grads, old, 0.5)
    print(params[0].device)
