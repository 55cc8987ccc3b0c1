import sys

from billing.cli import main

sys.exit(main(sys.argv[1:]))
