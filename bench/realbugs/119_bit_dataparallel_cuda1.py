# source: https://github.com/google-research/big_transfer/issues/73
# error: RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cuda:1
# bug: the user switched the training device to cuda:1, but the model is wrapped in nn.DataParallel
#      with the default device_ids (all visible GPUs, so device_ids[0] is cuda:0) and then moved to cuda:1.
from os.path import join as pjoin

import numpy as np
import torch

import bit_common
import bit_hyperrule
import bit_pytorch.models as models
from bit_pytorch.train import mktrainval, recycle


def main(args):
    logger = bit_common.setup_logger(args)
    torch.backends.cudnn.benchmark = True

    device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
    logger.info(f"Going to train on {device}")

    train_set, valid_set, train_loader, valid_loader = mktrainval(args, logger)

    model = models.KNOWN_MODELS[args.model](head_size=len(valid_set.classes), zero_head=True)
    model.load_from(np.load(pjoin(args.bit_pretrained_dir, f"{args.model}.npz")))

    logger.info("Moving model onto all GPUs")
    model = torch.nn.DataParallel(model)  # expect: DL205

    optim = torch.optim.SGD(model.parameters(), lr=0.003, momentum=0.9)
    savename = pjoin(args.logdir, args.name, "bit.pth.tar")
    try:
        checkpoint = torch.load(savename, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optim.load_state_dict(checkpoint["optim"])
    except FileNotFoundError:
        logger.info("Fine-tuning from BiT")

    model = model.to(device)
    optim.zero_grad()
    model.train()
    cri = torch.nn.CrossEntropyLoss().to(device)

    step = 0
    for x, y in recycle(train_loader):
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        lr = bit_hyperrule.get_lr(step, len(train_set), args.base_lr)
        if lr is None:
            break
        for param_group in optim.param_groups:
            param_group["lr"] = lr
        logits = model(x)
        c = cri(logits, y)
        c.backward()
        optim.step()
        optim.zero_grad()
        step += 1


if __name__ == "__main__":
    parser = bit_common.argparser(models.KNOWN_MODELS.keys())
    parser.add_argument("--datadir", required=True)
    parser.add_argument("--workers", type=int, default=8)
    main(parser.parse_args())
