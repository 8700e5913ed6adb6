"""The leaderboard as a script: the same code and flags as ``schedenv leaderboard``.

python benchmarks/leaderboard.py --suite quick --out runs/quick
"""

from schedenv.leaderboard.cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python benchmarks/leaderboard.py"))
