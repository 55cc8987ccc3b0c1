#!/bin/sh
# A stub agent for the example: it records what reached it (the first line of the
# prompt on stdin, and the prompt file's path) on stdout, which the harness keeps in
# RUN_DIR/agents/<trial_id>/session-<n>.stdout, and changes nothing.
IFS= read -r first_line || true
printf 'prompt: %s\n' "$first_line"
printf 'prompt file: %s\n' "${LOOPBENCH_PROMPT_FILE:-none}"
