"""The user's own commands: the one layer besides `git` that starts processes."""
