# source: https://github.com/mlcommons/inference/issues/95
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: the SSD benchmark moves the network to the GPU before handing it to coco_eval, but coco_eval
#      feeds each image (from the COCO dataset, on the CPU) to the model without moving it.
import time
from argparse import ArgumentParser

import numpy as np
import torch

from ssd300 import SSD300
from utils import COCODetection, Encoder, SSDTransformer, dboxes300_coco


def coco_eval(model, coco, cocoGt, encoder, inv_map, threshold, device=0):
    from pycocotools.cocoeval import COCOeval
    model.eval()
    ret = []
    start = time.time()
    for idx, image_id in enumerate(coco.img_keys):
        img, (htot, wtot), _, _ = coco[idx]
        with torch.no_grad():
            inp = img.unsqueeze(0)
            ploc, plabel = model(inp)  # expect: DL203
            try:
                result = encoder.decode_batch(ploc, plabel, 0.50, 200, device=device)[0]
            except Exception:
                continue
            loc, label, prob = [r.cpu().numpy() for r in result]
            for loc_, label_, prob_ in zip(loc, label, prob):
                ret.append([image_id, loc_[0] * wtot, loc_[1] * htot,
                            (loc_[2] - loc_[0]) * wtot, (loc_[3] - loc_[1]) * htot,
                            prob_, inv_map[label_]])
    print("Predicting Ended, total time: {:.2f} s".format(time.time() - start))
    cocoDt = cocoGt.loadRes(np.array(ret))
    E = COCOeval(cocoGt, cocoDt, iouType='bbox')
    E.evaluate()
    E.accumulate()
    E.summarize()
    return E.stats[0] >= threshold


def eval_ssd300_mlperf_coco(args):
    from coco import COCO
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    dboxes = dboxes300_coco()
    encoder = Encoder(dboxes)
    val_trans = SSDTransformer(dboxes, (300, 300), val=True)
    cocoGt = COCO(annotation_file=args.data + "/annotations/instances_val2017.json")
    val_coco = COCODetection(args.data + "/val2017", args.data + "/annotations/instances_val2017.json", val_trans)
    inv_map = {v: k for k, v in val_coco.label_map.items()}

    ssd300 = SSD300(val_coco.labelnum)
    od = torch.load(args.checkpoint, map_location=lambda storage, loc: storage)
    ssd300.load_state_dict(od["model"])
    if use_cuda:
        ssd300.cuda(args.device)

    coco_eval(ssd300, val_coco, cocoGt, encoder, inv_map, args.threshold, args.device)


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument('--data', '-d', type=str, default='../coco')
    parser.add_argument('--no-cuda', action='store_true')
    parser.add_argument('--device', '-did', type=int, default=0)
    parser.add_argument('--threshold', '-t', type=float, default=0.20)
    parser.add_argument('--checkpoint', type=str, default='./pretrained/resnet34-ssd300.pth')
    eval_ssd300_mlperf_coco(parser.parse_args())
