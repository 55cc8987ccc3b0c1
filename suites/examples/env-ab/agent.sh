#!/bin/sh
# A stub agent for the example: it records the model it was told to use, and a variable
# of the agent table that no arm overrides, on stdout (kept by the harness in
# RUN_DIR/agents/<trial_id>/session-<n>.stdout), and changes nothing.
printf 'MODEL=%s\n' "${MODEL:-unset}"
printf 'TEMPERATURE=%s\n' "${TEMPERATURE:-unset}"
