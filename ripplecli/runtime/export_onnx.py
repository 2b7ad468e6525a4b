"""One-time export of a local transformer to ONNX: the only place the ONNX path touches torch."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

from ripplecli.config import force_offline
from ripplecli.files import replace_atomically

OPSET = 17
OUTPUT_NAME = "token_embeddings"
BASE_INPUTS = ("input_ids", "attention_mask")


def export_onnx(source: Path, target: Path) -> None:
    """Write `source`'s token embeddings graph to `target` atomically, with dynamic batch and length."""
    force_offline()
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(source), local_files_only=True, attn_implementation="eager")
    model.eval()
    input_names = list(BASE_INPUTS)
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        input_names.append("token_type_ids")
    example = _padded_example(input_names)
    axes = {name: {0: "batch", 1: "sequence"} for name in [*input_names, OUTPUT_NAME]}
    target.parent.mkdir(parents=True, exist_ok=True)

    def export(temp: Path) -> None:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation notices the user can do nothing about
            torch.onnx.export(
                _wrap(model, input_names),
                example,
                str(temp),
                input_names=input_names,
                output_names=[OUTPUT_NAME],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )

    replace_atomically(target, export)


def _padded_example(input_names: list[str]) -> tuple:
    """A batch with padding, so any mask-dependent branch the tracer freezes is the one padded batches need."""
    import torch

    input_ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones_like(input_ids)
    mask[1, 5:] = 0
    values = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(input_ids)}
    return tuple(values[name] for name in input_names)


def _wrap(model, input_names: list[str]):
    """A module taking the inputs positionally (as the exporter feeds them) and returning token embeddings."""
    import torch

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(input_names, inputs, strict=True))).last_hidden_state

    return TokenEmbeddings()
