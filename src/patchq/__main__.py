"""`python -m patchq`."""

import sys

from .cli import main

sys.exit(main())
