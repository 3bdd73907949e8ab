# source: https://github.com/huggingface/diffusers/issues/5507
# error: none raised: on a non-CUDA accelerator (MPS, XPU, CPU) the validation images are generated without autocast, with a warning
# bug: the text-to-image training example puts its validation pipeline on accelerator.device
#      (whatever device accelerate picked) but generates under torch.autocast("cuda"); the issue
#      asks for torch.autocast(device_type=accelerator.device.type).
import argparse

import numpy as np
import torch
from accelerate import Accelerator
from diffusers import StableDiffusionPipeline


def log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, epoch):
    pipeline = StableDiffusionPipeline.from_pretrained(
        args.pretrained_model_name_or_path,
        vae=accelerator.unwrap_model(vae),
        text_encoder=accelerator.unwrap_model(text_encoder),
        tokenizer=tokenizer,
        unet=accelerator.unwrap_model(unet),
        safety_checker=None,
        torch_dtype=weight_dtype,
    )
    pipeline = pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)

    generator = None if args.seed is None else torch.Generator(device=accelerator.device).manual_seed(args.seed)
    images = []
    for prompt in args.validation_prompts:
        with torch.autocast("cuda"):  # expect: DL308
            image = pipeline(prompt, num_inference_steps=20, generator=generator).images[0]
        images.append(image)

    for tracker in accelerator.trackers:
        if tracker.name == "tensorboard":
            tracker.writer.add_images("validation", np.stack([np.asarray(img) for img in images]), epoch, dataformats="NHWC")
    del pipeline
    return images


def main(args):
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    weight_dtype = torch.float16 if accelerator.mixed_precision == "fp16" else torch.float32
    vae, text_encoder, tokenizer, unet = load_components(args)
    vae.to(accelerator.device, dtype=weight_dtype)
    text_encoder.to(accelerator.device, dtype=weight_dtype)
    unet = accelerator.prepare(unet)
    for epoch in range(args.num_train_epochs):
        train_one_epoch(unet, vae, text_encoder, accelerator, args)
        if accelerator.is_main_process and args.validation_prompts is not None:
            log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, epoch)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_name_or_path", required=True)
    parser.add_argument("--validation_prompts", nargs="+")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--mixed_precision", default="no")
    parser.add_argument("--num_train_epochs", type=int, default=1)
    main(parser.parse_args())
