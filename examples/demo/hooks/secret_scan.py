#!/usr/bin/env python3
"""secret_scan.py: a Claude Code PreToolUse command hook for Write and Edit.

Reads the hook payload (Claude Code JSON) from stdin and looks at the text the tool
is about to write: Write `content`, Edit `new_string`, MultiEdit `edits[].new_string`,
NotebookEdit `new_source`. The text being removed (`old_string`) is not checked.
Removing a secret is fine.

When the new text contains an AWS access key id, a private key block, an AWS secret
access key assignment or a hard-coded password, the hook denies the call. It prints

  {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                          "permissionDecision": "deny",
                          "permissionDecisionReason": "..."}}

on stdout and exits 0. Otherwise it prints nothing and exits 0.

Unexpected input (empty stdin, invalid JSON, another event, another tool) is not an
error: the hook exits 0 without output. A failing scanner should not block unrelated
work. Whether a crash blocks the call is left to the runner's onFailure policy.

Use from Claude Code settings or from hookledger:
  python3 examples/demo/hooks/secret_scan.py < payload.json
"""

import json
import re
import sys


def mask(secret):
    """First and last four characters of a key id: AKIA...MPLE."""
    return secret[:4] + "..." + secret[-4:] if len(secret) > 12 else "..."


def name_only(match):
    """The name part of `name=value` / `name: "value"`, with the value hidden."""
    return re.split(r"\s*[:=]", match, maxsplit=1)[0] + "=..."


# (label, pattern, how to show the match in the reason without leaking it)
PATTERNS = [
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), mask),
    ("a private key block", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"), lambda m: m),
    (
        "an AWS secret access key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\"]?[A-Za-z0-9/+=]{40}"),
        name_only,
    ),
    # password=value as in DSNs, query strings and ini/.env files. References such as
    # password=$PW, password=%s and password={pw} are not literals.
    ("a hard-coded password", re.compile(r"(?i)\bpassword=(?![$%{<])[^\s&'\"`;,)]{3,}"), name_only),
    # password: 'literal' / password = "literal" in code.
    (
        "a hard-coded password",
        re.compile(r"(?i)\b(?:password|passwd)\s*[:=]\s*(['\"])(?![$%{<])[^'\"\s]{6,}\1"),
        name_only,
    ),
]


def new_texts(tool_input):
    """The strings the tool would write, from any of the file-writing tools."""
    if not isinstance(tool_input, dict):
        return []
    texts = []
    for key in ("content", "new_string", "new_source"):
        value = tool_input.get(key)
        if isinstance(value, str):
            texts.append(value)
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
                texts.append(edit["new_string"])
    return texts


def find_secret(text):
    for label, pattern, show in PATTERNS:
        match = pattern.search(text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            return label, show(match.group(0)), line
    return None


def main():
    raw = sys.stdin.buffer.read().decode("utf-8", "replace")
    if not raw.strip():
        return 0
    try:
        payload = json.loads(raw)
    except ValueError:
        return 0
    if not isinstance(payload, dict):
        return 0
    event = payload.get("hook_event_name") or payload.get("hookEventName") or "PreToolUse"
    tool_input = payload.get("tool_input", payload.get("toolInput"))
    file_path = tool_input.get("file_path", "the file") if isinstance(tool_input, dict) else "the file"

    for text in new_texts(tool_input):
        found = find_secret(text)
        if found is None:
            continue
        label, excerpt, line = found
        reason = (
            f"secret_scan: refusing to write {file_path}: line {line} contains {label} ({excerpt}). "
            "Read secrets from environment variables or the secret store instead of committing them."
        )
        if event == "PreToolUse":
            output = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        else:
            # Other events have no permissionDecision; the top-level block is their equivalent.
            output = {"decision": "block", "reason": reason}
        sys.stdout.write(json.dumps(output) + "\n")
        return 0
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except Exception as error:  # never crash with a traceback (exit 1) on odd input
        sys.stderr.write(f"secret_scan: ignored unexpected input ({error.__class__.__name__})\n")
        code = 0
    sys.exit(code)
