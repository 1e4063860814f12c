"""Training and evaluation code for Truco agents, and the `truco` command-line tool."""
