# source: https://github.com/yrcong/RelTR/pull/62
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you
#        are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your
#        storages to the CPU. (python inference.py on a machine without a GPU)
# bug: inference.py builds the model and runs it on the CPU (the --device argument is never used), but restores the
#      released training checkpoint, saved from the GPU, with a bare torch.load(args.resume), which maps its tensors
#      back to CUDA. The PR (open, not merged: no upstream fix, so no twin) passes map_location=torch.device('cpu');
#      the torch.load line the traceback points to is marked (DL301).
import argparse
import os
import tempfile

import torch
import torch.nn as nn


class RelTR(nn.Module):
    def __init__(self, num_classes=151, num_rel_classes=51, hidden_dim=32, num_triplets=20):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden_dim, 7, stride=8, padding=3), nn.ReLU())
        self.triplet_embed = nn.Embedding(num_triplets, hidden_dim)
        self.sub_class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.obj_class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.rel_class_embed = nn.Linear(hidden_dim, num_rel_classes + 1)
        self.sub_bbox_embed = nn.Linear(hidden_dim, 4)
        self.obj_bbox_embed = nn.Linear(hidden_dim, 4)

    def forward(self, samples):
        src = self.backbone(samples).flatten(2).transpose(1, 2)
        attn = torch.softmax(self.triplet_embed.weight @ src.transpose(1, 2), dim=-1)
        hs = attn @ src
        return {"sub_logits": self.sub_class_embed(hs), "obj_logits": self.obj_class_embed(hs),
                "rel_logits": self.rel_class_embed(hs), "sub_boxes": self.sub_bbox_embed(hs).sigmoid(),
                "obj_boxes": self.obj_bbox_embed(hs).sigmoid()}


def build_model(args):
    return RelTR(num_triplets=args.num_triplets), None, None


def get_args_parser():
    parser = argparse.ArgumentParser("Set transformer detector", add_help=False)
    parser.add_argument("--num_triplets", default=20, type=int)
    parser.add_argument("--device", default="cuda", help="device to use for training / testing")
    parser.add_argument("--resume", default="ckpt/checkpoint0149.pth", help="resume from checkpoint")
    return parser


def main(args, img):
    def box_cxcywh_to_xyxy(x):
        x_c, y_c, w, h = x.unbind(1)
        b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
        return torch.stack(b, dim=1)

    def rescale_bboxes(out_bbox, size):
        img_w, img_h = size
        b = box_cxcywh_to_xyxy(out_bbox)
        return b * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)

    model, _, _ = build_model(args)
    ckpt = torch.load(args.resume)  # expect: DL301
    model.load_state_dict(ckpt["model"])
    model.eval()

    mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    img = ((img - mean) / std).unsqueeze(0)
    with torch.no_grad():
        outputs = model(img)
    probas = outputs["rel_logits"].softmax(-1)[0, :, :-1]
    probas_sub = outputs["sub_logits"].softmax(-1)[0, :, :-1]
    probas_obj = outputs["obj_logits"].softmax(-1)[0, :, :-1]
    keep = torch.logical_and(probas.max(-1).values > 0.0, torch.logical_and(probas_sub.max(-1).values > 0.0,
                                                                          probas_obj.max(-1).values > 0.0))
    sub_bboxes_scaled = rescale_bboxes(outputs["sub_boxes"][0, keep], (img.shape[-1], img.shape[-2]))
    keep_queries = torch.nonzero(keep, as_tuple=True)[0]
    indices = torch.argsort(-probas[keep_queries].max(-1)[0] * probas_sub[keep_queries].max(-1)[0])[:10]
    print(keep_queries[indices].tolist(), sub_bboxes_scaled[indices][:2])


if __name__ == "__main__":
    torch.manual_seed(0)
    parser = argparse.ArgumentParser("RelTR inference", parents=[get_args_parser()])
    args = parser.parse_args([])
    trained, _, _ = build_model(args)
    if torch.cuda.is_available():
        trained = trained.cuda()
    args.resume = os.path.join(tempfile.mkdtemp(), "checkpoint0149.pth")
    torch.save({"model": trained.state_dict(), "epoch": 149}, args.resume)
    main(args, torch.rand(3, 64, 80))
