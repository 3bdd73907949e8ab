# source: https://github.com/huggingface/transformers/pull/22713
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices ...
# bug: GPT-J's sequence-classification head computes the loss between the pooled logits (on the
#      device of the last layer / score head) and the labels as passed in (cpu in the PR's test case,
#      or another GPU under model parallelism) without aligning their devices.
import torch
from torch import nn
from torch.nn import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss
from transformers import GPTJModel, GPTJPreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutputWithPast


class GPTJForSequenceClassification(GPTJPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.transformer = GPTJModel(config)
        self.score = nn.Linear(config.n_embd, self.num_labels, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, labels=None, return_dict=True):
        transformer_outputs = self.transformer(input_ids, attention_mask=attention_mask, return_dict=True)
        hidden_states = transformer_outputs[0]
        logits = self.score(hidden_states)
        batch_size = input_ids.shape[0]

        if self.config.pad_token_id is None:
            sequence_lengths = -1
        else:
            sequence_lengths = (torch.ne(input_ids, self.config.pad_token_id).sum(-1) - 1).to(logits.device)
        pooled_logits = logits[torch.arange(batch_size, device=logits.device), sequence_lengths]

        loss = None
        if labels is not None:
            if self.config.problem_type is None:
                if self.num_labels == 1:
                    self.config.problem_type = "regression"
                elif self.num_labels > 1 and (labels.dtype == torch.long or labels.dtype == torch.int):
                    self.config.problem_type = "single_label_classification"
                else:
                    self.config.problem_type = "multi_label_classification"

            if self.config.problem_type == "regression":
                loss_fct = MSELoss()
                loss = loss_fct(pooled_logits.squeeze(), labels.squeeze())
            elif self.config.problem_type == "single_label_classification":
                loss_fct = CrossEntropyLoss()
                loss = loss_fct(pooled_logits.view(-1, self.num_labels), labels.view(-1))  # expect: DL201
            elif self.config.problem_type == "multi_label_classification":
                loss_fct = BCEWithLogitsLoss()
                loss = loss_fct(pooled_logits, labels)

        return SequenceClassifierOutputWithPast(loss=loss, logits=pooled_logits,
                                                past_key_values=transformer_outputs.past_key_values)


if __name__ == "__main__":
    from transformers import GPT2Tokenizer
    tokenizer = GPT2Tokenizer.from_pretrained("EleutherAI/gpt-j-6B")
    model = GPTJForSequenceClassification.from_pretrained("EleutherAI/gpt-j-6B")
    model.to("cuda:0")
    inputs = tokenizer("this is an example of text for device mismatch for GPT-J", return_tensors="pt")
    for k, v in inputs.items():
        inputs[k] = v.to("cuda:0")
    labels = torch.tensor([1]).to("cpu")
    outputs = model(**inputs, labels=labels)
