#!/usr/bin/env bash
# How many crates a user's first build of eval-runtime compiles, with its
# default features, with none, and with each feature on top of the defaults:
# a scratch crate depending on this checkout's eval-runtime by path, counted
# with `cargo tree -e normal --prefix none | sort -u | wc -l` (normal
# dependencies only, eval-runtime's own crates included, each crate once).
# The figures in docs/src/getting-started.md ("Cargo features") come from it.
#
# Usage: scripts/first-build-crates.sh   (no build: cargo tree only)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src"
: > "$scratch/src/lib.rs"
# Resolve as the workspace does (its Cargo.lock), so counts do not move with
# whatever crates.io published since.
cp "$root/Cargo.lock" "$scratch/Cargo.lock"

count() { # $1: label, $2: the dependency's options
    cat > "$scratch/Cargo.toml" <<TOML
[package]
name = "first-build"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
eval-runtime = { path = "$root/eval-runtime"$2 }
TOML
    local n
    n=$(cd "$scratch" && cargo tree -q -e normal --prefix none | sed "s/ (\*)$//" | sort -u | wc -l)
    printf '%-28s %4d crates\n' "$1" "$n"
}

features=$(sed -n '/^\[features\]/,/^\[/p' "$root/eval-runtime/Cargo.toml" \
    | grep -E '^[a-z][a-z0-9_-]* *=' | cut -d= -f1 | tr -d ' ' | grep -v '^default$')
count "default features" ""
count "no default features" ", default-features = false"
for f in $features; do
    count "default + $f" ", features = [\"$f\"]"
done
for f in $features; do
    count "only $f" ", default-features = false, features = [\"$f\"]"
done
count "all features" ", features = [$(printf '"%s",' $features | sed 's/,$//')]"
