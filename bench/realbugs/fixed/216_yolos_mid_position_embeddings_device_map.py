# source: https://github.com/huggingface/transformers/pull/46886
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!
# bug: with device_map="auto" the encoder layers are spread over GPUs, but the mid-layer position
#      embeddings stay on the device the encoder was placed on; adding them to hidden_states coming
#      out of a layer on another GPU mixes devices.
import torch
from torch import nn
from transformers.models.yolos.modeling_yolos import InterpolateMidPositionEmbeddings, YolosLayer


class YolosEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([YolosLayer(config) for _ in range(config.num_hidden_layers)])
        seq_length = (
            1 + (config.image_size[0] * config.image_size[1] // config.patch_size**2) + config.num_detection_tokens
        )
        self.mid_position_embeddings = (
            nn.Parameter(torch.zeros(config.num_hidden_layers - 1, 1, seq_length, config.hidden_size))
            if config.use_mid_position_embeddings
            else None
        )
        self.interpolation = InterpolateMidPositionEmbeddings(config) if config.use_mid_position_embeddings else None

    def forward(self, hidden_states, height, width, output_hidden_states=False):
        all_hidden_states = () if output_hidden_states else None
        if self.config.use_mid_position_embeddings:
            interpolated_mid_position_embeddings = self.interpolation(self.mid_position_embeddings, (height, width))

        for i, layer_module in enumerate(self.layer):
            if output_hidden_states:
                all_hidden_states = all_hidden_states + (hidden_states,)
            hidden_states = layer_module(hidden_states)[0]
            if self.config.use_mid_position_embeddings:
                if i < (self.config.num_hidden_layers - 1):
                    hidden_states = hidden_states + interpolated_mid_position_embeddings[i].to(hidden_states.device)

        return hidden_states, all_hidden_states


if __name__ == "__main__":
    from transformers import AutoImageProcessor, YolosForObjectDetection
    model = YolosForObjectDetection.from_pretrained("hustvl/yolos-base", device_map="auto")
    processor = AutoImageProcessor.from_pretrained("hustvl/yolos-base")
    pixel_values = processor(images=torch.zeros(3, 512, 512), return_tensors="pt").pixel_values.to("cuda:0")
    outputs = model(pixel_values=pixel_values)
