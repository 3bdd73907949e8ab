# source: https://github.com/kitzeslab/opensoundscape/pull/201
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: the library's train() moves the model to cuda when available, but in both the training and the
#      validation loop it calls X.to(device) / y.to(device) as bare statements, so the batches stay on
#      the CPU.
import time
from os import path

import torch
import yaml

from opensoundscape.metrics import Metrics


def train(save_dir, model, train_dataset, valid_dataset, optimizer, loss_fn,
          epochs=25, batch_size=1, num_workers=0, log_every=5):
    if torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")

    labels_yaml = yaml.dump(train_dataset.label_dict)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers
    )
    valid_loader = torch.utils.data.DataLoader(
        valid_dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers
    )

    model.to(device)

    for epoch in range(epochs):
        train_metrics = Metrics(model.fc.out_features)
        model.train()
        for t in train_loader:
            X, y = t["X"], t["y"]
            X = X.to(device)
            y = y.to(device)
            targets = y.squeeze(1)

            outputs = model(X)
            loss = loss_fn(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            train_metrics.update_loss(loss.clone().detach().item())
            predictions = outputs.clone().detach().argmax(dim=1)
            train_metrics.update_metrics(targets.cpu(), predictions.cpu())

        valid_metrics = Metrics(model.fc.out_features)
        model.eval()
        with torch.no_grad():
            for t in valid_loader:
                X, y = t["X"], t["y"]
                X = X.to(device)
                y = y.to(device)
                targets = y.squeeze(1)

                outputs = model(X)
                predictions = outputs.clone().detach().argmax(dim=1)
                valid_metrics.update_metrics(targets.cpu(), predictions.cpu())

        if (epoch % log_every == 0) or (epoch == epochs - 1):
            torch.save(
                {
                    "model_state_dict": model.state_dict(),
                    "optimizer_state_dict": optimizer.state_dict(),
                    "labels_yaml": labels_yaml,
                    "time": time.strftime("%X %x %Z"),
                },
                path.join(save_dir, f"epoch-{epoch}.tar"),
            )
