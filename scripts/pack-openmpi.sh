#!/usr/bin/env bash
# Packs Debian's Open MPI runtime (mpirun, its plugins and help files,
# PMIx, and the libraries they load) into one relocatable tarball for the
# GPU machines, which lack Open MPI. On the GPU machine:
#   tar -xJf openmpi.tar.xz -C DIR && source DIR/env.sh
# puts mpirun on PATH and points Open MPI (OPAL_PREFIX) and PMIx
# (PMIX_PREFIX) at DIR instead of /usr.
# usage: scripts/pack-openmpi.sh OUT.tar.xz
set -euo pipefail
out=$(realpath -m "${1:?usage: pack-openmpi.sh OUT.tar.xz}")
arch=x86_64-linux-gnu
[[ -x /usr/bin/orterun ]] || { echo "pack-openmpi: no /usr/bin/orterun (apt-get install openmpi-bin)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
o=$tmp/ompi
# The layout below OPAL_PREFIX mirrors Debian's below /usr: Open MPI
# finds its plugins and help files relative to the prefix it is given.
mkdir -p "$o/bin" "$o/lib/$arch" "$o/share" "$o/deps"
cp /usr/bin/orterun "$o/bin/"
ln -s orterun "$o/bin/mpirun"
cp -r /usr/lib/$arch/openmpi "$o/lib/$arch/"
cp -r /usr/share/openmpi "$o/share/"
pmix=/usr/lib/$arch/pmix2
[[ -d $pmix ]] && cp -r "$pmix" "$o/pmix2"
# Development links into /usr (libmpi.so) point nowhere here.
find "$o" -xtype l -delete
# Every library the launcher, the plugins and PMIx load, but the C
# library's own (the GPU machine has those).
find "$o" \( -name '*.so*' -o -name orterun \) -type f | while read -r f; do ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}' || true; done |
  sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' | while read -r l; do cp -L "$l" "$o/deps/"; done
cat >"$o/env.sh" <<'ENV'
# Sourced on the GPU machine: this folder's Open MPI instead of none.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=$here PMIX_INSTALL_PREFIX=$here/pmix2 PMIX_PREFIX=$here/pmix2
export PATH=$here/bin:$PATH
export LD_LIBRARY_PATH=$here/deps:$here/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Shared memory and loopback only: one host, no InfiniBand to probe.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_osc=^ucx OMPI_MCA_mtl=^ofi,psm,psm2
ENV
tar -cJf "$out" -C "$tmp" ompi
du -h "$out"
