#!/usr/bin/env bash
# Installs oxsort from this checkout: the oxsort, gensort and valsort binaries, a `sort` link
# to oxsort (GNU sort's command line), man pages and bash/zsh/fish completions.
#
#   ./install.sh                    # into ~/.local (PREFIX=/usr/local ./install.sh as root)
#   ./install.sh --sort-in-path     # also put the `sort` link in PREFIX/bin (shadows GNU sort)
#
# Without --sort-in-path the link goes to PREFIX/libexec/oxsort/sort: put that directory first
# in PATH to have `sort` run oxsort.
set -euo pipefail
cd "$(dirname "$0")"
self="$PWD/$(basename "$0")"

# The comment block at the top of this file, without its `# ` marks.
usage() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$self"
}

prefix="${PREFIX:-$HOME/.local}"
sort_in_path=no
for arg in "$@"; do
  case "$arg" in
    --sort-in-path) sort_in_path=yes ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

cargo build --release --locked -p oxsort-cli
bin="$prefix/bin"
man1="$prefix/share/man/man1"
install -d "$bin" "$man1" "$prefix/libexec/oxsort" \
  "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
install -m 755 target/release/oxsort target/release/gensort target/release/valsort "$bin/"
ln -sf "$bin/oxsort" "$prefix/libexec/oxsort/sort"
if [ "$sort_in_path" = yes ]; then
  ln -sf oxsort "$bin/sort"
fi
"$bin/oxsort" man "$man1"
"$bin/oxsort" completions bash > "$prefix/share/bash-completion/completions/oxsort"
"$bin/oxsort" completions zsh > "$prefix/share/zsh/site-functions/_oxsort"
"$bin/oxsort" completions fish > "$prefix/share/fish/vendor_completions.d/oxsort.fish"

echo "installed oxsort, gensort, valsort in $bin; man pages in $man1"
if [ "$sort_in_path" = yes ]; then
  echo "sort -> oxsort in $bin"
else
  echo "sort -> oxsort in $prefix/libexec/oxsort (add it to the front of PATH to use it as sort)"
fi
