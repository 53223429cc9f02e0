"""patchq's bench: its whole-series commands against their peers on real history, apply
parity with GNU patch, placement precision on real refreshes, and the studies behind them.

Each command is a subcommand of `patchq-bench` (see `patchq-bench --help` and
bench/README.md); run outputs and materialised cases go to folders the person names.
"""
