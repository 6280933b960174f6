#!/usr/bin/env bash
# Builds a stand-in for the image's base (docker.io/library/node:22-bookworm-slim) from this machine's own files, for a
# builder that reaches no image registry (the container test, an air-gapped host): Debian bookworm (minbase) by
# debootstrap from the machine's Debian mirror, trimmed as Docker's slim images are; Node.js from the running `node`
# (its binary and its headers, which node-gyp builds better-sqlite3 against), npm from the running `npm`, and the
# `node` user (uid 1000) the official image has. Imported with `podman import`: no registry is asked.
#
# Usage: deploy/local-base.sh [IMAGE]    prints the image's name; an image of that name already there is kept
#   (the name holds Node.js's version and this script's revision, so a change of either makes a new one).
# Then: podman build --build-arg BASE=IMAGE -f deploy/Containerfile .
set -euo pipefail

REVISION=1
node_bin=$(readlink -f "$(command -v node)")
node_dir=$(dirname "$(dirname "$node_bin")")
version=$("$node_bin" -p 'process.versions.node')
image=${1:-localhost/nodegate-base:node${version}-bookworm-r${REVISION}}
if podman image exists "$image"; then echo "$image"; exit 0; fi

case "$version" in 22.*) ;; *) echo "local-base: Node.js 22 is the image's runtime, this is $version (. scripts/use-node22.sh first)" >&2; exit 1 ;; esac
[ -d "$node_dir/include/node" ] || { echo "local-base: no headers at $node_dir/include/node (better-sqlite3 is compiled against them)" >&2; exit 1; }
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -f "$npm_dir/package.json" ] || { echo "local-base: cannot find npm's folder from $(command -v npm)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "local-base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d "${TMPDIR:-/tmp}/nodegate-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
if ! debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -20 "$work/debootstrap.log" >&2
  echo "local-base: debootstrap of bookworm from $mirror failed" >&2
  exit 1
fi
# What Docker's slim images leave out: package lists, downloaded packages, documentation, translations.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* "$root"/usr/share/man/* \
  "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/var/log/*.log "$root"/var/cache/debconf/*-old

# Node.js where the official image has it (/usr/local), npm beside it.
install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules"
cp -a "$node_dir/include/node" "$root/usr/local/include/node"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

tar -C "$root" --numeric-owner -cf - . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$version" \
  --change 'CMD ["node"]' \
  --message "Debian bookworm minbase and Node.js $version (deploy/local-base.sh)" - "$image" >/dev/null
echo "$image"
