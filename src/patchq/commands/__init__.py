"""One module per verb: each takes a Context and options and returns a result value."""
