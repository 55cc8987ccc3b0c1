"""Finds the command module named by the first argument and runs it."""

import importlib
import sys

USAGE = "usage: python3 -m billing COMMAND FILE [options]"


def main(argv):
    if not argv or not argv[0].isidentifier():
        print(USAGE, file=sys.stderr)
        return 2
    name = "billing.commands." + argv[0]
    try:
        command = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        print(f"billing: unknown command '{argv[0]}'", file=sys.stderr)
        return 2
    return command.run(argv[1:])
