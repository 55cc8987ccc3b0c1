"""One module per command, each with run(argv) -> exit status."""
