#!/usr/bin/env bash
# lint_gate.sh: a Claude Code PreToolUse command hook for Bash.
#
# Keeps the agent from going around the project's checks. It blocks (exit 2, reason on
# stderr) when a Bash command
#   - runs `git commit` or `git push` with --no-verify, which skips the husky lint/test hooks;
#   - runs `npm|pnpm|yarn publish` without --dry-run, because packages are published from CI.
# Anything else: exit 0, no output.
#
# It reads the whole hook payload (Claude Code JSON) from stdin and takes tool_input.command
# with jq, python3, or a sed fallback, whichever is there. Unexpected input (empty, not JSON,
# another tool) gives exit 0 and does not block.
#
#   bash examples/demo/hooks/lint_gate.sh < payload.json; echo "exit $?"

set -u

payload="$(cat 2>/dev/null || true)"
[ -n "$payload" ] || exit 0

extract_command() {
  local out
  if command -v jq >/dev/null 2>&1; then
    if out="$(printf '%s' "$payload" | jq -r '(.tool_input // .toolInput // {}) | if type == "object" then (.command // "") else "" end' 2>/dev/null)"; then
      printf '%s' "$out"
      return 0
    fi
  fi
  if command -v python3 >/dev/null 2>&1; then
    if out="$(printf '%s' "$payload" | python3 -c '
import json, sys
try:
    data = json.loads(sys.stdin.read())
    ti = data.get("tool_input", data.get("toolInput")) if isinstance(data, dict) else None
    cmd = ti.get("command") if isinstance(ti, dict) else None
    sys.stdout.write(cmd if isinstance(cmd, str) else "")
except Exception:
    sys.exit(1)
' 2>/dev/null)"; then
      printf '%s' "$out"
      return 0
    fi
  fi
  # Last resort: first "command": "..." string in the payload, JSON escapes left as they are.
  printf '%s' "$payload" | tr '\n' ' ' | sed -n 's/.*"command"[[:space:]]*:[[:space:]]*"\(\([^"\\]\|\\.\)*\)".*/\1/p' | head -n 1
}

tool_name="$(printf '%s' "$payload" | tr '\n' ' ' | sed -n 's/.*"tool_name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1)"
if [ -n "$tool_name" ] && [ "$tool_name" != "Bash" ]; then
  exit 0
fi

cmd="$(extract_command)"
[ -n "$cmd" ] || exit 0

# One simple command per line: split on ;, &&, ||, | and newlines.
segments="$(printf '%s\n' "$cmd" | awk '{ gsub(/&&|\|\||;|\|/, "\n"); print }')"

while IFS= read -r segment; do
  if [[ "$segment" =~ (^|[[:space:]])git[[:space:]]+(.*[[:space:]])?(commit|push)([[:space:]]|$) ]] &&
     [[ "$segment" =~ (^|[[:space:]])--no-verify([[:space:]]|=|$) ]]; then
    echo "lint-gate: '--no-verify' skips the pre-commit and pre-push checks (eslint, prettier, tests). Fix what they report and commit without --no-verify." >&2
    exit 2
  fi
  if [[ "$segment" =~ (^|[[:space:]])(npm|pnpm|yarn)[[:space:]]+publish([[:space:]]|$) ]] &&
     ! [[ "$segment" =~ --dry-run ]]; then
    echo "lint-gate: packages are published by CI after review; run 'npm publish --dry-run' to inspect the package instead." >&2
    exit 2
  fi
done <<< "$segments"

exit 0
