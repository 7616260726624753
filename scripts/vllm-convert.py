"""GGUF → Hugging Face folder for vLLM (scripts/vllm.sh convert): the weights dequantized by
transformers' own GGUF reader and saved as bf16 safetensors, with the tokenizer and chat
template the GGUF carries. Only transformers and gguf run here.
  python vllm-convert.py MODEL.gguf OUT_DIR
"""

import os
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

gguf, out = sys.argv[1], sys.argv[2]
folder, name = os.path.split(os.path.abspath(gguf))
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(
    folder,
    gguf_file=name,
    quantization_config=GgufConfig(dequantize=True),
    dtype=torch.bfloat16,
)
model.save_pretrained(out)
tokenizer.save_pretrained(out)
print(f"{model.config.architectures} {sum(p.numel() for p in model.parameters())} parameters → {out}", file=sys.stderr)
