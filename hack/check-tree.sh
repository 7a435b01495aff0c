#!/usr/bin/env bash
# Refuses a tree that tracks build output: compiled executables anywhere,
# and files over 1 MiB outside testdata/ and the generated CRDs. Built
# binaries, images and charts belong under bin/ or dist/ (ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1024 * 1024))
bad=0
# Executables: among the files git sees as binary, those that start like
# an ELF, Mach-O or PE file.
while IFS=$'\t' read -r info f; do
  [[ "$info" == i/-text* && -f "$f" ]] || continue
  case "$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')" in
    7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | 4d5a*)
      echo "tracked executable: $f (a compiled binary: build it under bin/ and run 'git rm --cached $f')"
      bad=1 ;;
  esac
done < <(git ls-files --eol)
# Size, in one stat for all.
while read -r size f; do
  case "$f" in
    */testdata/* | testdata/* | config/crd/bases/* | charts/sluice/templates/generated/*) continue ;;
  esac
  if [ "$size" -gt "$limit" ]; then
    echo "tracked file over 1 MiB: $f ($size bytes; only testdata/ and the generated CRDs may be that big)"
    bad=1
  fi
done < <(git ls-files -z | xargs -0 stat -c '%s %n' 2>/dev/null)
exit "$bad"
