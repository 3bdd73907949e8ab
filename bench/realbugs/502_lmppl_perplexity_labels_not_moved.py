# source: https://github.com/asahi417/lmppl/pull/12
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument target in method wrapper_CUDA_nll_loss_forward)
# bug: the perplexity scorer moves the tokenized batch to the GPU only inside the model call, so the
#      labels it later takes from the same (CPU) batch meet the CUDA logits in the loss. The fix
#      rebinds the batch to its moved copy before the model call (an inserted line; the marker sits
#      on the model call it precedes).
import math

import torch
import transformers

PAD_TOKEN_LABEL_ID = torch.nn.CrossEntropyLoss().ignore_index


class LM:
    def __init__(self, model="gpt2"):
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(model)
        self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = transformers.AutoModelForCausalLM.from_pretrained(model)
        self.loss_fct = torch.nn.CrossEntropyLoss(reduction="none")
        if torch.cuda.is_available():
            self.model.to("cuda")
        self.device = self.model.device
        self.model.eval()

    def get_perplexity(self, input_texts, batch_size=2):
        losses = []
        with torch.no_grad():
            for s in range(0, len(input_texts), batch_size):
                model_inputs = self.tokenizer(input_texts[s:s + batch_size], padding=True, return_tensors="pt")
                output = self.model(**{k: v.to(self.device) for k, v in model_inputs.items()})  # expect: DL201
                logit = output["logits"]
                label = model_inputs["input_ids"]
                label[label == self.tokenizer.pad_token_id] = PAD_TOKEN_LABEL_ID
                shift_logits = logit[..., :-1, :].contiguous()
                shift_label = label[:, 1:].contiguous()
                valid_length = (shift_label != PAD_TOKEN_LABEL_ID).sum(dim=-1)
                loss = self.loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_label.view(-1))
                loss = loss.view(len(logit), -1).sum(-1) / valid_length
                losses += loss.cpu().tolist()
        return [math.exp(v) for v in losses]


if __name__ == "__main__":
    print(LM().get_perplexity(["a short sentence", "another, slightly longer sentence here"]))
