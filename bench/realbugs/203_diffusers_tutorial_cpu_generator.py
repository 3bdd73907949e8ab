# source: https://github.com/huggingface/diffusers/issues/6501
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'
# bug: the "write your own pipeline" walkthrough seeds with torch.manual_seed(0), which returns the
#      global CPU generator, and then samples the initial latents with device="cuda" using it.
import torch
from diffusers import AutoencoderKL, UNet2DConditionModel, UniPCMultistepScheduler
from transformers import CLIPTextModel, CLIPTokenizer

repo = "CompVis/stable-diffusion-v1-4"
vae = AutoencoderKL.from_pretrained(repo, subfolder="vae", use_safetensors=True)
tokenizer = CLIPTokenizer.from_pretrained(repo, subfolder="tokenizer")
text_encoder = CLIPTextModel.from_pretrained(repo, subfolder="text_encoder", use_safetensors=True)
unet = UNet2DConditionModel.from_pretrained(repo, subfolder="unet", use_safetensors=True)
scheduler = UniPCMultistepScheduler.from_pretrained(repo, subfolder="scheduler")

torch_device = "cuda"
vae.to(torch_device)
text_encoder.to(torch_device)
unet.to(torch_device)

prompt = ["a photograph of an astronaut riding a horse"]
height = 512
width = 512
num_inference_steps = 25
guidance_scale = 7.5
generator = torch.manual_seed(0)
batch_size = len(prompt)

text_input = tokenizer(prompt, padding="max_length", max_length=tokenizer.model_max_length,
                       truncation=True, return_tensors="pt")
with torch.no_grad():
    text_embeddings = text_encoder(text_input.input_ids.to(torch_device))[0]
uncond_input = tokenizer([""] * batch_size, padding="max_length",
                         max_length=text_input.input_ids.shape[-1], return_tensors="pt")
with torch.no_grad():
    uncond_embeddings = text_encoder(uncond_input.input_ids.to(torch_device))[0]
text_embeddings = torch.cat([uncond_embeddings, text_embeddings])

latents = torch.randn(  # expect: DL208
    (batch_size, unet.config.in_channels, height // 8, width // 8),
    generator=generator,
    device=torch_device,
)
latents = latents * scheduler.init_noise_sigma

scheduler.set_timesteps(num_inference_steps)
for t in scheduler.timesteps:
    latent_model_input = torch.cat([latents] * 2)
    latent_model_input = scheduler.scale_model_input(latent_model_input, timestep=t)
    with torch.no_grad():
        noise_pred = unet(latent_model_input, t, encoder_hidden_states=text_embeddings).sample
    noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
    noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond)
    latents = scheduler.step(noise_pred, t, latents).prev_sample

latents = 1 / 0.18215 * latents
with torch.no_grad():
    image = vae.decode(latents).sample
