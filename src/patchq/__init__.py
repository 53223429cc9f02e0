"""patchq: keep downstream patches as an ordered series and carry them across upstream moves."""

__version__ = "0.1.0"
