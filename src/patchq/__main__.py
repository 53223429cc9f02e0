"""`python -m patchq`."""

import sys

from patchq.cli.main import main

sys.exit(main())
