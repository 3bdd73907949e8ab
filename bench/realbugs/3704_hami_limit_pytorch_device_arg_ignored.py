# source: https://github.com/Project-HAMi/HAMi-core/pull/213
# error: (PR "fix: pass device arg to cuda() in pytorch test": "`--device` argument was parsed but never forwarded
#        to `.cuda()`, so the test always ran on GPU 0 regardless of input")
# bug: test/python/limit_pytorch.py parses --device (the GPU whose memory limit the test exercises) but app()
#      allocates its test tensor with a bare .cuda(), i.e. on the current device, GPU 0. The fix (PR #213,
#      .cuda() -> .cuda(args.device), "consistent with limit_mxnet.py and limit_tensorflow.py") changes that line,
#      which is marked. No rule names a parsed device that is never used; DL311 (device-parameter-ignored) is the
#      closest, DL302 (hard-coded cuda) the other candidate. The stored file is the fixed one; this is it with the
#      fix reverted as the PR's description gives it. The script needs CUDA (and NumPy for the print), as upstream.
import sys
import argparse
import torch


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=int, default=0,
                        help="Test device id")
    parser.add_argument("--tensor_shape", type=str, default=None,
                        help="Specify device tensor shape for test")
    args = parser.parse_args(sys.argv[1:])
    return args


def app(args):
    if args.tensor_shape is None:
        args.tensor_shape = "1024, 1024, 1024"
    shape = [int(_.strip()) for _ in args.tensor_shape.split(",") if _.strip() != ""]
    print("Test use float device tensor: (%s)" % ", ".join([str(_) for _ in shape]))

    print("PyTorch version: " + torch.__version__)
    data = torch.ones(size=shape, dtype=torch.float32).cuda()  # expect: DL311
    summation = data.sum()
    print("Tensor sum: " + str(summation.cpu().numpy()))


if __name__ == "__main__":
    app(parse_args())
