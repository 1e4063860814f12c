"""``python -m training.cli``: the ``truco`` command where no script is installed."""

import sys

from training.cli import main

if __name__ == "__main__":
    sys.exit(main())
