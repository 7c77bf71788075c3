"""`python -m podplan`: the same commands as the `podplan` console script."""
from .cli import main

main()
