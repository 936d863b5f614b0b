#!/usr/bin/env bash
# The MCP Inspector's CLI (the official TypeScript SDK; nobody here wrote it) drives
# `forgestate mcp` on a local store: tools/list, a successful call, a call with an integer
# argument (which the Inspector sends as a string), and an error call. The SDK checks every
# answer against the tool's schemas; any refusal, warning or wrong answer fails CI.
# Usage: bash .ci/inspector.sh PATH/TO/forgestate
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
dir="$here/target/inspector"
version=0.15.0
if [ ! -x "$dir/node_modules/.bin/mcp-inspector" ]; then
    if ! command -v npm >/dev/null; then
        apt-get update -qq && apt-get install -y -qq nodejs npm
    fi
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --silent \
        "@modelcontextprotocol/inspector@$version" >/dev/null
fi
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
inspect() {
    "$dir/node_modules/.bin/mcp-inspector" --cli "$bin" mcp --store "$store/st" "$@"
}
check() { # check NAME FILE PYTHON-EXPRESSION-ON-doc
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
name, path, expr = sys.argv[1:]
text = open(path).read()
try:
    doc = json.loads(text)
except ValueError:
    sys.exit(f"inspector {name}: not a JSON answer (the SDK refused it?):\n{text}")
if not eval(expr, {"doc": doc, "json": json}):
    sys.exit(f"inspector {name}: {expr} does not hold for:\n{json.dumps(doc, indent=2)}")
print(f"inspector {name}: ok")
PY
}
out="$store/out"
err="$store/err"
run() { # run NAME ARGS... ; fails on a non-zero exit or any line on stderr (warnings included)
    local name=$1
    shift
    if ! inspect "$@" >"$out" 2>"$err"; then
        echo "inspector $name failed:" >&2
        cat "$out" "$err" >&2
        exit 1
    fi
    if [ -s "$err" ]; then
        echo "inspector $name printed on stderr:" >&2
        cat "$err" >&2
        exit 1
    fi
}
run tools/list --method tools/list
check tools/list "$out" '"checkpoint" in [t["name"] for t in doc["tools"]] and "resume" in [t["name"] for t in doc["tools"]]'
for phase in p1 p2; do
    run checkpoint --method tools/call --tool-name checkpoint \
        --tool-arg agent=w --tool-arg session=s --tool-arg "phase=$phase"
    check checkpoint "$out" 'doc["structuredContent"]["posted"] is True and not doc.get("isError")'
done
run "list limit=1" --method tools/call --tool-name list --tool-arg limit=1
check "list limit=1" "$out" '[r["phase"] for r in doc["structuredContent"]["records"]] == ["p2"]'
run resume --method tools/call --tool-name resume --tool-arg agent=w --tool-arg session=s
check resume "$out" 'doc["structuredContent"]["phase"] == "p2"'
run "an error" --method tools/call --tool-name resume --tool-arg agent=w
check "an error" "$out" 'doc.get("isError") is True and "session" in doc["content"][0]["text"] and "structuredContent" not in doc'
