#!/usr/bin/env bash
# Put a notebook back as it was committed, and keep the student's version as a dated copy in
# notebooks/backups/ (never over an older copy). Run by `make restore NB=notebooks/05_stacked_layers.ipynb`.
# The copies live in a folder of their own, so nothing that lists notebooks/NN_*.ipynb (nbval,
# slides, tests) ever picks them up; .gitignore keeps them out of git.
set -euo pipefail

nb="${1#./}"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "make restore: this folder is not a git checkout, so there is no committed version to restore." >&2
  exit 2
fi
lessons=$(git ls-files 'notebooks/[0-9][0-9]_*.ipynb' | sed 's/^/  /')
if [ -z "$nb" ]; then
  printf 'make restore: name the notebook, e.g. make restore NB=notebooks/05_stacked_layers.ipynb\n%s\n' "$lessons" >&2
  exit 2
fi
if [[ "$nb" != */* ]] && git cat-file -e "HEAD:notebooks/$nb" 2>/dev/null; then
  nb="notebooks/$nb"  # NB=05_stacked_layers.ipynb is fine too
fi
if [[ "$nb" != *.ipynb ]] || ! git cat-file -e "HEAD:$nb" 2>/dev/null; then
  printf 'make restore: %s is not a committed notebook. These are:\n%s\n' "$nb" "$lessons" >&2
  exit 2
fi
if [ ! -e "$nb" ]; then
  git checkout HEAD -- "$nb"
  echo "Restored $nb (it was missing)."
  exit 0
fi
if git diff --quiet HEAD -- "$nb"; then
  echo "$nb is the same as its committed version: nothing to restore, no backup made."
  exit 0
fi
name=$(basename "$nb" .ipynb)
stamp=$(date +%Y-%m-%d-%H%M)
backup="notebooks/backups/$name-$stamp.ipynb"
n=2
while [ -e "$backup" ]; do  # a restore earlier in the same minute: keep that copy too
  backup="notebooks/backups/$name-$stamp-$n.ipynb"
  n=$((n + 1))
done
mkdir -p notebooks/backups
cp -p "$nb" "$backup"
git checkout HEAD -- "$nb"
echo "Restored $nb to its committed version. Your version is in $backup."
echo "If the notebook is open in JupyterLab, use File > Reload Notebook from Disk (saving would overwrite it)."
