"""`python -m anchor.worker`: the worker program."""

import sys

from .cli import main

sys.exit(main())
