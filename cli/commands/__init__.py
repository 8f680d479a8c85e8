"""One module per ``drasat`` command; ``cli.main.COMMANDS`` lists them."""
