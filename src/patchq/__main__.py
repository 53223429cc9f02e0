"""`python -m patchq`."""

from patchq.cli import run

run()
