"""`python -m ripplecli.cli`: the `ripple` command without its console script (a checkout on PYTHONPATH)."""

from ripplecli.cli import main

main()
