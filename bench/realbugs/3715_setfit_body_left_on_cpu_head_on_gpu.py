# source: https://github.com/huggingface/setfit/issues/169
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices
#        (trainer.train after trainer.freeze(); trainer.unfreeze(keep_body_frozen=True), with
#        SetFitModel.from_pretrained(..., use_differentiable_head=True, head_params={"out_features": num_classes}))
# bug: src/setfit/modeling.py's SetFitModel._from_pretrained builds the body with SentenceTransformer(model_id),
#      which only records _target_device (cuda when available) and leaves its weights on the CPU until
#      sentence-transformers' own fit/encode move it (sentence-transformers 2.x; PR #175's description: "Put
#      `model_body` on to `_target_device` right after initialization"), but creates the differentiable SetFitHead with
#      device=model_body._target_device, i.e. on the GPU. When the trainer skips the contrastive body stage
#      (unfreeze before the first train), SetFitModel.fit moves the batch to self.model_body.device - the CPU - and
#      feeds the CPU embeddings to the CUDA head. The fix (PR #175, commit 798c780 "Bugfix/body and head on different
#      devices") moves model_body to its target device right after loading and puts the head on that target, and in
#      SetFitHead.__init__ replaces self.to(device), which moved the head with the raw argument and ignored the
#      default it had just computed into self.device, by self.to(self._device). The body's move is inserted after
#      the SentenceTransformer call (the fix's other lines in _from_pretrained only rename device to target_device),
#      so the head call of the traceback's fit is marked (DL201); the changed SetFitHead line is marked too (DL311,
#      the closest rule for a computed device the move ignores).
#      Reductions: SentenceTransformer and sentence-transformers' models.Dense become stand-ins with the attributes
#      setfit uses (_target_device, device, tokenizer, get_max_seq_length, get_sentence_embedding_dimension, a fit
#      that moves itself to _target_device as sentence-transformers' fit does); SetFitDataset tokenizes by character
#      codes; the trainer keeps freeze/unfreeze and the two branches of train, its contrastive branch reduced to the
#      body's fit call; PyTorchModelHubMixin is cut to a one-line from_pretrained on SetFitModel that calls
#      _from_pretrained as the mixin's does (its config download and hub arguments cut); saving, sklearn heads and
#      evaluation are cut.
from typing import Dict, List, Literal, Optional, Union

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


# --- stand-ins for sentence_transformers.SentenceTransformer and models.Dense ---
class SentenceTransformer(nn.Sequential):
    def __init__(self, model_name_or_path=None, cache_folder=None, device=None):
        super().__init__(nn.EmbeddingBag(256, 32))
        self.tokenizer = lambda texts: [torch.tensor([ord(c) % 256 for c in t]) for t in texts]
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self._target_device = torch.device(device)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def get_max_seq_length(self):
        return 128

    def get_sentence_embedding_dimension(self):
        return 32

    def forward(self, features):
        ids, offsets = features["input_ids"], features["offsets"]
        features.update({"sentence_embedding": self[0](ids, offsets)})
        return features

    def fit(self, train_objectives=None, epochs=1, **kwargs):
        self.to(self._target_device)


class models:
    class Dense(nn.Module):
        pass


# --- src/setfit/data.py ---
class SetFitDataset(Dataset):
    def __init__(self, x, y, tokenizer, max_length=32):
        self.x, self.y, self.tokenizer, self.max_length = x, y, tokenizer, max_length

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.tokenizer([self.x[idx]])[0][: self.max_length], self.y[idx]

    @staticmethod
    def collate_fn(batch):
        ids = [b[0] for b in batch]
        offsets = torch.tensor([0] + [len(i) for i in ids[:-1]]).cumsum(0)
        features = {"input_ids": torch.cat(ids), "offsets": offsets}
        return features, torch.tensor([b[1] for b in batch])


# --- src/setfit/modeling.py ---
class SetFitHead(models.Dense):
    def __init__(
        self,
        in_features: Optional[int] = None,
        out_features: int = 1,
        temperature: float = 1.0,
        bias: bool = True,
        device: Optional[Union[torch.device, str]] = None,
    ) -> None:
        super(models.Dense, self).__init__()  # init on models.Dense's parent: nn.Module

        self.linear = None
        if in_features is not None:
            self.linear = nn.Linear(in_features, out_features, bias=bias)
        else:
            self.linear = nn.LazyLinear(out_features, bias=bias)

        self.in_features = in_features
        self.out_features = out_features
        self.temperature = temperature
        self.bias = bias
        self.device = device or "cuda" if torch.cuda.is_available() else "cpu"

        self.to(device)  # expect: DL311
        self.apply(self._init_weight)

    def forward(self, features, temperature: Optional[float] = None):
        is_features_dict = False  # whether `features` is dict or not
        if isinstance(features, dict):
            assert "sentence_embedding" in features
            is_features_dict = True

        x = features["sentence_embedding"] if is_features_dict else features
        logits = self.linear(x)
        if self.out_features == 1:  # only has one target
            outputs = torch.sigmoid(logits)
        else:  # multiple targets
            temperature = temperature or self.temperature
            outputs = nn.functional.softmax(logits / temperature, dim=-1)

        if is_features_dict:
            features.update({"prediction": outputs})
            return features

        return outputs

    def get_loss_fn(self):
        if self.out_features == 1:  # if single target
            return torch.nn.BCELoss()
        else:
            return torch.nn.CrossEntropyLoss()

    @staticmethod
    def _init_weight(module):
        if isinstance(module, nn.Linear):
            torch.nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                torch.nn.init.constant_(module.bias, 1e-2)


class SetFitModel:
    def __init__(self, model_body=None, model_head=None, multi_target_strategy=None, l2_weight=1e-2) -> None:
        self.model_body = model_body
        self.model_head = model_head

        self.multi_target_strategy = multi_target_strategy
        self.l2_weight = l2_weight

    def fit(self, x_train: List[str], y_train: List[int], num_epochs: Optional[int] = None,
            batch_size: Optional[int] = None, learning_rate: Optional[float] = None,
            body_learning_rate: Optional[float] = None, l2_weight: Optional[float] = None,
            show_progress_bar: Optional[bool] = None) -> None:
        if isinstance(self.model_head, nn.Module):  # train with pyTorch
            device = self.model_body.device
            self.model_body.train()
            self.model_head.train()

            dataloader = self._prepare_dataloader(x_train, y_train, batch_size)
            criterion = self.model_head.get_loss_fn()
            optimizer = self._prepare_optimizer(learning_rate, body_learning_rate, l2_weight)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
            for epoch_idx in range(num_epochs):
                for batch in dataloader:
                    features, labels = batch
                    optimizer.zero_grad()

                    # to model's device
                    features = {k: v.to(device) for k, v in features.items()}
                    labels = labels.to(device)

                    outputs = self.model_body(features)
                    outputs = self.model_head(outputs)  # expect: DL201
                    predictions = outputs["prediction"]

                    loss = criterion(predictions, labels)
                    loss.backward()
                    optimizer.step()

                scheduler.step()

    def _prepare_dataloader(self, x_train, y_train, batch_size, shuffle=True) -> DataLoader:
        dataset = SetFitDataset(
            x_train,
            y_train,
            tokenizer=self.model_body.tokenizer,
            max_length=self.model_body.get_max_seq_length(),
        )
        dataloader = DataLoader(
            dataset, batch_size=batch_size, collate_fn=SetFitDataset.collate_fn, shuffle=shuffle, pin_memory=True
        )

        return dataloader

    def _prepare_optimizer(self, learning_rate, body_learning_rate, l2_weight) -> torch.optim.Optimizer:
        body_learning_rate = body_learning_rate or learning_rate
        l2_weight = l2_weight or self.l2_weight
        optimizer = torch.optim.AdamW(
            [
                {"params": self.model_body.parameters(), "lr": body_learning_rate, "weight_decay": l2_weight},
                {"params": self.model_head.parameters(), "lr": learning_rate, "weight_decay": l2_weight},
            ],
        )

        return optimizer

    def freeze(self, component: Optional[Literal["body", "head"]] = None) -> None:
        if component is None or component == "body":
            self._freeze_or_not(self.model_body, to_freeze=True)

        if component is None or component == "head":
            self._freeze_or_not(self.model_head, to_freeze=True)

    def unfreeze(self, component: Optional[Literal["body", "head"]] = None) -> None:
        if component is None or component == "body":
            self._freeze_or_not(self.model_body, to_freeze=False)

        if component is None or component == "head":
            self._freeze_or_not(self.model_head, to_freeze=False)

    def _freeze_or_not(self, model: torch.nn.Module, to_freeze: bool) -> None:
        for param in model.parameters():
            param.requires_grad = not to_freeze

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str, cache_dir: Optional[str] = None, **model_kwargs):
        return cls._from_pretrained(pretrained_model_name_or_path, cache_dir=cache_dir, **model_kwargs)

    @classmethod
    def _from_pretrained(cls, model_id: str, cache_dir: Optional[str] = None, multi_target_strategy=None,
                         use_differentiable_head: bool = False, **model_kwargs) -> "SetFitModel":
        model_body = SentenceTransformer(model_id, cache_folder=cache_dir)

        if use_differentiable_head:
            body_embedding_dim = model_body.get_sentence_embedding_dimension()
            device = model_body._target_device
            if "head_params" in model_kwargs.keys():
                model_kwargs["head_params"].update({"in_features": body_embedding_dim})
                model_kwargs["head_params"].update({"device": device})  # follow the model head
                model_head = SetFitHead(**model_kwargs["head_params"])
            else:
                model_head = SetFitHead(in_features=body_embedding_dim, device=device)  # a head for single target

        return cls(model_body=model_body, model_head=model_head, multi_target_strategy=multi_target_strategy)


# --- src/setfit/trainer.py (reduced) ---
class SetFitTrainer:
    def __init__(self, model, train_dataset, batch_size=16, num_epochs=1, learning_rate=2e-5):
        self.model = model
        self.train_dataset = train_dataset
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self.learning_rate = learning_rate
        self._freeze = True

    def freeze(self):
        self._freeze = True  # Currently use self._freeze as a switch
        self.model.freeze("head")

    def unfreeze(self, keep_body_frozen: bool = False):
        self._freeze = False  # Currently use self._freeze as a switch
        self.model.unfreeze("head")
        if keep_body_frozen:
            self.model.freeze("body")
        else:  # ensure to unfreeze the body
            self.model.unfreeze("body")

    def train(self, num_epochs=None, batch_size=None, learning_rate=None, body_learning_rate=None, l2_weight=None):
        x_train, y_train = self.train_dataset["text"], self.train_dataset["label"]
        num_epochs = num_epochs or self.num_epochs
        batch_size = batch_size or self.batch_size
        learning_rate = learning_rate or self.learning_rate
        is_differentiable_head = isinstance(self.model.model_head, torch.nn.Module)  # If False, assume using sklearn

        if not is_differentiable_head or self._freeze:
            # sentence-transformers adaptation (contrastive pairs and loss reduced to the body's fit)
            self.model.model_body.fit(train_objectives=[], epochs=num_epochs)

        if not is_differentiable_head or not self._freeze:
            # Train the final classifier
            self.model.fit(
                x_train,
                y_train,
                num_epochs=num_epochs,
                batch_size=batch_size,
                learning_rate=learning_rate,
                body_learning_rate=body_learning_rate,
                l2_weight=l2_weight,
                show_progress_bar=True,
            )


if __name__ == "__main__":
    num_classes = 3
    ds = {"text": ["good movie", "bad plot", "okay acting", "great cast", "dull", "fine"] * 4,
          "label": [0, 1, 2, 0, 1, 2] * 4}
    model = SetFitModel.from_pretrained(
        "sentence-transformers/paraphrase-mpnet-base-v2",
        use_differentiable_head=True,
        head_params={"out_features": num_classes},
    )
    trainer = SetFitTrainer(model=model, train_dataset=ds, batch_size=4, num_epochs=3, learning_rate=1.25e-05)
    trainer.freeze()
    trainer.unfreeze(keep_body_frozen=True)
    trainer.train(num_epochs=2, batch_size=4, body_learning_rate=1.25e-5, learning_rate=1e-3, l2_weight=0.0)
    print("trained")
