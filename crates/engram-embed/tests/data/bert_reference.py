"""Writes minilm_reference.json: sentence vectors of all-MiniLM-L6-v2 from an independent numpy BERT.

Why: the Rust tests compare candle's output with vectors computed without candle (float64, plain numpy, the
Hugging Face BertModel equations, sentence-transformers' mean pooling and L2 normalisation), so a wrong mask,
pooling or truncation in engram-embed shows up as a numeric mismatch. torch/sentence-transformers are too heavy
to install on CI machines; this needs only numpy and the `tokenizers` wheel.

usage: python3 -m venv v && v/bin/pip install numpy tokenizers
       v/bin/python bert_reference.py MODEL_DIR > minilm_reference.json
"""
import json, math, struct, sys

import numpy as np
from tokenizers import Tokenizer

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2, special tokens included
LONG = {"sentence": "The quick brown fox jumps over the lazy dog. ", "repeat": 60}
CASES = ["The cat sits on the mat", "", "long_text"]

d = sys.argv[1]
raw = open(f"{d}/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
W = {}
for k, v in json.loads(raw[8:8 + n]).items():
    if k == "__metadata__" or v["dtype"] != "F32":  # skips the int64 position_ids buffer
        continue
    a, b = v["data_offsets"]
    W[k.removeprefix("bert.")] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").reshape(v["shape"]).astype(np.float64)
cfg = json.load(open(f"{d}/config.json"))
H, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
tok = Tokenizer.from_file(f"{d}/tokenizer.json")
tok.no_padding()
tok.enable_truncation(MAX_TOKENS)
erf = np.vectorize(math.erf)


def layer_norm(x, p):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * W[p + ".weight"] + W[p + ".bias"]


def linear(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


def embed(text):
    e = tok.encode(text)
    ids, L, hd = np.array(e.ids), len(e.ids), H // heads
    x = (W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:L]
         + W["embeddings.token_type_embeddings.weight"][np.array(e.type_ids)])
    x = layer_norm(x, "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (linear(x, p + f"attention.self.{m}").reshape(L, heads, hd).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(L, H)
        x = layer_norm(linear(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))  # exact (erf) GELU, as config "gelu" means
        x = layer_norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
    m = x.mean(0)  # one text, no padding: the masked mean is the plain mean
    return m / np.linalg.norm(m), L


out = {"_about": "all-MiniLM-L6-v2 sentence vectors (mean pooling, L2-normalised, truncation at 256 tokens) "
       "computed in float64 by tests/data/bert_reference.py, an independent numpy implementation of BERT, from the "
       "files fetched by scripts/fetch-test-model.sh (model.safetensors sha256 53aa5117...28d9db).",
       "long_text": LONG, "cases": []}
for name in CASES:
    text = LONG["sentence"] * LONG["repeat"] if name == "long_text" else name
    vec, tokens = embed(text)
    out["cases"].append({"text": name, "tokens": tokens, "vector": [round(float(f), 8) for f in vec]})
json.dump(out, sys.stdout)
